import { Form } from "react-router";
import { AuthCard, FooterLink } from "../../components/auth-card";
import { FormAlert } from "../../components/form-alert";
import { FormField } from "../../components/form-field";
import { SubmitButton } from "../../components/submit-button";
import { getAuth } from "../../lib/auth.server";
import { authFailure, formFailure } from "../../lib/form-results.server";
import { readFormValues, validateForm } from "../../lib/forms.server";
import { noStoreHeaders } from "../../lib/http.server";
import { withNext } from "../../lib/next-path";
import { useFocusFirstError } from "../../lib/use-focus-first-error";
import type { Route } from "./+types/sign-in.code";
import { afterSignIn } from "./parts/after-sign-in.server";
import { EmailField } from "./parts/auth-fields";
import { emailFromUrl, resendEmail, sendSignInEmail } from "./parts/emails.server";
import { requireSignedOut } from "./parts/redirects.server";
import { ResendForm } from "./parts/resend-form";
import { codeSchema } from "./parts/schemas.server";

/** The page names the visitor's address or session: never kept by a shared cache. */
export const headers: Route.HeadersFunction = noStoreHeaders;

export const meta: Route.MetaFunction = () => [{ title: "Enter your code · Edge Notes" }];

export function loader({ request, context }: Route.LoaderArgs) {
  const next = requireSignedOut(request, context);
  return { email: emailFromUrl(request), next };
}

export async function action({ request, context }: Route.ActionArgs) {
  const { supabase } = getAuth(context);
  const form = await readFormValues(request);
  if (form.intent === "resend") {
    return resendEmail(
      supabase,
      request,
      form,
      sendSignInEmail,
      (email) => `We sent a new code to ${email}.`,
    );
  }
  const parsed = validateForm(form, codeSchema);
  if (!parsed.ok) return formFailure(parsed);
  const { email, code, next } = parsed.data;
  const { error } = await supabase.auth.verifyOtp({ email, token: code, type: "email" });
  if (error) return authFailure(error, parsed.values);
  return afterSignIn(supabase, { next });
}

export default function SignInCode({ loaderData, actionData }: Route.ComponentProps) {
  const failure = actionData && !actionData.ok ? actionData : undefined;
  const formRef = useFocusFirstError(failure);
  const errors = failure?.errors;
  const email = failure?.values.email ?? loaderData.email;
  const { next } = loaderData;
  return (
    <AuthCard
      title="Enter your code"
      intro={
        email ? (
          <>
            If <strong className="font-medium text-ink-800 dark:text-ink-100">{email}</strong> has
            an account, we emailed it a 6-digit code. It works once and expires in an hour.
          </>
        ) : (
          "Enter your email and the 6-digit code we sent you."
        )
      }
      footer={<FooterLink to={withNext("/sign-in", next)}>Back to sign in</FooterLink>}
    >
      <Form method="post" noValidate ref={formRef} className="space-y-4">
        <input type="hidden" name="next" value={next ?? ""} />
        {actionData?.ok ? <FormAlert tone="success">{actionData.notice}</FormAlert> : null}
        {errors?.form ? <FormAlert code={errors.code}>{errors.form}</FormAlert> : null}
        <EmailField autoComplete="username" defaultValue={email} error={errors?.fields.email} />
        <FormField
          label="Code"
          name="code"
          type="text"
          inputMode="numeric"
          autoComplete="one-time-code"
          required
          autoFocus={Boolean(email) && !errors}
          spellCheck={false}
          placeholder="123456"
          className="[&_input]:font-mono [&_input]:text-lg [&_input]:tracking-[0.3em]"
          error={errors?.fields.code}
          hint="Paste it or type it; spaces are fine."
        />
        <SubmitButton intent="verify">Verify</SubmitButton>
      </Form>
      <div className="mt-5 border-t border-ink-200 pt-4 dark:border-ink-800">
        <ResendForm email={email} next={next} retryAfter={errors?.retryAfter} answer={actionData}>
          <span className="text-ink-600 dark:text-ink-400">No email after a minute or two?</span>
        </ResendForm>
      </div>
    </AuthCard>
  );
}

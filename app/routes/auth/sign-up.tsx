import { useRef } from "react";
import { Form, Link } from "react-router";
import { AuthCard, linkClass } from "../../components/auth-card";
import { FormAlert } from "../../components/form-alert";
import { FormField } from "../../components/form-field";
import { SubmitButton } from "../../components/submit-button";
import { useFocusFirstError } from "../../components/use-focus-first-error";
import { getAuth } from "../../lib/auth.server";
import { authFailure, formFailure, parseForm } from "../../lib/forms.server";
import { redirectNoStore } from "../../lib/http.server";
import { withNext } from "../../lib/next-path";
import type { Route } from "./+types/sign-up";
import { PASSWORD_RULES } from "./password-rules";
import { callbackUrl, nextFromUrl, redirectToNext } from "./redirects.server";
import { signUpSchema } from "./schemas.server";

export const meta: Route.MetaFunction = () => [{ title: "Create an account · Edge Notes" }];

export function loader({ request, context }: Route.LoaderArgs) {
  const next = nextFromUrl(request);
  if (getAuth(context).claims) throw redirectToNext(next);
  return { next };
}

export async function action({ request, context }: Route.ActionArgs) {
  const parsed = await parseForm(request, signUpSchema);
  if (!parsed.ok) return formFailure(parsed);
  const { email, password, displayName, next } = parsed.data;
  const { data, error } = await getAuth(context).supabase.auth.signUp({
    email,
    password,
    options: {
      data: displayName ? { display_name: displayName } : undefined,
      emailRedirectTo: callbackUrl(request, next),
    },
  });
  if (error) return authFailure(error, parsed.values);
  // Confirmations off: signed in at once. On: check the inbox (the same page whether or not the
  // address already had an account, as the server's answer is the same).
  if (data.session) return redirectToNext(next);
  return redirectNoStore(withNext("/sign-up/check-email", next, { email }));
}

export default function SignUp({ loaderData, actionData }: Route.ComponentProps) {
  const formRef = useRef<HTMLFormElement>(null);
  useFocusFirstError(formRef, actionData);
  const errors = actionData?.errors;
  const values = actionData?.values ?? {};
  const { next } = loaderData;
  return (
    <AuthCard
      title="Create an account"
      intro="Your notes, on every device. It takes a minute."
      footer={
        <>
          Already have an account?{" "}
          <Link to={withNext("/sign-in", next)} className={linkClass}>
            Sign in
          </Link>
        </>
      }
    >
      <Form method="post" noValidate ref={formRef} className="space-y-4">
        <input type="hidden" name="next" value={next ?? ""} />
        {errors?.form ? <FormAlert code={errors.code}>{errors.form}</FormAlert> : null}
        <FormField
          label="Display name"
          name="displayName"
          type="text"
          autoComplete="nickname"
          maxLength={100}
          defaultValue={values.displayName}
          error={errors?.fields.displayName}
          hint="Optional. Shown on your notes instead of your email."
        />
        <FormField
          label="Email"
          name="email"
          type="email"
          autoComplete="email"
          inputMode="email"
          required
          defaultValue={values.email}
          error={errors?.fields.email}
        />
        <FormField
          label="Password"
          name="password"
          type="password"
          autoComplete="new-password"
          required
          error={errors?.fields.password}
          hint={PASSWORD_RULES}
        />
        <SubmitButton>Sign up</SubmitButton>
      </Form>
    </AuthCard>
  );
}

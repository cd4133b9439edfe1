import { Form } from "react-router";
import { AuthCard, FooterLink } from "../../components/auth-card";
import { FormAlert } from "../../components/form-alert";
import { SubmitButton } from "../../components/submit-button";
import { getAuth } from "../../lib/auth.server";
import { authFailure, formFailure } from "../../lib/form-results.server";
import { parseForm } from "../../lib/forms.server";
import { dataNoStore } from "../../lib/http.server";
import { appPath } from "../../lib/safe-redirect";
import { useFocusFirstError } from "../../lib/use-focus-first-error";
import type { Route } from "./+types/forgot-password";
import { EmailField } from "./parts/auth-fields";
import { callbackUrl } from "./parts/redirects.server";
import { emailOnlySchema } from "./parts/schemas.server";

export const meta: Route.MetaFunction = () => [{ title: "Reset your password · Edge Notes" }];

/** Sends a recovery link (PKCE: it signs in only in this browser, then asks for a new password). */
export async function action({ request, context }: Route.ActionArgs) {
  const parsed = await parseForm(request, emailOnlySchema);
  if (!parsed.ok) return formFailure(parsed);
  const { email } = parsed.data;
  const { error } = await getAuth(context).supabase.auth.resetPasswordForEmail(email, {
    redirectTo: callbackUrl(request, appPath("/reset-password")),
  });
  if (error) return authFailure(error, parsed.values);
  return dataNoStore({ ok: true as const, email });
}

export default function ForgotPassword({ actionData }: Route.ComponentProps) {
  const failure = actionData && !actionData.ok ? actionData : undefined;
  const formRef = useFocusFirstError(failure);
  const errors = failure?.errors;
  return (
    <AuthCard
      title="Reset your password"
      intro="Enter the email you signed up with and we'll send you a link to choose a new password."
      footer={<FooterLink to="/sign-in">Back to sign in</FooterLink>}
    >
      {actionData?.ok ? (
        <FormAlert tone="success">
          If <strong>{actionData.email}</strong> has an account, a reset link is on its way. Open it
          in this browser; it works once and expires in an hour.
        </FormAlert>
      ) : null}
      <Form
        method="post"
        noValidate
        ref={formRef}
        className={`space-y-4 ${actionData?.ok ? "mt-4" : ""}`}
      >
        {errors?.form ? <FormAlert code={errors.code}>{errors.form}</FormAlert> : null}
        <EmailField
          autoComplete="email"
          defaultValue={failure?.values.email ?? (actionData?.ok ? actionData.email : undefined)}
          error={errors?.fields.email}
        />
        <SubmitButton>Send reset link</SubmitButton>
      </Form>
    </AuthCard>
  );
}

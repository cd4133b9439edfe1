import { useRef } from "react";
import { Form, Link } from "react-router";
import { AuthCard, linkClass } from "../../components/auth-card";
import { FormAlert } from "../../components/form-alert";
import { FormField } from "../../components/form-field";
import { SubmitButton } from "../../components/submit-button";
import { useFocusFirstError } from "../../components/use-focus-first-error";
import { getAuth } from "../../lib/auth.server";
import { authFailure, formFailure, parseForm } from "../../lib/forms.server";
import { dataNoStore } from "../../lib/http.server";
import { appPath } from "../../lib/safe-redirect";
import type { Route } from "./+types/forgot-password";
import { callbackUrl } from "./redirects.server";
import { emailOnlySchema } from "./schemas.server";

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
  const formRef = useRef<HTMLFormElement>(null);
  const failure = actionData && !actionData.ok ? actionData : undefined;
  useFocusFirstError(formRef, failure);
  const errors = failure?.errors;
  return (
    <AuthCard
      title="Reset your password"
      intro="Enter the email you signed up with and we'll send you a link to choose a new password."
      footer={
        <Link to="/sign-in" className={linkClass}>
          Back to sign in
        </Link>
      }
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
        <FormField
          label="Email"
          name="email"
          type="email"
          autoComplete="email"
          inputMode="email"
          required
          defaultValue={failure?.values.email ?? (actionData?.ok ? actionData.email : undefined)}
          error={errors?.fields.email}
        />
        <SubmitButton>Send reset link</SubmitButton>
      </Form>
    </AuthCard>
  );
}

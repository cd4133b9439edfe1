import { Form, Link } from "react-router";
import { linkClass } from "../../components/auth-card";
import { FormAlert } from "../../components/form-alert";
import { FormField } from "../../components/form-field";
import { SubmitButton } from "../../components/submit-button";
import { authFailure, formFailure, formNotice, formRefusal } from "../../lib/form-results.server";
import { readFormValues, validateForm } from "../../lib/forms.server";
import { requireUser } from "../../lib/guards.server";
import { noStoreHeaders } from "../../lib/http.server";
import { useFocusFirstError } from "../../lib/use-focus-first-error";
import { HiddenUsername, NewPasswordField } from "../auth/parts/auth-fields";
import type { Route } from "./+types/password";
import { AccountHeading, AccountPanel } from "./parts/account-panel";
import { checkCurrentPassword } from "./parts/password-check.server";
import { passwordChangeSchema } from "./parts/schemas.server";

export const headers: Route.HeadersFunction = noStoreHeaders;

export const meta: Route.MetaFunction = () => [{ title: "Password · Account · Edge Notes" }];

export function loader({ request, context }: Route.LoaderArgs) {
  const { claims } = requireUser(request, context);
  return { email: (claims.email as string | undefined) ?? null };
}

const WRONG_CURRENT = "Your current password is not right.";

/**
 * Change the password: the current one is checked first (a password grant on a throwaway
 * client), then the auth server sets the new one. When the project requires reauthentication
 * (`secure_password_change` and a session older than a day), the server says so; the page then
 * emails a code (`reauthenticate()`) and asks for it with the passwords (`updateUser({ nonce })`).
 */
export async function action({ request, context }: Route.ActionArgs) {
  const { supabase, claims } = requireUser(request, context);
  const form = await readFormValues(request);
  const email = (claims.email as string | undefined) ?? "";
  if (form.intent === "send-code") {
    const { error } = await supabase.auth.reauthenticate();
    if (error) return authFailure(error, {});
    return formNotice(`We emailed a code to ${email}. Enter it below with your passwords.`, {
      needsNonce: true,
    });
  }
  const parsed = validateForm(form, passwordChangeSchema);
  if (!parsed.ok) return formFailure({ ...parsed, values: { nonceShown: form.nonceShown ?? "" } });
  const { currentPassword, password, nonce } = parsed.data;
  const values = { nonceShown: form.nonceShown ?? "" };
  if (!email) {
    return formRefusal(
      "Your account has no email address, so it has no password to change.",
      400,
      "no_email",
    );
  }
  const wrong = await checkCurrentPassword(context, request, email, currentPassword);
  if (wrong) {
    if (wrong.code === "invalid_credentials") {
      return formRefusal(WRONG_CURRENT, 400, "invalid_credentials", values, "currentPassword");
    }
    return authFailure(wrong, values);
  }
  const { error } = await supabase.auth.updateUser({
    password,
    nonce,
    // Checked by the server too when the project requires it (GOTRUE_SECURITY_UPDATE_PASSWORD_REQUIRE_CURRENT_PASSWORD).
    current_password: currentPassword,
  });
  if (error?.code === "reauthentication_needed") {
    const sent = await supabase.auth.reauthenticate();
    if (sent.error) return authFailure(sent.error, values);
    return formRefusal(
      `For your security we emailed a code to ${email}. Enter it with your passwords to finish.`,
      400,
      "reauthentication_needed",
      { nonceShown: "1" },
      "nonce",
    );
  }
  if (error) {
    return authFailure(error, values, {
      wording: {
        same_password: {
          place: "password",
          message: "That is your current password. Choose a new one.",
        },
      },
    });
  }
  return formNotice("Your password was changed.");
}

export default function AccountPassword({ loaderData, actionData }: Route.ComponentProps) {
  const failure = actionData && !actionData.ok ? actionData : undefined;
  const formRef = useFocusFirstError(failure);
  const errors = failure?.errors;
  const askNonce =
    failure?.values.nonceShown === "1" ||
    (actionData?.ok && "needsNonce" in actionData && actionData.needsNonce === true);
  return (
    <div className="space-y-6">
      <AccountHeading title="Password" intro="Use a password you don't use anywhere else." />
      {actionData?.ok ? <FormAlert tone="success">{actionData.notice}</FormAlert> : null}
      <AccountPanel
        title="Change your password"
        description={
          <>
            You'll need your current password. Forgotten it, or signed up with GitHub or Google and
            never set one?{" "}
            <Link to="/forgot-password" className={linkClass}>
              Email yourself a reset link
            </Link>
            .
          </>
        }
      >
        <Form method="post" noValidate ref={formRef} className="space-y-4 sm:max-w-md">
          {errors?.form ? <FormAlert code={errors.code}>{errors.form}</FormAlert> : null}
          <HiddenUsername email={loaderData.email} />
          <FormField
            label="Current password"
            name="currentPassword"
            type="password"
            autoComplete="current-password"
            required
            error={errors?.fields.currentPassword}
          />
          <NewPasswordField label="New password" error={errors?.fields.password} />
          {askNonce ? (
            <>
              <input type="hidden" name="nonceShown" value="1" />
              <FormField
                label="Code from the email"
                name="nonce"
                inputMode="numeric"
                autoComplete="one-time-code"
                required
                error={errors?.fields.nonce}
                hint={errors?.code === "reauthentication_needed" ? undefined : "Check your inbox."}
              />
            </>
          ) : null}
          <div className="flex flex-wrap items-center gap-4">
            <SubmitButton intent="change" className="sm:w-auto">
              Change password
            </SubmitButton>
            {askNonce ? (
              <SubmitButton intent="send-code" variant="link" formNoValidate>
                Send a new code
              </SubmitButton>
            ) : null}
          </div>
        </Form>
      </AccountPanel>
    </div>
  );
}

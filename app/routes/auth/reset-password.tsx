import { Form, Link } from "react-router";
import { AuthCard, FooterLink } from "../../components/auth-card";
import { FormAlert } from "../../components/form-alert";
import { SubmitButton } from "../../components/submit-button";
import { getAuth } from "../../lib/auth.server";
import { authFailure, formFailure } from "../../lib/form-results.server";
import { parseForm } from "../../lib/forms.server";
import { needsSecondFactor } from "../../lib/guards.server";
import { noStoreHeaders, redirectNoStore } from "../../lib/http.server";
import { MFA_PATH, withNext } from "../../lib/next-path";
import { appPath } from "../../lib/safe-redirect";
import { useFocusFirstError } from "../../lib/use-focus-first-error";
import type { Route } from "./+types/reset-password";
import { HiddenUsername, NewPasswordField } from "./parts/auth-fields";
import { isRecoverySession } from "./parts/recovery-session";
import { SIGNED_IN_HOME } from "./parts/redirects.server";
import { newPasswordSchema } from "./parts/schemas.server";

/** The page names the visitor's address or session: never kept by a shared cache. */
export const headers: Route.HeadersFunction = noStoreHeaders;

export const meta: Route.MetaFunction = () => [{ title: "Choose a new password · Edge Notes" }];

/**
 * Reached signed in, through the recovery link (/auth/callback or /auth/confirm). Without a
 * session the link was not used here (or it expired): say so and offer a new one. A session that
 * did not come from a recovery link (or an emailed code) must give its current password, on
 * /account/password; one that owes its second factor proves it first.
 */
export function loader({ context }: Route.LoaderArgs) {
  const auth = getAuth(context);
  gateRecovery(auth);
  const { claims } = auth;
  return { email: (claims?.email as string | undefined) ?? null, signedIn: !!claims };
}

export async function action({ request, context }: Route.ActionArgs) {
  const auth = getAuth(context);
  const { supabase, claims } = auth;
  if (!claims) return redirectNoStore("/reset-password");
  gateRecovery(auth);
  const parsed = await parseForm(request, newPasswordSchema);
  if (!parsed.ok) return formFailure(parsed);
  const { error } = await supabase.auth.updateUser({ password: parsed.data.password });
  if (error) return authFailure(error, parsed.values);
  return redirectNoStore(SIGNED_IN_HOME);
}

function gateRecovery(auth: ReturnType<typeof getAuth>) {
  if (!auth.claims) return;
  if (!isRecoverySession(auth.claims)) throw redirectNoStore("/account/password");
  if (needsSecondFactor(auth))
    throw redirectNoStore(withNext(MFA_PATH, appPath("/reset-password")));
}

export default function ResetPassword({ loaderData, actionData }: Route.ComponentProps) {
  const formRef = useFocusFirstError(actionData);
  if (!loaderData.signedIn) {
    return (
      <AuthCard
        title="Open your reset link first"
        footer={<FooterLink to="/sign-in">Back to sign in</FooterLink>}
      >
        <div className="space-y-4 text-sm text-ink-600 dark:text-ink-400">
          <p>
            To choose a new password, open the reset link from your email in this browser. If the
            link has expired or was already used, ask for a new one.
          </p>
          <Link
            to="/forgot-password"
            className="inline-flex w-full items-center justify-center rounded-lg bg-brand-600 px-4 py-2.5 text-sm font-medium text-white hover:bg-brand-700"
          >
            Send a new reset link
          </Link>
        </div>
      </AuthCard>
    );
  }
  const errors = actionData?.errors;
  return (
    <AuthCard
      title="Choose a new password"
      intro={
        loaderData.email ? (
          <>
            For{" "}
            <strong className="font-medium text-ink-800 dark:text-ink-100">
              {loaderData.email}
            </strong>
            .
          </>
        ) : undefined
      }
    >
      <Form method="post" noValidate ref={formRef} className="space-y-4">
        {errors?.form ? <FormAlert code={errors.code}>{errors.form}</FormAlert> : null}
        <HiddenUsername email={loaderData.email} />
        <NewPasswordField error={errors?.fields.password} />
        <SubmitButton>Set new password</SubmitButton>
      </Form>
    </AuthCard>
  );
}

import { Form } from "react-router";
import { FormAlert } from "../../components/form-alert";
import { SubmitButton } from "../../components/submit-button";
import { authFailure, formFailure, formNotice, formRefusal } from "../../lib/form-results.server";
import { readFormValues, validateForm } from "../../lib/forms.server";
import { requireFreshUser, requireUser } from "../../lib/guards.server";
import { noStoreHeaders } from "../../lib/http.server";
import { appPath } from "../../lib/safe-redirect";
import { useFocusFirstError } from "../../lib/use-focus-first-error";
import { EmailField } from "../auth/parts/auth-fields";
import { callbackUrl } from "../auth/parts/redirects.server";
import type { Route } from "./+types/email";
import { AccountHeading, AccountPanel } from "./parts/account-panel";
import { emailChangeSchema } from "./parts/schemas.server";

export const headers: Route.HeadersFunction = noStoreHeaders;

export const meta: Route.MetaFunction = () => [{ title: "Email · Account · Edge Notes" }];

const EMAIL_TAKEN = {
  email_exists: { place: "email", message: "Another account already uses this address." },
  user_already_exists: { place: "email", message: "Another account already uses this address." },
};

/** Where both confirmation links land: /auth/callback, then back here. */
function confirmUrl(request: Request): string {
  return callbackUrl(request, appPath("/account/email"), { flow: "email_change" });
}

export async function loader({ request, context }: Route.LoaderArgs) {
  const { user } = await requireFreshUser(request, context);
  return {
    email: user.email ?? null,
    pending: user.new_email ?? null,
    sentAt: user.email_change_sent_at ?? null,
  };
}

/**
 * Change the sign-in address: the auth server emails a confirmation link to the new address (and,
 * with double confirmation, one to the current address too); the address changes only when the
 * link(s) are opened. Until then the page shows the pending address, with a Resend.
 */
export async function action({ request, context }: Route.ActionArgs) {
  const { supabase, claims } = requireUser(request, context);
  const form = await readFormValues(request);
  const current = ((claims.email as string | undefined) ?? "").toLowerCase();
  if (form.intent === "resend") {
    const { data: fresh } = await supabase.auth.getUser();
    const pending = fresh.user?.new_email;
    if (!pending) {
      return formRefusal(
        "There is no email change waiting to be confirmed.",
        409,
        "no_pending_change",
      );
    }
    // The auth server finds the change by the account's current address and mails it again.
    const { error } = await supabase.auth.resend({
      type: "email_change",
      email: current,
      options: { emailRedirectTo: confirmUrl(request) },
    });
    if (error) return authFailure(error, {});
    return formNotice(`We sent the confirmation link to ${pending} again.`);
  }
  const parsed = validateForm(form, emailChangeSchema);
  if (!parsed.ok) return formFailure(parsed);
  const { email } = parsed.data;
  if (email === current) {
    return formRefusal(
      "This is already your email address.",
      400,
      "same_email",
      parsed.values,
      "email",
    );
  }
  const { error } = await supabase.auth.updateUser(
    { email },
    { emailRedirectTo: confirmUrl(request) },
  );
  if (error) return authFailure(error, parsed.values, { wording: EMAIL_TAKEN });
  return formNotice(
    `We sent a confirmation link to ${email}. If a message also arrives at ${current}, open the link in it too: your address changes once the change is confirmed.`,
  );
}

export default function AccountEmail({ loaderData, actionData }: Route.ComponentProps) {
  const failure = actionData && !actionData.ok ? actionData : undefined;
  const formRef = useFocusFirstError(failure);
  const errors = failure?.errors;
  const { email, pending } = loaderData;
  return (
    <div className="space-y-6">
      <AccountHeading
        title="Email"
        intro="The address you sign in with and where we write to you."
      />
      {actionData?.ok ? <FormAlert tone="success">{actionData.notice}</FormAlert> : null}
      <AccountPanel title="Current address">
        <p className="text-sm">
          <strong className="font-medium break-all" data-testid="current-email">
            {email ?? "(none)"}
          </strong>
        </p>
        {pending ? (
          <div
            className="mt-4 rounded-lg border border-amber-300 bg-amber-50 p-3 text-sm text-amber-900 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100"
            data-testid="pending-email"
          >
            <p>
              Waiting for confirmation: <strong className="break-all">{pending}</strong>. Open the
              link we emailed to finish the change; until then you keep signing in with{" "}
              {email ?? "your current address"}.
            </p>
            <Form method="post" className="mt-2">
              <SubmitButton intent="resend" variant="link">
                Resend the confirmation link
              </SubmitButton>
            </Form>
          </div>
        ) : null}
      </AccountPanel>
      <AccountPanel
        title="Change your email"
        description="We'll send a confirmation link to the new address. Nothing changes until it is confirmed."
      >
        <Form method="post" noValidate ref={formRef} className="space-y-4 sm:max-w-md">
          {errors?.form ? <FormAlert code={errors.code}>{errors.form}</FormAlert> : null}
          <EmailField
            label="New email"
            autoComplete="email"
            defaultValue={failure?.values.email}
            error={errors?.fields.email}
          />
          <SubmitButton intent="change" className="sm:w-auto">
            Send confirmation link
          </SubmitButton>
        </Form>
      </AccountPanel>
    </div>
  );
}

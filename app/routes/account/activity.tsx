import { FormAlert } from "../../components/form-alert";
import { requireFreshUser, requireUser } from "../../lib/guards.server";
import { dataNoStore, noStoreHeaders } from "../../lib/http.server";
import { providerLabel } from "../auth/parts/oauth-providers";
import type { Route } from "./+types/activity";
import { AccountHeading, AccountPanel } from "./parts/account-panel";
import { authMethodLabel } from "./parts/auth-methods";
import { deviceName } from "./parts/device-name";
import { listSecurityEvents, type SecurityEventKind } from "./parts/security-events.server";

export const headers: Route.HeadersFunction = noStoreHeaders;

export const meta: Route.MetaFunction = () => [{ title: "Activity · Account · Edge Notes" }];

/** The user's latest security events (RLS: only their own rows; nobody can edit them). */
export async function loader({ request, context }: Route.LoaderArgs) {
  const { supabase } = requireUser(request, context);
  // The check with the auth server beside the list: one round trip's wait, not two.
  const [, { data: events, error }] = await Promise.all([
    requireFreshUser(request, context),
    listSecurityEvents(supabase),
  ]);
  if (error) {
    return dataNoStore({ events: [], failed: error.code ?? "unexpected" }, { status: 503 });
  }
  return { events: events ?? [], failed: null };
}

const LABELS: Record<SecurityEventKind, string> = {
  signed_in: "Signed in",
  mfa_verified: "Second factor confirmed",
  signed_out: "Signed out",
  signed_out_others: "Signed out other devices",
  signed_out_everywhere: "Signed out everywhere",
  password_changed: "Password changed",
  email_change_requested: "Email change requested",
  email_changed: "Email address changed",
  mfa_factor_added: "Authenticator app added",
  mfa_factor_removed: "Authenticator app removed",
  identity_linked: "Account linked",
  identity_unlinked: "Account unlinked",
  session_ended: "Signed out a device",
  passkey_added: "Passkey added",
  passkey_renamed: "Passkey renamed",
  passkey_removed: "Passkey removed",
  recovery_codes_generated: "Recovery codes generated",
  recovery_code_used: "Signed in with a recovery code",
};

const dateFormat = new Intl.DateTimeFormat("en", {
  dateStyle: "medium",
  timeStyle: "short",
  timeZone: "UTC",
});

/** The detail worth a glance: how, which factor or provider, which address, how many sessions.
 * (`via` and `device` are in entries the app wrote before the database wrote them all.) */
function describe(detail: Record<string, unknown>): string {
  const parts = ["method", "via", "provider", "name", "device", "new_email", "email"]
    .map((key) => {
      const value = detail[key];
      if (typeof value !== "string" || value === "") return null;
      if (key === "method") return authMethodLabel(value);
      return key === "provider" ? providerLabel(value) : value;
    })
    .filter((value): value is string => value !== null);
  if (typeof detail.sessions === "number") parts.push(`${detail.sessions} sessions`);
  return parts.join(" · ");
}

/** The browser and address of the session, as Auth recorded them. */
function whereFrom(detail: Record<string, unknown>): string {
  const agent = typeof detail.user_agent === "string" ? deviceName(detail.user_agent) : null;
  const ip = typeof detail.ip === "string" && detail.ip !== "" ? detail.ip : null;
  return [agent, ip].filter((part): part is string => part !== null).join(" · ");
}

export default function AccountActivity({ loaderData }: Route.ComponentProps) {
  const { events, failed } = loaderData;
  return (
    <div className="space-y-6">
      <AccountHeading
        title="Activity"
        intro="Recent sign-ins and changes to your account. Something you don't recognise? Change your password and sign out other devices."
      />
      {failed ? (
        <FormAlert code={failed}>
          Your activity can't be loaded right now. Try again soon.
        </FormAlert>
      ) : null}
      <AccountPanel
        title="Recent activity"
        description="The latest 50 events, newest first. Times are UTC."
      >
        {events.length === 0 ? (
          <p className="text-sm text-ink-600 dark:text-ink-400" data-testid="no-activity">
            Nothing yet.
          </p>
        ) : (
          <ol className="divide-y divide-ink-200 dark:divide-ink-800" data-testid="activity">
            {events.map((event) => (
              <li
                key={event.id}
                data-kind={event.kind}
                className="flex flex-col gap-0.5 py-3 text-sm sm:flex-row sm:items-baseline sm:gap-4"
              >
                <time
                  dateTime={event.created_at}
                  className="shrink-0 text-xs text-ink-600 tabular-nums sm:w-40 dark:text-ink-400"
                >
                  {dateFormat.format(new Date(event.created_at))}
                </time>
                <span className="min-w-0">
                  <span className="font-medium">{LABELS[event.kind] ?? event.kind}</span>
                  {describe(event.detail) ? (
                    <span className="text-ink-600 dark:text-ink-400">
                      {" "}
                      · <span className="[overflow-wrap:anywhere]">{describe(event.detail)}</span>
                    </span>
                  ) : null}
                  {whereFrom(event.detail) ? (
                    <span className="block text-xs text-muted">{whereFrom(event.detail)}</span>
                  ) : null}
                </span>
              </li>
            ))}
          </ol>
        )}
      </AccountPanel>
    </div>
  );
}

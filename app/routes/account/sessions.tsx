import { Form } from "react-router";
import { FormAlert } from "../../components/form-alert";
import { SubmitButton } from "../../components/submit-button";
import { authFailure, formFailure, formNotice, formRefusal } from "../../lib/form-results.server";
import { readFormValues, validateForm } from "../../lib/forms.server";
import { requireFreshUser, requireUser } from "../../lib/guards.server";
import { dataNoStore, noStoreHeaders, redirectNoStore } from "../../lib/http.server";
import type { Route } from "./+types/sessions";
import { AccountHeading, AccountPanel } from "./parts/account-panel";
import { authMethodLabel } from "./parts/auth-methods";
import { endSessionSchema } from "./parts/schemas.server";
import { endMySession, listMySessions } from "./parts/sessions.server";

export const headers: Route.HeadersFunction = noStoreHeaders;

export const meta: Route.MetaFunction = () => [{ title: "Sessions · Account · Edge Notes" }];

interface AmrEntry {
  method: string;
  timestamp: number;
}

/**
 * Every session of the user (list_my_sessions()), this one first. requireFreshUser asks the auth
 * server, so a session ended elsewhere is refused here at once.
 */
export async function loader({ request, context }: Route.LoaderArgs) {
  const { supabase, claims } = requireUser(request, context);
  const amr = (Array.isArray(claims.amr) ? claims.amr : []) as AmrEntry[];
  const methods = [...new Set(amr.map((entry) => entry.method))];
  // The check with the auth server beside the list: one round trip's wait, not two.
  const [, { sessions, error }] = await Promise.all([
    requireFreshUser(request, context),
    listMySessions(supabase),
  ]);
  if (error) {
    return dataNoStore({ sessions, methods, failed: error.code ?? "unexpected" }, { status: 503 });
  }
  return { sessions, methods, failed: null };
}

/**
 * "Sign out this device" (`intent=end`, `sessionId`) ends one session: its refresh token stops
 * working, account pages refuse it at once, ordinary pages at its next refresh (within the JWT
 * lifetime). On this browser's own row it is an ordinary sign-out. "Sign out other devices"
 * (`scope: others`) and "Sign out everywhere" (`global`) end many at once.
 */
export async function action({ request, context }: Route.ActionArgs) {
  const { supabase, claims } = requireUser(request, context);
  const form = await readFormValues(request);
  switch (form.intent) {
    case "end": {
      const parsed = validateForm(form, endSessionSchema);
      if (!parsed.ok) return formFailure(parsed, 400);
      const { sessionId } = parsed.data;
      if (sessionId === claims.session_id) {
        const { error } = await supabase.auth.signOut({ scope: "local" });
        if (error) return authFailure(error, {});
        return redirectNoStore("/");
      }
      const ended = await endMySession(supabase, sessionId);
      if (!ended.ok) {
        if (ended.reason === "not_found") {
          return formRefusal(
            "That session has already ended, or it isn't one of yours.",
            404,
            ended.code,
          );
        }
        if (ended.reason === "insufficient_aal") {
          return formRefusal("This needs your second factor.", 403, "insufficient_aal");
        }
        return formRefusal("Sessions can't be changed right now. Try again soon.", 503, ended.code);
      }
      return formNotice(`${ended.device} is signed out. It will be asked to sign in again.`);
    }
    case "others":
    case "global": {
      const { error } = await supabase.auth.signOut({ scope: form.intent });
      if (error) return authFailure(error, {});
      if (form.intent === "global") return redirectNoStore("/sign-in?ended=1");
      return formNotice(
        "Your other devices and browsers are signed out. They will be asked to sign in again.",
      );
    }
    default:
      return formRefusal("Choose one of the buttons on this page.", 400, "unknown_intent");
  }
}

const dateFormat = new Intl.DateTimeFormat("en", {
  dateStyle: "medium",
  timeStyle: "short",
  timeZone: "UTC",
});

function when(iso: string): string {
  return `${dateFormat.format(new Date(iso))} UTC`;
}

export default function AccountSessions({ loaderData, actionData }: Route.ComponentProps) {
  const failure = actionData && !actionData.ok ? actionData : undefined;
  const { sessions, methods, failed } = loaderData;
  return (
    <div className="space-y-6">
      <AccountHeading
        title="Sessions"
        intro="Every browser and device signed in to your account. Don't recognise one? Sign it out."
      />
      {actionData?.ok ? <FormAlert tone="success">{actionData.notice}</FormAlert> : null}
      {failure?.errors.form ? (
        <FormAlert code={failure.errors.code}>{failure.errors.form}</FormAlert>
      ) : null}
      {failure?.errors.fields.sessionId ? (
        <FormAlert code="session_not_found">{failure.errors.fields.sessionId}</FormAlert>
      ) : null}
      {failed ? (
        <FormAlert code={failed}>
          Your sessions can't be loaded right now. Try again soon.
        </FormAlert>
      ) : null}
      <AccountPanel
        title="Signed-in devices"
        description={`${sessions.length} active ${sessions.length === 1 ? "session" : "sessions"}.`}
      >
        <ul className="divide-y divide-ink-200 dark:divide-ink-800" data-testid="sessions">
          {sessions.map((session) => (
            <li
              key={session.id}
              data-session-id={session.id}
              data-current={session.current || undefined}
              className="flex flex-wrap items-start justify-between gap-3 py-4 first:pt-0 last:pb-0"
            >
              <div className="min-w-0">
                <p className="flex flex-wrap items-center gap-2 font-medium">
                  <span id={`device-${session.id}`}>{session.device}</span>
                  {session.current ? (
                    <span className="rounded-full bg-brand-50 px-2 py-0.5 text-xs font-medium text-brand-700 dark:bg-ink-800 dark:text-brand-300">
                      This device
                    </span>
                  ) : null}
                </p>
                <dl className="mt-2 grid grid-cols-[7rem_1fr] gap-x-3 gap-y-1 text-sm">
                  <dt className="text-muted">IP address</dt>
                  <dd className="font-mono text-xs leading-5">{session.ip ?? "—"}</dd>
                  <dt className="text-muted">Signed in</dt>
                  <dd>{when(session.signedInAt)}</dd>
                  <dt className="text-muted">Last active</dt>
                  <dd>{when(session.lastActiveAt)}</dd>
                  <dt className="text-muted">Assurance</dt>
                  <dd>{session.aal === "aal2" ? "Two factors (aal2)" : "One factor (aal1)"}</dd>
                  {session.current && methods.length ? (
                    <>
                      <dt className="text-muted">How</dt>
                      <dd>{methods.map(authMethodLabel).join(", ")}</dd>
                    </>
                  ) : null}
                </dl>
              </div>
              <Form method="post">
                <input type="hidden" name="sessionId" value={session.id} />
                <SubmitButton
                  intent="end"
                  variant="secondary"
                  className="!w-auto !px-3 !py-1.5"
                  aria-describedby={`device-${session.id}`}
                >
                  Sign out this device
                </SubmitButton>
              </Form>
            </li>
          ))}
        </ul>
      </AccountPanel>
      <AccountPanel
        title="Everywhere else"
        description="Lost a phone, or signed in on a shared computer? Sign out all the others at once. Those devices will have to sign in again."
      >
        <div className="flex flex-col gap-3 sm:flex-row">
          <Form method="post">
            <SubmitButton intent="others" className="sm:w-auto">
              Sign out other devices
            </SubmitButton>
          </Form>
          <Form method="post">
            <SubmitButton intent="global" variant="secondary" className="sm:w-auto">
              Sign out everywhere
            </SubmitButton>
          </Form>
        </div>
        <p className="mt-3 text-xs text-ink-600 dark:text-ink-400">
          "Sign out everywhere" includes this browser.
        </p>
      </AccountPanel>
    </div>
  );
}

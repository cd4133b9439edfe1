import { Form } from "react-router";
import { AccountHeading, AccountPanel } from "../../components/account-panel";
import { FormAlert } from "../../components/form-alert";
import { SubmitButton } from "../../components/submit-button";
import { authFailure, formNotice, formRefusal } from "../../lib/form-results.server";
import { readFormValues } from "../../lib/forms.server";
import { requireFreshUser, requireUser } from "../../lib/guards.server";
import { noStoreHeaders, redirectNoStore } from "../../lib/http.server";
import { recordSecurityEvent } from "../../lib/security-events.server";
import type { Route } from "./+types/sessions";
import { authMethodLabel } from "./auth-methods";

export const headers: Route.HeadersFunction = noStoreHeaders;

export const meta: Route.MetaFunction = () => [{ title: "Sessions · Account · Edge Notes" }];

interface AmrEntry {
  method: string;
  timestamp: number;
}

/** This session, as the auth server knows it (the check also refuses a session ended elsewhere). */
export async function loader({ request, context }: Route.LoaderArgs) {
  const { claims, user } = await requireFreshUser(request, context);
  const amr = (Array.isArray(claims.amr) ? claims.amr : []) as AmrEntry[];
  const first = amr.reduce<number | null>(
    (earliest, entry) =>
      typeof entry.timestamp === "number" && (earliest === null || entry.timestamp < earliest)
        ? entry.timestamp
        : earliest,
    null,
  );
  return {
    sessionId: (claims.session_id as string | undefined) ?? null,
    aal: (claims.aal as string | undefined) ?? null,
    methods: [...new Set(amr.map((entry) => entry.method))],
    signedInAt: first ? new Date(first * 1000).toISOString() : null,
    lastSignInAt: user.last_sign_in_at ?? null,
  };
}

/**
 * "Sign out other devices" ends every other session of this user (`scope: others`): their refresh
 * tokens stop working and account pages (which ask the auth server) refuse them at once; ordinary
 * pages verify the access token locally, so there they end at its next refresh (within the JWT
 * lifetime, an hour by default). "Sign out everywhere" (`global`) ends this one too.
 */
export async function action({ request, context }: Route.ActionArgs) {
  const { supabase } = requireUser(request, context);
  const { intent } = await readFormValues(request);
  if (intent !== "others" && intent !== "global") {
    return formRefusal("Choose one of the buttons on this page.", 400, "unknown_intent");
  }
  const kind = intent === "others" ? "signed_out_others" : "signed_out_everywhere";
  // Written first: a global sign-out ends this session too.
  await recordSecurityEvent(supabase, request, kind);
  const { error } = await supabase.auth.signOut({ scope: intent });
  if (error) return authFailure(error, {});
  if (intent === "global") return redirectNoStore("/sign-in?ended=1");
  return formNotice(
    "Your other devices and browsers are signed out. They will be asked to sign in again.",
  );
}

const dateFormat = new Intl.DateTimeFormat("en", {
  dateStyle: "medium",
  timeStyle: "short",
  timeZone: "UTC",
});

export default function AccountSessions({ loaderData, actionData }: Route.ComponentProps) {
  const failure = actionData && !actionData.ok ? actionData : undefined;
  const { aal, methods, signedInAt } = loaderData;
  return (
    <div className="space-y-6">
      <AccountHeading title="Sessions" intro="Where you are signed in." />
      {actionData?.ok ? <FormAlert tone="success">{actionData.notice}</FormAlert> : null}
      {failure?.errors.form ? (
        <FormAlert code={failure.errors.code}>{failure.errors.form}</FormAlert>
      ) : null}
      <AccountPanel title="This browser">
        <dl className="grid gap-3 text-sm sm:grid-cols-[10rem_1fr]" data-testid="this-session">
          <dt className="text-ink-600 dark:text-ink-400">Signed in</dt>
          <dd>{signedInAt ? `${dateFormat.format(new Date(signedInAt))} UTC` : "—"}</dd>
          <dt className="text-ink-600 dark:text-ink-400">How</dt>
          <dd>{methods.map(authMethodLabel).join(", ") || "—"}</dd>
          <dt className="text-ink-600 dark:text-ink-400">Assurance</dt>
          <dd>{aal === "aal2" ? "Two factors (aal2)" : "One factor (aal1)"}</dd>
        </dl>
      </AccountPanel>
      <AccountPanel
        title="Other devices"
        description="Lost a phone, or signed in on a shared computer? Sign out everywhere else. Those devices will have to sign in again."
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

import type { UserIdentity } from "@supabase/supabase-js";
import { Form } from "react-router";
import { FormAlert } from "../../components/form-alert";
import { SubmitButton } from "../../components/submit-button";
import { authFailure, formFailure, formNotice, formRefusal } from "../../lib/form-results.server";
import { readFormValues, validateForm } from "../../lib/forms.server";
import { requireFreshUser, requireUser } from "../../lib/guards.server";
import { noStoreHeaders, redirectNoStore } from "../../lib/http.server";
import { appPath } from "../../lib/safe-redirect";
import {
  isOAuthProvider,
  OAUTH_PROVIDERS,
  type OAuthProvider,
  providerLabel,
} from "../auth/parts/oauth-providers";
import { callbackUrl } from "../auth/parts/redirects.server";
import type { Route } from "./+types/identities";
import { AccountHeading, AccountPanel } from "./parts/account-panel";
import { unlinkSchema } from "./parts/schemas.server";

export const headers: Route.HeadersFunction = noStoreHeaders;

export const meta: Route.MetaFunction = () => [{ title: "Linked accounts · Account · Edge Notes" }];

function describeIdentity(identity: UserIdentity) {
  const data = identity.identity_data ?? {};
  const label =
    (typeof data.email === "string" && data.email) ||
    (typeof data.user_name === "string" && data.user_name) ||
    (typeof data.name === "string" && data.name) ||
    "";
  return {
    id: identity.identity_id,
    provider: identity.provider,
    providerName: providerLabel(identity.provider),
    label,
    createdAt: identity.created_at ?? null,
  };
}

export async function loader({ request, context }: Route.LoaderArgs) {
  const { user } = await requireFreshUser(request, context);
  const identities = (user.identities ?? []).map(describeIdentity);
  const linked = new Set(identities.map((i) => i.provider));
  const available = (Object.keys(OAUTH_PROVIDERS) as OAuthProvider[])
    .filter((p) => !linked.has(p))
    .map((p) => ({ provider: p, name: OAUTH_PROVIDERS[p] }));
  return { identities, available };
}

/**
 * Link another sign-in method (`linkIdentity`: PKCE through the provider, back through
 * /auth/callback, which records it) or unlink one (`unlinkIdentity`). The last one can't go: it
 * is the only way back in.
 */
export async function action({ request, context }: Route.ActionArgs) {
  const { supabase } = requireUser(request, context);
  const form = await readFormValues(request);
  if (form.intent === "link") {
    const provider = form.provider;
    if (!isOAuthProvider(provider)) {
      return formRefusal("Choose one of the providers on this page.", 400, "unknown_provider");
    }
    const back = callbackUrl(request, appPath("/account/identities"), { flow: "link", provider });
    const { data, error } = await supabase.auth.linkIdentity({
      provider,
      options: { redirectTo: back, skipBrowserRedirect: true },
    });
    if (error) return authFailure(error, {});
    if (!data?.url) {
      return formRefusal(
        `Linking ${OAUTH_PROVIDERS[provider]} is not available right now.`,
        503,
        "unexpected",
      );
    }
    return redirectNoStore(data.url);
  }
  if (form.intent === "unlink") {
    const parsed = validateForm(form, unlinkSchema);
    if (!parsed.ok) return formFailure(parsed);
    const { data, error } = await supabase.auth.getUserIdentities();
    if (error) return authFailure(error, {});
    const identities = data.identities;
    const identity = identities.find((i) => i.identity_id === parsed.data.identityId);
    if (!identity) {
      return formRefusal(
        "That linked account doesn't exist (it may have been unlinked already).",
        404,
        "identity_not_found",
      );
    }
    if (identities.length < 2) {
      return formRefusal(
        "This is your only way to sign in, so it can't be unlinked. Link another account first.",
        422,
        "single_identity_not_deletable",
      );
    }
    const unlinked = await supabase.auth.unlinkIdentity(identity);
    if (unlinked.error) return authFailure(unlinked.error, {});
    // The session's stored user still lists the identity until its next refresh: refresh now.
    await supabase.auth.refreshSession();
    return formNotice(`${providerLabel(identity.provider)} was unlinked.`);
  }
  return formRefusal("Choose one of the buttons on this page.", 400, "unknown_intent");
}

const dateFormat = new Intl.DateTimeFormat("en", { dateStyle: "medium", timeZone: "UTC" });

export default function AccountIdentities({ loaderData, actionData }: Route.ComponentProps) {
  const failure = actionData && !actionData.ok ? actionData : undefined;
  const { identities, available } = loaderData;
  const onlyOne = identities.length < 2;
  return (
    <div className="space-y-6">
      <AccountHeading title="Linked accounts" intro="The ways you can sign in to this account." />
      {actionData?.ok ? <FormAlert tone="success">{actionData.notice}</FormAlert> : null}
      {failure?.errors.form ? (
        <FormAlert code={failure.errors.code}>{failure.errors.form}</FormAlert>
      ) : null}
      <AccountPanel title="Sign-in methods">
        <ul className="divide-y divide-ink-200 dark:divide-ink-800" data-testid="identities">
          {identities.map((identity) => (
            <li
              key={identity.id}
              data-provider={identity.provider}
              className="flex flex-wrap items-center justify-between gap-3 py-3 first:pt-0 last:pb-0"
            >
              <div className="min-w-0">
                <p className="font-medium">{identity.providerName}</p>
                <p className="text-xs text-ink-600 [overflow-wrap:anywhere] dark:text-ink-400">
                  {identity.label}
                  {identity.createdAt
                    ? `${identity.label ? " · " : ""}linked ${dateFormat.format(new Date(identity.createdAt))}`
                    : ""}
                </p>
              </div>
              {onlyOne ? (
                <span className="text-xs text-ink-600 dark:text-ink-400">
                  Your only way to sign in
                </span>
              ) : (
                <Form method="post">
                  <input type="hidden" name="identityId" value={identity.id} />
                  <SubmitButton
                    intent="unlink"
                    variant="secondary"
                    className="!w-auto !px-3 !py-1.5"
                    aria-label={`Unlink ${identity.providerName}`}
                  >
                    Unlink
                  </SubmitButton>
                </Form>
              )}
            </li>
          ))}
        </ul>
      </AccountPanel>
      {available.length ? (
        <AccountPanel
          title="Link another account"
          description="Then you can sign in with it too. You'll be sent to the provider to allow it."
        >
          <Form method="post" className="flex flex-col gap-3 sm:flex-row">
            <input type="hidden" name="intent" value="link" />
            {available.map(({ provider, name }) => (
              <button
                key={provider}
                type="submit"
                name="provider"
                value={provider}
                className="inline-flex items-center justify-center rounded-lg border border-ink-200 bg-white px-4 py-2.5 text-sm font-medium text-ink-800 transition-colors hover:bg-ink-50 dark:border-ink-600 dark:bg-ink-800 dark:text-ink-50"
              >
                Link {name}
              </button>
            ))}
          </Form>
        </AccountPanel>
      ) : null}
    </div>
  );
}

import { jwtVerify, SignJWT } from "jose";
import { providerPageUrl } from "../provider/code.ts";
import { KNOWN_PROVIDERS } from "../provider/providers.ts";
import type { AuthContext } from "./context.ts";
import { authError } from "./errors.ts";
import { redirectTarget } from "./http/redirect.ts";
import { insertFlowState, setOAuthFlowDetails } from "./models/flow-state.ts";
import type { UserRow } from "./models/users.ts";
import { pkceRequested } from "./tokens/pkce.ts";

// The OAuth flow's own parts, shared by /authorize (sign in) and /user/identities/authorize (link):
// the provider's sign-in URL with a signed `state`, and reading that state back at /callback.

/** OAuth state lives as long as the real service's signed state did (5 minutes). */
const STATE_TTL_SECONDS = 300;

/** The claims of `state`: what the callback needs to finish the flow (ExternalProviderClaims). */
export interface StateClaims {
  provider: string;
  referrer: string;
  flow_state_id?: string;
  linking_target_id?: string;
}

/** The state is signed with the JWT secret, as the real service signed it. */
const secretOf = (ctx: AuthContext) => new TextEncoder().encode(ctx.keys.jwtSecret);

/**
 * GetExternalProviderRedirectURL: checks the provider and PKCE parameters, keeps a flow state for
 * PKCE, and signs the state the provider will hand back to /callback.
 */
export async function providerRedirectUrl(
  ctx: AuthContext,
  request: Request,
  linkingTarget?: UserRow,
): Promise<string> {
  const query = new URL(request.url).searchParams;
  const provider = (query.get("provider") ?? "").toLowerCase();
  if (!KNOWN_PROVIDERS.includes(provider)) {
    throw authError(
      "unsupportedProvider",
      `Unsupported provider: Provider ${provider} could not be found`,
    );
  }
  if (!ctx.config.auth.external[provider]?.enabled) {
    throw authError("unsupportedProvider", "Unsupported provider: provider is not enabled");
  }
  const referrer = redirectTarget(ctx.config, request);
  const pkceParams = {
    code_challenge: query.get("code_challenge") ?? undefined,
    code_challenge_method: query.get("code_challenge_method") ?? undefined,
  };
  const pkce = pkceRequested(pkceParams);
  const claims: StateClaims = { provider, referrer };
  if (pkce) {
    const flow = await insertFlowState(ctx.db, pkceParams, "oauth", null, provider);
    claims.flow_state_id = flow.id;
    await setOAuthFlowDetails(ctx.db, flow.id, referrer, linkingTarget?.id ?? null);
  }
  if (linkingTarget) claims.linking_target_id = linkingTarget.id;
  const now = Math.floor(Date.now() / 1000);
  const state = await new SignJWT({ ...claims })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuedAt(now)
    .setExpirationTime(now + STATE_TTL_SECONDS)
    .sign(secretOf(ctx));
  return providerPageUrl(ctx, provider, {
    client_id: "local",
    redirect_uri: `${ctx.externalUrl()}/callback`,
    response_type: "code",
    scope: query.get("scopes") ?? "",
    state,
  });
}

/** The claims of a `state` this server signed and that has not expired (bad_oauth_state otherwise). */
export async function loadState(ctx: AuthContext, state: string): Promise<StateClaims> {
  if (state === "") throw authError("oauthStateMissing");
  let payload: Record<string, unknown>;
  try {
    payload = (await jwtVerify(state, secretOf(ctx), { algorithms: ["HS256"] })).payload;
  } catch {
    throw authError("oauthStateInvalid");
  }
  if (typeof payload.provider !== "string" || payload.provider === "") {
    throw authError("oauthStateInvalid", "OAuth callback with invalid state (missing provider)");
  }
  return payload as unknown as StateClaims;
}

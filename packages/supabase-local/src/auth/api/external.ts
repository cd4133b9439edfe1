import { randomBytes } from "node:crypto";
import { type ProviderAccount, readProviderCode } from "../../provider/code.ts";
import type { AuthContext } from "../context.ts";
import { sendEmail, sendNotification } from "../emails/send.ts";
import { AuthError, authError } from "../errors.ts";
import { beforeUserCreated } from "../hooks/before-user-created.ts";
import { clientIp, readBody } from "../http/request.ts";
import { audit } from "../models/audit.ts";
import type { Db } from "../models/db.ts";
import { completeOAuthFlow, findFlowStateById } from "../models/flow-state.ts";
import {
  createIdentity,
  findIdentityByProvider,
  linkingCandidates,
  refreshIdentity,
  updateProviders,
} from "../models/identities.ts";
import {
  confirmEmail,
  createUser,
  emailTaken,
  findUserById,
  isBanned,
  markPermanent,
  mergeIdentityMetadata,
  removeUnconfirmedIdentities,
  setEmail,
  type UserRow,
} from "../models/users.ts";
import { loadState, providerRedirectUrl, type StateClaims } from "../oauth.ts";
import { issueSession } from "../tokens/token-response.ts";

/** The `iss` the provider's identity data carries, as the real provider adapters set it. */
const ISSUERS: Record<string, string> = {
  github: "https://api.github.com",
  google: "https://accounts.google.com",
  gitlab: "https://gitlab.com",
  discord: "https://discord.com/api",
};

/** GET /authorize?provider=…: 302 to the provider's sign-in (here: the local provider page). */
export async function authorize(ctx: AuthContext, request: Request): Promise<Response> {
  return redirect(await providerRedirectUrl(ctx, request), 302);
}

/** GET|POST /callback: the provider's answer (code or error) -> a user, then back to redirect_to. */
export async function callback(ctx: AuthContext, request: Request): Promise<Response> {
  const params = await callbackParams(request);
  // loadFlowState: a missing or forged state cannot say where to go back to: site_url, 303.
  let claims: StateClaims;
  try {
    claims = await loadState(ctx, params.get("state") ?? "");
  } catch (error) {
    return errorRedirect(ctx.config.auth.siteUrl, error, 303, false);
  }
  try {
    return await finishCallback(ctx, request, params, claims);
  } catch (error) {
    return errorRedirect(claims.referrer || ctx.config.auth.siteUrl, error, 302, true);
  }
}

async function callbackParams(request: Request): Promise<URLSearchParams> {
  const query = new URL(request.url).searchParams;
  if (request.method !== "POST") return query;
  const type = request.headers.get("content-type") ?? "";
  if (!type.includes("application/x-www-form-urlencoded")) return query;
  return new URLSearchParams(await readBody(request));
}

async function finishCallback(
  ctx: AuthContext,
  request: Request,
  params: URLSearchParams,
  claims: StateClaims,
): Promise<Response> {
  const providerError = params.get("error");
  if (providerError) {
    throw new AuthError(400, providerError, params.get("error_description") ?? "", { oauth: true });
  }
  const code = params.get("code") ?? "";
  if (code === "") throw authError("oauthCodeMissing");
  const account = await exchangeCode(ctx, code, params.get("state") ?? "", claims.provider);
  if (!account.email) throw authError("providerEmailMissing");

  const result = await ctx.db.transaction(async (tx) => {
    let flow: { id: string; auth_code: string; user_id: string | null } | undefined;
    if (claims.flow_state_id) {
      flow = await findFlowStateById(tx, claims.flow_state_id);
      if (!flow) throw authError("flowStateNotFound", "Flow state not found");
      if (flow.user_id) throw authError("oauthStateUsed");
    }
    let user: UserRow;
    try {
      if (claims.linking_target_id) {
        const target = await findUserById(tx, claims.linking_target_id);
        if (!target) throw authError("linkingTargetMissing");
        user = await linkIdentityToUser(ctx, tx, request, target, account);
      } else {
        user = await accountFromExternalIdentity(ctx, tx, request, account);
      }
    } catch (error) {
      if (error instanceof CommitWithError) return { committedError: error.error };
      throw error;
    }
    const providerToken = `local_${randomBytes(16).toString("hex")}`;
    if (flow) {
      await completeOAuthFlow(tx, flow.id, user.id, providerToken);
      return { code: flow.auth_code };
    }
    const session = await issueSession(ctx, tx, user, "oauth", request);
    return { session: { ...session, provider_token: providerToken } };
  });
  if ("committedError" in result) throw result.committedError;

  const target = new URL(claims.referrer || ctx.config.auth.siteUrl);
  if ("code" in result) {
    target.searchParams.set("code", result.code as string);
  } else {
    // AccessTokenResponse.AsRedirectURL: the session in the fragment.
    const s = result.session as Record<string, unknown>;
    const fragment = new URLSearchParams({
      access_token: String(s.access_token),
      expires_at: String(s.expires_at),
      expires_in: String(s.expires_in),
      provider_token: String(s.provider_token),
      refresh_token: String(s.refresh_token),
      token_type: "bearer",
    });
    target.hash = fragment.toString();
  }
  return redirect(target.toString(), 302);
}

/** The token exchange with the stand-in provider: its code must be ours, fresh and for this state. */
async function exchangeCode(
  ctx: AuthContext,
  code: string,
  state: string,
  provider: string,
): Promise<ProviderAccount> {
  const account = await readProviderCode(ctx, code, state, provider);
  if (!account) {
    throw new AuthError(
      500,
      "unexpected_failure",
      `Unable to exchange external code: ${code.slice(0, 4)}`,
    );
  }
  return account;
}

/** The identity data the real provider adapters store (structs.Map of provider.Claims). */
export function identityData(account: ProviderAccount): Record<string, unknown> {
  const data: Record<string, unknown> = {
    iss: ISSUERS[account.provider] ?? `https://${account.provider}.local`,
    sub: account.sub,
    name: account.name,
    email: account.email,
    email_verified: account.email_verified,
    phone_verified: false,
    full_name: account.name,
    provider_id: account.sub,
  };
  if (account.provider === "github") {
    data.user_name = account.email.split("@")[0];
    data.preferred_username = data.user_name;
  }
  return data;
}

/** DetermineAccountLinking + createAccountFromExternalIdentity. */
async function accountFromExternalIdentity(
  ctx: AuthContext,
  tx: Db,
  request: Request,
  account: ProviderAccount,
): Promise<UserRow> {
  const { provider } = account;
  const data = identityData(account);
  const email = account.email.toLowerCase();
  const autoconfirm = !ctx.config.auth.email.enableConfirmations;
  const verified = account.email_verified || autoconfirm;

  const existing = await findIdentityByProvider(tx, account.sub, provider);
  let user: UserRow | undefined;
  let identityId: string;
  let linked = false;
  if (existing) {
    // AccountExists: fresh identity data, metadata and providers.
    await refreshIdentity(tx, existing.id, data);
    identityId = existing.id;
    user = await findUserById(tx, existing.user_id);
    if (!user) throw authError("userNotFound");
  } else {
    const owners = verified ? await linkingCandidates(tx, email) : [];
    if (owners.length > 1) {
      throw new AuthError(
        500,
        "unexpected_failure",
        "Multiple accounts with the same email address in the same linking domain detected: default",
      );
    }
    if (owners.length === 1) {
      // LinkAccount: the provider vouches for an address an existing user has.
      user = await findUserById(tx, owners[0] as string);
      if (!user) throw authError("userNotFound");
      identityId = (await createIdentity(tx, user.id, provider, data)).id;
      linked = true;
      await audit(tx, clientIp(request), user, "identity_linked", {
        identity_id: identityId,
        provider,
        provider_id: account.sub,
      });
    } else {
      if (!ctx.config.auth.enableSignup) throw authError("signupDisabled");
      if (await emailTaken(tx, email)) {
        throw authError(
          "providerEmailNeedsVerification",
          `Unverified email with ${provider}. Verify the email with ${provider} in order to sign in`,
        );
      }
      const id = await beforeUserCreated(ctx, tx, request, { email, provider, userMetadata: data });
      user = await createUser(tx, { id, email, provider, userMetadata: data });
      identityId = (await createIdentity(tx, user.id, provider, data)).id;
    }
  }
  await mergeIdentityMetadata(tx, user.id, data);
  await updateProviders(tx, user.id);
  user = (await findUserById(tx, user.id)) ?? user;
  if (isBanned(user, ctx.now())) throw authError("userBanned");

  if (!user.email_confirmed_at) {
    // RemoveUnconfirmedIdentities: an unconfirmed account is taken over by the verified identity.
    if (linked) {
      await removeUnconfirmedIdentities(tx, user.id, identityId, data);
      await updateProviders(tx, user.id);
    }
    if (verified) {
      await audit(tx, clientIp(request), user, "user_signedup", { provider });
      await confirmEmail(tx, user.id);
    } else {
      await sendEmail(ctx, tx, user, "signup", {
        request,
        redirectTo: ctx.config.auth.siteUrl,
        pkce: false,
      });
      // storage.NewCommitWithError: the user and the email stay, the sign-in fails.
      throw new CommitWithError(
        authError(
          "providerEmailNeedsVerification",
          `Unverified email with ${provider}. A confirmation email has been sent to your ${provider} email`,
        ),
      );
    }
  } else {
    await audit(tx, clientIp(request), user, "login", { provider });
  }
  return (await findUserById(tx, user.id)) ?? user;
}

/** linkIdentityToUser: the manual-linking end of the callback. */
async function linkIdentityToUser(
  ctx: AuthContext,
  tx: Db,
  request: Request,
  target: UserRow,
  account: ProviderAccount,
): Promise<UserRow> {
  const existing = await findIdentityByProvider(tx, account.sub, account.provider);
  if (existing) {
    throw authError(
      existing.user_id === target.id ? "identityAlreadyLinked" : "identityLinkedToAnother",
    );
  }
  const data = identityData(account);
  const identity = await createIdentity(tx, target.id, account.provider, data);
  await audit(tx, clientIp(request), target, "identity_linked", {
    identity_id: identity.id,
    provider: account.provider,
    provider_id: account.sub,
  });
  if (!target.email) {
    // An anonymous (or phone) user gains the identity's address.
    const email = account.email.toLowerCase();
    if (await emailTaken(tx, email)) throw authError("emailExists");
    await setEmail(tx, target.id, email);
    // An address the provider has not verified is confirmed by its own email, with confirmations
    // on or off: autoconfirm covers sign-ups, not a provider's claim (Auth sends it either way).
    if (!account.email_verified) {
      const fresh = (await findUserById(tx, target.id)) ?? target;
      await sendEmail(ctx, tx, fresh, "signup", {
        request,
        redirectTo: ctx.config.auth.siteUrl,
        pkce: false,
      });
      throw new CommitWithError(
        new AuthError(
          422,
          "email_not_confirmed",
          `Unverified email with ${account.provider}. A confirmation email has been sent to your ${account.provider} email`,
        ),
      );
    }
    await confirmEmail(tx, target.id);
    await markPermanent(tx, target.id);
  }
  await updateProviders(tx, target.id);
  const linked = (await findUserById(tx, target.id)) ?? target;
  await sendNotification(ctx, tx, request, linked, "identity_linked", {
    provider: account.provider,
  });
  return linked;
}

/** An error whose transaction still commits (the real storage.NewCommitWithError). */
export class CommitWithError extends Error {
  readonly error: AuthError;
  constructor(error: AuthError) {
    super(error.message);
    this.error = error;
  }
}

/** redirectErrors / loadFlowState: error, error_code and error_description in the query (and, for
 * the handler's own errors, in the fragment with sb=). */
function errorRedirect(base: string, error: unknown, status: number, fragment: boolean): Response {
  let e: AuthError;
  if (error instanceof AuthError) e = error;
  else {
    console.error("[local auth] OAuth callback failed:", error);
    e = new AuthError(500, "unexpected_failure", "Internal Server Error");
  }
  const OAUTH_ERRORS: Record<number, string> = {
    400: "invalid_request",
    401: "unauthorized_client",
    403: "access_denied",
    500: "server_error",
    503: "temporarily_unavailable",
  };
  const target = new URL(base);
  const values: Array<[string, string]> = [];
  if (e.oauth) {
    values.push(["error", e.code], ["error_description", e.message]);
  } else {
    const accessDenied = ["signup_disabled", "user_banned", "provider_email_needs_verification"];
    const kind = accessDenied.includes(e.code)
      ? "access_denied"
      : (OAUTH_ERRORS[e.status] ?? "server_error");
    values.push(["error", kind], ["error_code", e.code], ["error_description", e.message]);
  }
  for (const [k, v] of values) target.searchParams.set(k, v);
  if (fragment) {
    const hash = new URLSearchParams(values);
    hash.set("sb", "");
    target.hash = hash.toString();
  }
  return redirect(target.toString(), status);
}

function redirect(location: string, status: number): Response {
  return new Response(null, { status, headers: { Location: location } });
}

import { randomBytes } from "node:crypto";
import { jwtVerify, SignJWT } from "jose";
import { type ProviderAccount, providerPageUrl, readProviderCode } from "../../provider/code.ts";
import { KNOWN_PROVIDERS } from "../../provider/providers.ts";
import type { AuthContext } from "../context.ts";
import { sendEmail } from "../emails/send.ts";
import { AuthError, authError } from "../errors.ts";
import { audit } from "../models/audit.ts";
import { type Db, many, one, run } from "../models/db.ts";
import { insertFlowState, pkceRequested } from "../models/flow-state.ts";
import { issueSession } from "../models/sessions.ts";
import {
  confirmEmail,
  createIdentity,
  createUser,
  findUserById,
  isBanned,
  type UserRow,
} from "../models/users.ts";
import { redirectTarget } from "../redirect.ts";
import { readBody } from "../request.ts";

/** The `iss` the provider's identity data carries, as the real provider adapters set it. */
const ISSUERS: Record<string, string> = {
  github: "https://api.github.com",
  google: "https://accounts.google.com",
  gitlab: "https://gitlab.com",
  discord: "https://discord.com/api",
};

/** OAuth state lives as long as the real service's signed state did (5 minutes). */
const STATE_TTL_SECONDS = 300;

/** The claims of `state`: what the callback needs to finish the flow (ExternalProviderClaims). */
interface StateClaims {
  provider: string;
  referrer: string;
  flow_state_id?: string;
  linking_target_id?: string;
}

/** The state is signed with the JWT secret, as the real service signed it. */
const secretOf = (ctx: AuthContext) => new TextEncoder().encode(ctx.keys.jwtSecret);
/** GET /authorize?provider=…: 302 to the provider's sign-in (here: the local provider page). */
export async function authorize(ctx: AuthContext, request: Request): Promise<Response> {
  return redirect(await providerRedirectUrl(ctx, request), 302);
}

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
    await run(
      ctx.db,
      "update auth.flow_state set referrer = $2, linking_target_id = $3 where id = $1",
      [flow.id, referrer, linkingTarget?.id ?? null],
    );
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

async function loadState(ctx: AuthContext, state: string): Promise<StateClaims> {
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
      flow = await one(tx, "select id, auth_code, user_id from auth.flow_state where id = $1", [
        claims.flow_state_id,
      ]);
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
      await run(
        tx,
        `update auth.flow_state set user_id = $2, auth_code_issued_at = now(), updated_at = now(),
           provider_access_token = $3 where id = $1`,
        [flow.id, user.id, providerToken],
      );
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

  const existing = await one<{ id: string; user_id: string }>(
    tx,
    "select id, user_id from auth.identities where provider_id = $1 and provider = $2",
    [account.sub, provider],
  );
  let user: UserRow | undefined;
  let identityId: string;
  let linked = false;
  if (existing) {
    // AccountExists: fresh identity data, metadata and providers.
    await run(
      tx,
      "update auth.identities set identity_data = $2, last_sign_in_at = now(), updated_at = now() where id = $1",
      [existing.id, JSON.stringify(data)],
    );
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
      identityId = (await createIdentity(tx, user, provider, data)).id;
      linked = true;
      await audit(tx, request, user, "identity_linked", {
        identity_id: identityId,
        provider,
        provider_id: account.sub,
      });
    } else {
      if (!ctx.config.auth.enableSignup) throw authError("signupDisabled");
      const taken = await one(tx, "select 1 from auth.users where lower(email) = $1", [email]);
      if (taken) {
        throw authError(
          "providerEmailNeedsVerification",
          `Unverified email with ${provider}. Verify the email with ${provider} in order to sign in`,
        );
      }
      user = await createUser(tx, { email, provider, userMetadata: data });
      identityId = (await createIdentity(tx, user, provider, data)).id;
    }
  }
  await mergeMetadata(tx, user.id, data);
  await updateProviders(tx, user.id);
  user = (await findUserById(tx, user.id)) ?? user;
  if (isBanned(user, ctx.now())) throw authError("userBanned");

  if (!user.email_confirmed_at) {
    // RemoveUnconfirmedIdentities: an unconfirmed account is taken over by the verified identity.
    if (linked) {
      await run(tx, "update auth.users set encrypted_password = null where id = $1", [user.id]);
      await run(tx, "update auth.users set raw_user_meta_data = $2 where id = $1", [
        user.id,
        JSON.stringify(data),
      ]);
      await run(tx, "delete from auth.identities where user_id = $1 and id <> $2", [
        user.id,
        identityId,
      ]);
      await updateProviders(tx, user.id);
    }
    if (verified) {
      await audit(tx, request, user, "user_signedup", { provider });
      await confirmEmail(tx, user.id);
    } else {
      await sendEmail(ctx, tx, user, "signup", {
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
    await audit(tx, request, user, "login", { provider });
  }
  return (await findUserById(tx, user.id)) ?? user;
}

/** Users whose own address or an identity's address is `email` (the default linking domain). */
async function linkingCandidates(tx: Db, email: string): Promise<string[]> {
  const identities = await many<{ user_id: string }>(
    tx,
    "select distinct user_id from auth.identities where email = $1",
    [email],
  );
  if (identities.length > 0) return identities.map((i) => i.user_id);
  const users = await many<{ id: string }>(
    tx,
    "select id from auth.users where lower(email) = $1 and is_sso_user = false",
    [email],
  );
  return users.map((u) => u.id);
}

/** linkIdentityToUser: the manual-linking end of the callback. */
async function linkIdentityToUser(
  ctx: AuthContext,
  tx: Db,
  request: Request,
  target: UserRow,
  account: ProviderAccount,
): Promise<UserRow> {
  const existing = await one<{ user_id: string }>(
    tx,
    "select user_id from auth.identities where provider_id = $1 and provider = $2",
    [account.sub, account.provider],
  );
  if (existing) {
    throw authError(
      existing.user_id === target.id ? "identityAlreadyLinked" : "identityLinkedToAnother",
    );
  }
  const data = identityData(account);
  const identity = await createIdentity(tx, target, account.provider, data);
  await audit(tx, request, target, "identity_linked", {
    identity_id: identity.id,
    provider: account.provider,
    provider_id: account.sub,
  });
  if (!target.email) {
    // An anonymous (or phone) user gains the identity's address.
    const email = account.email.toLowerCase();
    const taken = await one(tx, "select 1 from auth.users where lower(email) = $1", [email]);
    if (taken) throw authError("emailExists");
    await run(tx, "update auth.users set email = $2, updated_at = now() where id = $1", [
      target.id,
      email,
    ]);
    if (!account.email_verified && ctx.config.auth.email.enableConfirmations) {
      const fresh = (await findUserById(tx, target.id)) ?? target;
      await sendEmail(ctx, tx, fresh, "signup", {
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
    await run(tx, "update auth.users set is_anonymous = false where id = $1", [target.id]);
  }
  await updateProviders(tx, target.id);
  return (await findUserById(tx, target.id)) ?? target;
}

/** UpdateUserMetaData: the identity's data merged into user_metadata. */
async function mergeMetadata(tx: Db, userId: string, data: Record<string, unknown>) {
  await run(
    tx,
    `update auth.users set raw_user_meta_data = coalesce(raw_user_meta_data, '{}') || $2::jsonb,
       updated_at = now() where id = $1`,
    [userId, JSON.stringify(data)],
  );
}

/** UpdateAppMetaDataProviders: providers of the identities, oldest first; provider = the first. */
export async function updateProviders(tx: Db, userId: string): Promise<void> {
  const rows = await many<{ provider: string }>(
    tx,
    "select provider from auth.identities where user_id = $1 order by created_at, provider",
    [userId],
  );
  const providers = [...new Set(rows.map((r) => r.provider))];
  const payload: Record<string, unknown> = { providers };
  if (providers.length > 0) payload.provider = providers[0];
  await run(
    tx,
    `update auth.users set raw_app_meta_data = coalesce(raw_app_meta_data, '{}') || $2::jsonb,
       updated_at = now() where id = $1`,
    [userId, JSON.stringify(payload)],
  );
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

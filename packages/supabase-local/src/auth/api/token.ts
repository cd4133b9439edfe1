import type { AuthContext } from "../context.ts";
import { authError, oauthError } from "../errors.ts";
import { passwordVerificationAttempt } from "../hooks/verification.ts";
import { requireUser } from "../http/authenticate.ts";
import { clientIp, readParams } from "../http/request.ts";
import { audit } from "../models/audit.ts";
import { consumeFlowState } from "../models/flow-state.ts";
import { revokeFamilyOf } from "../models/refresh-tokens.ts";
import type { AuthMethod } from "../models/sessions.ts";
import { findUserByEmail, findUserById, findUserByPhone, isBanned } from "../models/users.ts";
import { comparePasswordForSignIn, passwordWeakness } from "../passwords.ts";
import { issueSession, refreshSession } from "../tokens/token-response.ts";
import { web3Grant } from "../web3/grant.ts";

/** POST /token?grant_type=password|refresh_token|pkce|id_token|web3 */
export async function token(ctx: AuthContext, request: Request): Promise<Response> {
  const grantType = new URL(request.url).searchParams.get("grant_type");
  if (["password", "refresh_token", "pkce", "id_token"].includes(grantType ?? "")) {
    // Every grant counts against token_refresh (RATE_LIMIT_TOKEN_REFRESH), as the real /token,
    // but Web3's, which has its own (RATE_LIMIT_WEB3).
    ctx.rateLimits.check("token_refresh", request);
  } else if (grantType === "web3") {
    ctx.rateLimits.check("web3", request);
  }
  switch (grantType) {
    case "password":
      return passwordGrant(ctx, request);
    case "refresh_token":
      return refreshTokenGrant(ctx, request);
    case "pkce":
      return pkceGrant(ctx, request);
    case "id_token":
      return idTokenGrant(ctx, request);
    case "web3":
      return web3Grant(ctx, request);
    default:
      throw authError("unsupportedGrant");
  }
}

async function passwordGrant(ctx: AuthContext, request: Request): Promise<Response> {
  const params = await readParams(request, {
    email: "string",
    phone: "string",
    password: "string",
  });
  if (params.email && params.phone) throw authError("emailOrPhoneLogin");
  if (!params.email && !params.phone) throw authError("missingEmailOrPhone");
  const byPhone = !params.email;
  if (!byPhone && !ctx.config.auth.email.enabled) throw authError("emailLoginsDisabled");
  if (byPhone && !ctx.config.auth.sms.enableSignup) throw authError("phoneLoginsDisabled");
  const password = params.password ?? "";
  const user = byPhone
    ? await findUserByPhone(ctx.db, (params.phone ?? "").replace(/^\+/, "").replaceAll(" ", ""))
    : await findUserByEmail(ctx.db, params.email as string);
  // No account, or none with a password: the same answer after the same work as a wrong password.
  if (!user || user.is_anonymous || !user.encrypted_password) {
    await comparePasswordForSignIn(ctx.config, password, null);
    throw authError("invalidCredentials");
  }
  if (isBanned(user, ctx.now())) throw authError("userBanned");
  const valid = await comparePasswordForSignIn(ctx.config, password, user.encrypted_password);
  // A right password that today's rules call weak still signs in, and the answer says so.
  const weakness = valid ? passwordWeakness(ctx.config, password) : undefined;
  await passwordVerificationAttempt(ctx, request, user.id, valid);
  if (!valid) throw authError("invalidCredentials");
  if (!byPhone && !user.email_confirmed_at) throw authError("emailNotConfirmed");
  if (byPhone && !user.phone_confirmed_at) throw authError("phoneNotConfirmed");
  const body = await ctx.db.transaction(async (tx) => {
    await audit(tx, clientIp(request), user, "login", { provider: byPhone ? "phone" : "email" });
    return issueSession(ctx, tx, user, "password", request);
  });
  return Response.json(weakness ? { ...body, weak_password: weakness } : body);
}

async function refreshTokenGrant(ctx: AuthContext, request: Request): Promise<Response> {
  const params = await readParams(request, { refresh_token: "string" });
  const value = params.refresh_token ?? "";
  // RefreshTokenGrantParams.Validate, an empty token included (the token service's own
  // "refresh_token required" comes after it, so never)
  if (!/^[a-z0-9]{12}$/.test(value)) throw authError("refreshTokenInvalid");
  const body = await ctx.db
    .transaction(async (tx) => {
      const result = await refreshSession(ctx, tx, value, request);
      const user = result.user as { id: string; email: string; phone: string };
      await audit(
        tx,
        clientIp(request),
        { id: user.id, email: user.email, phone: user.phone, raw_user_meta_data: {} },
        "token_refreshed",
      );
      return result;
    })
    .catch(async (error) => {
      // Revoking the family must stick even though the request fails (storage.NewCommitWithError).
      if ((error as { code?: string }).code === "refresh_token_already_used") {
        await revokeFamilyOf(ctx.db, value, ctx.config.auth.enableRefreshTokenRotation);
      }
      throw error;
    });
  return Response.json(body);
}

async function pkceGrant(ctx: AuthContext, request: Request): Promise<Response> {
  const params = await readParams(request, { auth_code: "string", code_verifier: "string" });
  if (!params.auth_code || !params.code_verifier) throw authError("pkceParamsMissing");
  const body = await ctx.db.transaction(async (tx) => {
    const flow = await consumeFlowState(
      tx,
      params.auth_code as string,
      params.code_verifier as string,
    );
    const user = await findUserById(tx, flow.userId);
    if (!user) throw authError("flowStateNotFound");
    if (isBanned(user, ctx.now())) throw authError("userBanned");
    await audit(tx, clientIp(request), user, "login", { provider_type: flow.providerType });
    const session = await issueSession(
      ctx,
      tx,
      user,
      flow.authenticationMethod as AuthMethod,
      request,
    );
    // The OAuth provider's tokens ride along (AccessTokenResponse provider_token, omitempty).
    if (flow.providerAccessToken) session.provider_token = flow.providerAccessToken;
    if (flow.providerRefreshToken) session.provider_refresh_token = flow.providerRefreshToken;
    return session;
  });
  return Response.json(body);
}

/** The issuer each OIDC provider's ID tokens carry (IdTokenGrantParams.getProvider). */
const ID_TOKEN_ISSUERS: Record<string, string> = {
  google: "https://accounts.google.com",
  facebook: "https://www.facebook.com",
  kakao: "https://kauth.kakao.com",
  vercel_marketplace: "https://marketplace.vercel.com",
  snapchat: "https://accounts.snapchat.com/accounts/oauth2/token",
};
const APPLE_ISSUERS = ["https://appleid.apple.com", "https://account.apple.com"];
const AZURE_ISSUER = /^https:\/\/login[.]microsoftonline[.]com\/([^/]+)\/v2[.]0\/?$/;

/**
 * grant_type=id_token (signInWithIdToken): the provider is found as the real service finds it, and
 * one not enabled in [auth.external] gets its `provider_disabled` answer. An enabled one cannot be
 * checked offline (its ID tokens are verified against the provider's published keys), so the token
 * is refused as one that does not verify.
 */
async function idTokenGrant(ctx: AuthContext, request: Request): Promise<Response> {
  const params = await readParams(request, {
    id_token: "string",
    access_token: "string",
    nonce: "string",
    provider: "string",
    client_id: "string",
    issuer: "string",
    link_identity: "boolean",
  });
  if (!params.id_token) throw oauthError("invalid request", "id_token required");
  const provider = params.provider ?? "";
  const issuer = params.issuer ?? "";
  if (!provider && (!params.client_id || !issuer)) {
    throw oauthError("invalid request", "provider or client_id and issuer required");
  }
  if (params.link_identity) {
    if (!request.headers.get("authorization")) {
      throw oauthError(
        "invalid request",
        "Linking requires a valid user access token in Authorization",
      );
    }
    await requireUser(ctx, request);
  }
  let name: string;
  let tokenIssuer: string;
  if (provider === "apple" || APPLE_ISSUERS.includes(issuer)) {
    name = "apple";
    tokenIssuer = detectedIssuer(params.id_token, "Apple");
    if (!APPLE_ISSUERS.includes(tokenIssuer)) throw notIssuer("Apple");
  } else if (provider === "azure" || AZURE_ISSUER.test(issuer)) {
    name = "azure";
    tokenIssuer = detectedIssuer(params.id_token, "Azure");
    if (!/^https:\/\/(login\.microsoftonline\.com|sts\.windows\.net)\//.test(tokenIssuer)) {
      throw notIssuer("Azure");
    }
  } else {
    const known = Object.entries(ID_TOKEN_ISSUERS).find(([p, i]) => p === provider || i === issuer);
    if (known) [name, tokenIssuer] = known;
    else if (provider === "keycloak") [name, tokenIssuer] = ["keycloak", ""];
    else if (provider.startsWith("custom:")) {
      throw authError("validationFailed", "Custom OAuth providers are disabled");
    } else {
      throw authError("validationFailed", `Custom OIDC provider "${provider}" not allowed`);
    }
  }
  if ((name === "apple" || name === "azure") && issuer && issuer !== tokenIssuer) {
    throw authError("validationFailed", "Provided issuer does not match ID token issuer");
  }
  if (ctx.config.auth.external[name]?.enabled !== true) {
    throw authError("providerDisabled", `Provider (issuer "${tokenIssuer}") is not enabled`);
  }
  throw oauthError("invalid request", "Bad ID token");
}

/** The unverified `iss` of an ID token (DetectAppleIDTokenIssuer, DetectAzureIDTokenIssuer). */
function detectedIssuer(idToken: string, provider: string): string {
  try {
    const parts = idToken.split(".");
    if (parts.length !== 3) throw new Error("segments");
    const payload = JSON.parse(Buffer.from(parts[1] as string, "base64url").toString("utf8"));
    return typeof payload?.iss === "string" ? payload.iss : "";
  } catch {
    throw authError(
      "validationFailed",
      `Unable to detect issuer in ID token for ${provider} provider`,
    );
  }
}

function notIssuer(provider: string) {
  return authError(
    "validationFailed",
    `Detected ID token issuer is not an ${provider} ID token issuer`,
  );
}

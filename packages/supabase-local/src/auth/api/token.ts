import type { AuthContext } from "../context.ts";
import { authError, oauthError } from "../errors.ts";
import { audit } from "../models/audit.ts";
import { consumeFlowState } from "../models/flow-state.ts";
import { revokeFamilyOf } from "../models/refresh-tokens.ts";
import type { AuthMethod } from "../models/sessions.ts";
import { findUserByEmail, findUserById, isBanned } from "../models/users.ts";
import { comparePasswordForSignIn } from "../passwords.ts";
import { clientIp, readParams } from "../request.ts";
import { issueSession, refreshSession } from "../token-response.ts";

/** POST /token?grant_type=password|refresh_token|pkce */
export async function token(ctx: AuthContext, request: Request): Promise<Response> {
  const grantType = new URL(request.url).searchParams.get("grant_type");
  if (grantType === "password" || grantType === "refresh_token" || grantType === "pkce") {
    // Every grant counts against token_refresh (RATE_LIMIT_TOKEN_REFRESH), as the real /token.
    ctx.rateLimits.check("token_refresh", request);
  }
  switch (grantType) {
    case "password":
      return passwordGrant(ctx, request);
    case "refresh_token":
      return refreshTokenGrant(ctx, request);
    case "pkce":
      return pkceGrant(ctx, request);
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
  if (!params.email) throw authError("invalidCredentials");
  const password = params.password ?? "";
  const user = await findUserByEmail(ctx.db, params.email);
  // No account, or none with a password: the same answer after the same work as a wrong password.
  if (!user || user.is_anonymous || !user.encrypted_password) {
    await comparePasswordForSignIn(password, null);
    throw authError("invalidCredentials");
  }
  if (isBanned(user, ctx.now())) throw authError("userBanned");
  if (!(await comparePasswordForSignIn(password, user.encrypted_password))) {
    throw authError("invalidCredentials");
  }
  if (!user.email_confirmed_at) throw authError("emailNotConfirmed");
  const body = await ctx.db.transaction(async (tx) => {
    await audit(tx, clientIp(request), user, "login", { provider: "email" });
    return issueSession(ctx, tx, user, "password", request);
  });
  return Response.json(body);
}

async function refreshTokenGrant(ctx: AuthContext, request: Request): Promise<Response> {
  const params = await readParams(request, { refresh_token: "string" });
  const value = params.refresh_token ?? "";
  if (value === "") throw oauthError("invalid_request", "refresh_token required");
  if (!/^[a-z0-9]{12}$/.test(value)) throw authError("refreshTokenInvalid");
  const body = await ctx.db
    .transaction(async (tx) => {
      const result = await refreshSession(ctx, tx, value);
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

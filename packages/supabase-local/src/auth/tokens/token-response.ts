import { randomUUID } from "node:crypto";
import type { AuthContext } from "../context.ts";
import { authError } from "../errors.ts";
import { clientIp } from "../http/request.ts";
import type { Db } from "../models/db.ts";
import {
  deleteSessionRefreshTokens,
  findActiveRefreshToken,
  findRefreshToken,
  insertRefreshToken,
  newRefreshToken,
  revokeRefreshToken,
  revokeSessionRefreshTokens,
} from "../models/refresh-tokens.ts";
import {
  type AuthMethod,
  addAmrClaim,
  createSession,
  findSession,
  sessionAuthClaims,
  sessionExpiry,
  setAal2,
  touchRefreshed,
} from "../models/sessions.ts";
import {
  findUserById,
  isBanned,
  touchLastSignIn,
  type UserRow,
  userJson,
} from "../models/users.ts";
import { signAccessToken } from "./jwt.ts";

/**
 * The token response every sign-in ends with (AccessTokenResponse): a fresh access token for the
 * session, its refresh token and the user. The three ways to one: a new session, a refresh token
 * swapped, a session raised to aal2.
 */

/** Starts a session (aal1) for the user and answers with the token response (IssueRefreshToken). */
export async function issueSession(
  ctx: AuthContext,
  db: Db,
  user: UserRow,
  method: AuthMethod,
  request: Request,
): Promise<Record<string, unknown>> {
  const sessionId = randomUUID();
  await createSession(db, {
    id: sessionId,
    userId: user.id,
    userAgent: request.headers.get("user-agent") ?? "",
    ip: clientIp(request),
  });
  await addAmrClaim(db, sessionId, method);
  await touchLastSignIn(db, user.id);
  const token = newRefreshToken();
  await insertRefreshToken(db, { token, userId: user.id, sessionId });
  const fresh = (await findUserById(db, user.id)) ?? user;
  return tokenResponse(ctx, db, fresh, sessionId, token, { request, method });
}

/** The request a token is issued for, and how the session was authenticated this time (as the
 * custom access token hook is told: `token_refresh` for a refresh, the factor for an MFA step). */
interface Grant {
  request: Request;
  method: AuthMethod | "token_refresh";
}

async function tokenResponse(
  ctx: AuthContext,
  db: Db,
  user: UserRow,
  sessionId: string,
  refreshToken: string,
  grant: Grant,
): Promise<Record<string, unknown>> {
  const claims = await sessionAuthClaims(db, sessionId);
  const access = await signAccessToken(ctx, db, user, claims, grant);
  return {
    access_token: access.token,
    token_type: "bearer",
    expires_in: access.expiresIn,
    expires_at: access.expiresAt,
    refresh_token: refreshToken,
    user: await userJson(db, user),
  };
}

/**
 * The refresh_token grant with the real rotation rules: a revoked token that is the parent of the
 * active one returns the active one; any other revoked token works only inside
 * refresh_token_reuse_interval, after that the whole session's family is revoked
 * (refresh_token_already_used).
 */
export async function refreshSession(
  ctx: AuthContext,
  db: Db,
  token: string,
  request: Request,
): Promise<Record<string, unknown>> {
  const { refreshTokenReuseInterval, enableRefreshTokenRotation } = ctx.config.auth;
  const row = await findRefreshToken(db, token, refreshTokenReuseInterval);
  if (!row) throw authError("refreshTokenNotFound");
  const user = await findUserById(db, row.user_id);
  if (!user) throw authError("refreshTokenNotFound");
  if (isBanned(user, ctx.now()))
    throw authError("userBanned", "Invalid Refresh Token: User Banned");
  const session = row.session_id ? await findSession(db, row.session_id) : undefined;
  if (!session) throw authError("refreshNoSession");
  const expired = await sessionExpiry(db, session, row.id, ctx.config.auth.sessions);
  if (expired === "inactivity")
    throw authError("sessionExpired", "Invalid Refresh Token: Session Expired (Inactivity)");
  if (expired) throw authError("sessionExpired");

  let issued: string | undefined;
  if (row.revoked) {
    const active = await findActiveRefreshToken(db, session.id);
    if (active && active.parent === row.token) {
      issued = active.token;
    } else if (row.reuse_expired) {
      if (enableRefreshTokenRotation) await revokeSessionRefreshTokens(db, session.id);
      throw authError("refreshTokenAlreadyUsed");
    }
  }
  if (!issued) {
    issued = newRefreshToken();
    await revokeRefreshToken(db, row.id);
    await insertRefreshToken(db, {
      token: issued,
      userId: user.id,
      parent: row.token,
      sessionId: session.id,
    });
  }
  await touchRefreshed(db, session.id);
  return tokenResponse(ctx, db, user, session.id, issued, { request, method: "token_refresh" });
}

/**
 * updateMFASessionAndClaims: the current session gains the factor's AMR method and aal2, its
 * refresh tokens are replaced by a new one (the aal1 ones can no longer refresh), and the answer
 * is a fresh token response for the same session.
 */
export async function upgradeSession(
  ctx: AuthContext,
  db: Db,
  user: UserRow,
  sessionId: string,
  method: AuthMethod,
  factorId: string,
  request: Request,
): Promise<Record<string, unknown>> {
  await addAmrClaim(db, sessionId, method);
  await setAal2(db, sessionId, factorId);
  // The session's refresh tokens so far were issued at aal1: they stop working (the real service
  // skips the counter of v2 tokens for the same reason), so only the answer's token carries on.
  await deleteSessionRefreshTokens(db, sessionId);
  const token = newRefreshToken();
  await insertRefreshToken(db, { token, userId: user.id, sessionId });
  return tokenResponse(ctx, db, user, sessionId, token, { request, method });
}

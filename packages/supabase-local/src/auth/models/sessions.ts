import { randomUUID } from "node:crypto";
import type { AuthContext } from "../context.ts";
import { authError } from "../errors.ts";
import { type AmrEntry, newRefreshToken, signAccessToken } from "../jwt.ts";
import type { Db } from "./db.ts";
import { many, one, run } from "./db.ts";
import { findUserById, isBanned, touchLastSignIn, type UserRow, userJson } from "./users.ts";

export interface SessionRow {
  id: string;
  user_id: string;
  aal: string;
  factor_id: string | null;
  created_at: Date;
  not_after: Date | null;
}

interface RefreshTokenRow {
  id: number;
  token: string;
  user_id: string;
  revoked: boolean;
  parent: string | null;
  session_id: string | null;
  updated_at: Date;
  reuse_expired: boolean;
}

/** How the session was authenticated: the AMR method names of the real service. */
export type AuthMethod =
  | "password"
  | "otp"
  | "magiclink"
  | "email/signup"
  | "recovery"
  | "invite"
  | "email_change"
  | "anonymous"
  | "oauth"
  | "totp";

/** Starts a session (aal1) for the user and answers with the token response (IssueRefreshToken). */
export async function issueSession(
  ctx: AuthContext,
  db: Db,
  user: UserRow,
  method: AuthMethod,
  request: Request,
): Promise<Record<string, unknown>> {
  const sessionId = randomUUID();
  await run(
    db,
    `insert into auth.sessions (id, user_id, created_at, updated_at, aal, user_agent, ip)
     values ($1, $2, now(), now(), 'aal1', $3, '127.0.0.1')`,
    [sessionId, user.id, request.headers.get("user-agent") ?? ""],
  );
  await addAmrClaim(db, sessionId, method);
  await touchLastSignIn(db, user.id);
  const token = newRefreshToken();
  await run(
    db,
    `insert into auth.refresh_tokens (instance_id, token, user_id, revoked, created_at, updated_at, session_id)
     values ('00000000-0000-0000-0000-000000000000', $1, $2, false, now(), now(), $3)`,
    [token, user.id, sessionId],
  );
  const fresh = (await findUserById(db, user.id)) ?? user;
  return tokenResponse(ctx, db, fresh, sessionId, token);
}

export async function addAmrClaim(db: Db, sessionId: string, method: string): Promise<void> {
  await run(
    db,
    `insert into auth.mfa_amr_claims (session_id, created_at, updated_at, authentication_method, id)
     values ($1, now(), now(), $2, $3)
     on conflict (session_id, authentication_method) do update set updated_at = now()`,
    [sessionId, method, randomUUID()],
  );
}

async function sessionClaims(db: Db, sessionId: string) {
  const session = await one<SessionRow>(db, "select * from auth.sessions where id = $1", [
    sessionId,
  ]);
  const claims = await many<{ authentication_method: string; updated_at: Date }>(
    db,
    "select authentication_method, updated_at from auth.mfa_amr_claims where session_id = $1 order by updated_at desc",
    [sessionId],
  );
  const amr: AmrEntry[] = claims.map((c) => ({
    method: c.authentication_method,
    timestamp: Math.floor(new Date(c.updated_at).getTime() / 1000),
  }));
  return { id: sessionId, aal: session?.aal ?? "aal1", amr };
}

async function tokenResponse(
  ctx: AuthContext,
  db: Db,
  user: UserRow,
  sessionId: string,
  refreshToken: string,
): Promise<Record<string, unknown>> {
  const access = await signAccessToken(ctx, user, await sessionClaims(db, sessionId));
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
  const row = await one<RefreshTokenRow>(
    db,
    `select *, now() > updated_at + make_interval(secs => $2) as reuse_expired
     from auth.refresh_tokens where token = $1`,
    [token, refreshTokenReuseInterval],
  );
  if (!row) throw authError("refreshTokenNotFound");
  const user = await findUserById(db, row.user_id);
  if (!user) throw authError("refreshTokenNotFound");
  if (isBanned(user, ctx.now()))
    throw authError("userBanned", "Invalid Refresh Token: User Banned");
  const session = row.session_id
    ? await one<SessionRow>(db, "select * from auth.sessions where id = $1", [row.session_id])
    : undefined;
  if (!session) throw authError("refreshNoSession");

  let issued: string | undefined;
  if (row.revoked) {
    const active = await one<RefreshTokenRow>(
      db,
      "select * from auth.refresh_tokens where session_id = $1 and revoked = false order by id desc limit 1",
      [session.id],
    );
    if (active && active.parent === row.token) {
      issued = active.token;
    } else if (row.reuse_expired) {
      if (enableRefreshTokenRotation) {
        await run(
          db,
          "update auth.refresh_tokens set revoked = true, updated_at = now() where session_id = $1 and revoked = false",
          [session.id],
        );
      }
      throw authError("refreshTokenAlreadyUsed");
    }
  }
  if (!issued) {
    issued = newRefreshToken();
    await run(
      db,
      "update auth.refresh_tokens set revoked = true, updated_at = now() where id = $1",
      [row.id],
    );
    await run(
      db,
      `insert into auth.refresh_tokens (instance_id, token, user_id, revoked, created_at, updated_at, parent, session_id)
       values ('00000000-0000-0000-0000-000000000000', $1, $2, false, now(), now(), $3, $4)`,
      [issued, user.id, row.token, session.id],
    );
  }
  await run(db, "update auth.sessions set refreshed_at = now(), updated_at = now() where id = $1", [
    session.id,
  ]);
  return tokenResponse(ctx, db, user, session.id, issued);
}

export async function findSession(db: Db, id: string): Promise<SessionRow | undefined> {
  return one<SessionRow>(db, "select * from auth.sessions where id = $1", [id]);
}

/** Deletes sessions (and with them their refresh tokens and AMR claims). */
export async function logoutSessions(
  db: Db,
  userId: string,
  sessionId: string | undefined,
  scope: "global" | "local" | "others",
): Promise<void> {
  if (scope === "global" || !sessionId) {
    await run(db, "delete from auth.sessions where user_id = $1", [userId]);
  } else if (scope === "local") {
    await run(db, "delete from auth.sessions where id = $1", [sessionId]);
  } else {
    await run(db, "delete from auth.sessions where user_id = $1 and id <> $2", [userId, sessionId]);
  }
  await run(db, "delete from auth.refresh_tokens where user_id = $1 and session_id is null", [
    userId,
  ]);
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
): Promise<Record<string, unknown>> {
  await addAmrClaim(db, sessionId, method);
  await run(
    db,
    "update auth.sessions set aal = 'aal2', factor_id = $2, updated_at = now() where id = $1",
    [sessionId, factorId],
  );
  // The session's refresh tokens so far were issued at aal1: they stop working (the real service
  // skips the counter of v2 tokens for the same reason), so only the answer's token carries on.
  await run(db, "delete from auth.refresh_tokens where session_id = $1", [sessionId]);
  const token = newRefreshToken();
  await run(
    db,
    `insert into auth.refresh_tokens (instance_id, token, user_id, revoked, created_at, updated_at, session_id)
     values ('00000000-0000-0000-0000-000000000000', $1, $2, false, now(), now(), $3)`,
    [token, user.id, sessionId],
  );
  return tokenResponse(ctx, db, user, sessionId, token);
}

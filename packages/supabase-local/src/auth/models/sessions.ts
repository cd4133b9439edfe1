import { randomUUID } from "node:crypto";
import { isIP } from "node:net";
import { type Db, many, one, run } from "./db.ts";

/** A row of auth.sessions. */
export interface SessionRow {
  id: string;
  user_id: string;
  aal: string;
  factor_id: string | null;
  created_at: Date;
  not_after: Date | null;
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
  | "passkey"
  | "web3"
  | "totp"
  | "mfa/webauthn"
  | "mfa/phone"
  | "mfa/recovery_code";

/** One `amr` entry of an access token: a method and when it was last used in the session. */
export interface AmrEntry {
  method: string;
  timestamp: number;
}

/** A new aal1 session of the user, with the device and address it signed in from (as the real
 * service records them: the User-Agent header and the client address). */
export async function createSession(
  db: Db,
  session: { id: string; userId: string; userAgent: string; ip: string },
): Promise<void> {
  await run(
    db,
    `insert into auth.sessions (id, user_id, created_at, updated_at, aal, user_agent, ip)
     values ($1, $2, now(), now(), 'aal1', $3, $4::inet)`,
    [session.id, session.userId, session.userAgent, isIP(session.ip) ? session.ip : null],
  );
}

export async function findSession(db: Db, id: string): Promise<SessionRow | undefined> {
  return one<SessionRow>(db, "select * from auth.sessions where id = $1", [id]);
}

/**
 * Session.CheckValidity: why the session may no longer be used, or undefined while it may: past
 * its not_after, older than the timebox, or idle longer than the inactivity timeout since it was
 * last refreshed (refreshed_at; before any refresh, the refresh token's last use, or its start).
 * A limit of 0 is none.
 */
export async function sessionExpiry(
  db: Db,
  session: SessionRow,
  refreshTokenId: number | null,
  limits: { timeboxMs: number; inactivityTimeoutMs: number },
): Promise<"not_after" | "timebox" | "inactivity" | undefined> {
  // nothing can have run out (the usual case, no limits configured): no query
  if (!session.not_after && !limits.timeboxMs && !limits.inactivityTimeoutMs) return undefined;
  const row = await one<{ not_after: boolean; timebox: boolean; inactivity: boolean }>(
    db,
    `select coalesce(now() > s.not_after, false) as not_after,
       $3::float8 > 0 and now() > s.created_at + make_interval(secs => $3::float8 / 1000) as timebox,
       $4::float8 > 0 and now() > coalesce(s.refreshed_at::timestamptz,
         greatest(s.created_at, rt.updated_at::timestamptz))
         + make_interval(secs => $4::float8 / 1000) as inactivity
     from auth.sessions s left join auth.refresh_tokens rt on rt.id = $2
     where s.id = $1`,
    [session.id, refreshTokenId, limits.timeboxMs, limits.inactivityTimeoutMs],
  );
  if (row?.not_after) return "not_after";
  if (row?.timebox) return "timebox";
  if (row?.inactivity) return "inactivity";
  return undefined;
}

/** The session was authenticated (again) with `method`. */
export async function addAmrClaim(db: Db, sessionId: string, method: string): Promise<void> {
  await run(
    db,
    `insert into auth.mfa_amr_claims (session_id, created_at, updated_at, authentication_method, id)
     values ($1, now(), now(), $2, $3)
     on conflict (session_id, authentication_method) do update set updated_at = now()`,
    [sessionId, method, randomUUID()],
  );
}

/** What an access token says of its session: id, aal and amr (most recent method first). */
export async function sessionAuthClaims(
  db: Db,
  sessionId: string,
): Promise<{ id: string; aal: string; amr: AmrEntry[] }> {
  const session = await findSession(db, sessionId);
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

/** A refresh token of the session was swapped. */
export async function touchRefreshed(db: Db, sessionId: string): Promise<void> {
  await run(db, "update auth.sessions set refreshed_at = now(), updated_at = now() where id = $1", [
    sessionId,
  ]);
}

/** The session passed the factor's challenge: aal2. */
export async function setAal2(db: Db, sessionId: string, factorId: string): Promise<void> {
  await run(
    db,
    "update auth.sessions set aal = 'aal2', factor_id = $2, updated_at = now() where id = $1",
    [sessionId, factorId],
  );
}

/** InvalidateSessionsWithAALLessThan(aal2): the user's aal1 sessions end. */
export async function deleteSessionsBelowAal2(db: Db, userId: string): Promise<void> {
  await run(db, "delete from auth.sessions where user_id = $1 and aal < 'aal2'", [userId]);
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

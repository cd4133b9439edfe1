import { randomBytes } from "node:crypto";
import { type Db, one, run } from "./db.ts";

/** A row of auth.refresh_tokens. */
export interface RefreshTokenRow {
  id: number;
  token: string;
  user_id: string;
  revoked: boolean;
  parent: string | null;
  session_id: string | null;
  updated_at: Date;
}

const ALPHANUMERIC = "abcdefghijklmnopqrstuvwxyz0123456789";

/** A refresh token in the real service's v1 format: 12 lowercase alphanumerics. */
export function newRefreshToken(): string {
  const bytes = randomBytes(12);
  return Array.from(bytes, (b) => ALPHANUMERIC[b % ALPHANUMERIC.length]).join("");
}

/** Stores an active refresh token of the session (`parent`: the token it replaces). */
export async function insertRefreshToken(
  db: Db,
  token: { token: string; userId: string; sessionId: string; parent?: string },
): Promise<void> {
  await run(
    db,
    `insert into auth.refresh_tokens (instance_id, token, user_id, revoked, created_at, updated_at, parent, session_id)
     values ('00000000-0000-0000-0000-000000000000', $1, $2, false, now(), now(), $3, $4)`,
    [token.token, token.userId, token.parent ?? null, token.sessionId],
  );
}

/** The token, and whether it was revoked longer than `reuseIntervalSeconds` ago. */
export async function findRefreshToken(
  db: Db,
  token: string,
  reuseIntervalSeconds: number,
): Promise<(RefreshTokenRow & { reuse_expired: boolean }) | undefined> {
  return one<RefreshTokenRow & { reuse_expired: boolean }>(
    db,
    `select *, now() > updated_at + make_interval(secs => $2) as reuse_expired
     from auth.refresh_tokens where token = $1`,
    [token, reuseIntervalSeconds],
  );
}

/** The session's newest active token. */
export async function findActiveRefreshToken(
  db: Db,
  sessionId: string,
): Promise<RefreshTokenRow | undefined> {
  return one<RefreshTokenRow>(
    db,
    "select * from auth.refresh_tokens where session_id = $1 and revoked = false order by id desc limit 1",
    [sessionId],
  );
}

export async function revokeRefreshToken(db: Db, id: number): Promise<void> {
  await run(db, "update auth.refresh_tokens set revoked = true, updated_at = now() where id = $1", [
    id,
  ]);
}

/** Every active token of the session is revoked (a reused token's family). */
export async function revokeSessionRefreshTokens(db: Db, sessionId: string): Promise<void> {
  await run(
    db,
    "update auth.refresh_tokens set revoked = true, updated_at = now() where session_id = $1 and revoked = false",
    [sessionId],
  );
}

/**
 * The family of `token` (every active token of its session) is revoked when `rotation` is on: what
 * a refused reuse leaves behind even though its request fails.
 */
export async function revokeFamilyOf(db: Db, token: string, rotation: boolean): Promise<void> {
  await db.query(
    `update auth.refresh_tokens set revoked = true, updated_at = now()
         where revoked = false and session_id = (select session_id from auth.refresh_tokens where token = $1)
           and $2::boolean`,
    [token, rotation],
  );
}

/** Every token of the session goes (they were issued at a lower aal). */
export async function deleteSessionRefreshTokens(db: Db, sessionId: string): Promise<void> {
  await run(db, "delete from auth.refresh_tokens where session_id = $1", [sessionId]);
}

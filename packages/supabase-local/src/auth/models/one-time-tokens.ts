import { createHash, randomInt, randomUUID } from "node:crypto";
import { authError } from "../errors.ts";
import { type Db, run } from "./db.ts";
import { sentTooLongAgo, type UserRow } from "./users.ts";

/** The columns of auth.users that hold a hashed token, by one_time_token_type. */
export const TOKEN_COLUMNS = {
  confirmation_token: "confirmation_token",
  recovery_token: "recovery_token",
  email_change_token_new: "email_change_token_new",
  email_change_token_current: "email_change_token_current",
  reauthentication_token: "reauthentication_token",
  phone_change_token: "phone_change_token",
} as const;

export type TokenType = keyof typeof TOKEN_COLUMNS;

export const PKCE_PREFIX = "pkce_";

/** A numeric one-time code of the configured length (crypto.GenerateOtp). */
export function generateOtp(length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) out += String(randomInt(10));
  return out;
}

/** crypto.GenerateTokenHash: hex SHA-224 of the address followed by the code. */
export function tokenHash(emailOrPhone: string, otp: string): string {
  return createHash("sha224")
    .update(emailOrPhone + otp)
    .digest("hex");
}

/**
 * Stores a token as the real service does: the (optionally pkce_-prefixed) hash in the user's
 * column and in auth.one_time_tokens (one per user and type). Returns the stored hash.
 */
export async function storeToken(
  db: Db,
  userId: string,
  type: TokenType,
  relatesTo: string,
  otp: string,
  pkce: boolean,
): Promise<string> {
  const hash = (pkce ? PKCE_PREFIX : "") + tokenHash(relatesTo, otp);
  await run(
    db,
    `update auth.users set ${TOKEN_COLUMNS[type]} = $2, updated_at = now() where id = $1`,
    [userId, hash],
  );
  await run(
    db,
    `insert into auth.one_time_tokens (id, user_id, token_type, token_hash, relates_to)
     values ($1, $2, $3, $4, $5)
     on conflict (user_id, token_type) do update
       set token_hash = excluded.token_hash, relates_to = excluded.relates_to, updated_at = now()`,
    [randomUUID(), userId, type, hash, relatesTo],
  );
  return hash;
}

export async function clearToken(db: Db, userId: string, type: TokenType): Promise<void> {
  await run(db, `update auth.users set ${TOKEN_COLUMNS[type]} = '' where id = $1`, [userId]);
  await run(db, "delete from auth.one_time_tokens where user_id = $1 and token_type = $2", [
    userId,
    type,
  ]);
}

export function stripPkce(hash: string): string {
  return hash.startsWith(PKCE_PREFIX) ? hash.slice(PKCE_PREFIX.length) : hash;
}

/**
 * verifyReauthentication: the nonce must match the last one sent to the user and be younger than
 * `otpExpirySeconds`; it is used up then.
 */
export async function consumeReauthenticationNonce(
  db: Db,
  user: UserRow,
  nonce: string,
  otpExpirySeconds: number,
): Promise<void> {
  const stored = user.reauthentication_token;
  const address = user.email || user.phone;
  if (!stored || !address || stripPkce(stored) !== tokenHash(address, nonce)) {
    throw authError("reauthenticationNotValid");
  }
  if (await sentTooLongAgo(db, user.id, "reauthentication_sent_at", otpExpirySeconds)) {
    throw authError("otpExpired");
  }
  await clearToken(db, user.id, "reauthentication_token");
}

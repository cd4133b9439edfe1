import { randomUUID } from "node:crypto";
import { authError } from "../errors.ts";
import { type Db, iso, many, one, run } from "./db.ts";
import { factorJson, factorsOf } from "./factors.ts";
import { createIdentity, type IdentityRow, identitiesOf, identityJson } from "./identities.ts";

/** A row of auth.users (the columns the local backend uses). */
export interface UserRow {
  id: string;
  aud: string;
  role: string;
  email: string | null;
  encrypted_password: string | null;
  email_confirmed_at: Date | null;
  invited_at: Date | null;
  confirmation_token: string;
  confirmation_sent_at: Date | null;
  recovery_token: string;
  recovery_sent_at: Date | null;
  email_change_token_new: string;
  email_change_token_current: string;
  email_change: string;
  email_change_sent_at: Date | null;
  email_change_confirm_status: number;
  reauthentication_token: string;
  reauthentication_sent_at: Date | null;
  last_sign_in_at: Date | null;
  raw_app_meta_data: Record<string, unknown>;
  raw_user_meta_data: Record<string, unknown>;
  phone: string | null;
  phone_confirmed_at: Date | null;
  phone_change: string;
  phone_change_token: string;
  phone_change_sent_at: Date | null;
  confirmed_at: Date | null;
  created_at: Date;
  updated_at: Date;
  banned_until: Date | null;
  deleted_at: Date | null;
  is_anonymous: boolean;
  is_sso_user: boolean;
}

export async function findUserById(db: Db, id: string): Promise<UserRow | undefined> {
  return one<UserRow>(db, "select * from auth.users where id = $1", [id]);
}

export async function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return one<UserRow>(
    db,
    "select * from auth.users where instance_id = '00000000-0000-0000-0000-000000000000' and lower(email) = lower($1) and is_sso_user = false",
    [email],
  );
}

export function isBanned(user: UserRow, now: Date): boolean {
  return user.banned_until !== null && user.banned_until > now;
}

/**
 * User.UpdatePassword: stores the new hash and, since whoever held the old password may have
 * started things, voids every emailed token (confirmation, recovery, email change, phone change,
 * reauthentication: the columns and auth.one_time_tokens) and ends every session except
 * `keepSessionId` (all of them without one, as for an admin's change).
 */
export async function updatePassword(
  db: Db,
  userId: string,
  encryptedPassword: string,
  keepSessionId: string | undefined,
): Promise<void> {
  await run(
    db,
    `update auth.users set encrypted_password = $2,
       confirmation_token = '', confirmation_sent_at = null,
       recovery_token = '', recovery_sent_at = null,
       email_change_token_current = '', email_change_token_new = '', email_change_sent_at = null,
       phone_change_token = '', phone_change_sent_at = null,
       reauthentication_token = '', reauthentication_sent_at = null,
       updated_at = now()
     where id = $1`,
    [userId, encryptedPassword],
  );
  await run(db, "delete from auth.one_time_tokens where user_id = $1", [userId]);
  // Deleting a session deletes its refresh tokens and AMR claims (foreign keys on cascade).
  await run(db, "delete from auth.sessions where user_id = $1 and id is distinct from $2", [
    userId,
    keepSessionId ?? null,
  ]);
  await run(db, "delete from auth.refresh_tokens where user_id = $1 and session_id is null", [
    userId,
  ]);
}

export interface NewUser {
  email?: string;
  phone?: string;
  encryptedPassword?: string | null;
  userMetadata?: Record<string, unknown>;
  appMetadata?: Record<string, unknown>;
  provider: string;
  isAnonymous?: boolean;
  confirmed?: boolean;
  id?: string;
  role?: string;
}

/** Inserts a user and its identity (email provider: identity data as the real service writes it). */
export async function createUser(db: Db, input: NewUser): Promise<UserRow> {
  const id = input.id ?? randomUUID();
  const providers = input.isAnonymous ? [] : [input.provider];
  const appMetadata = {
    ...(input.isAnonymous ? {} : { provider: input.provider, providers }),
    ...input.appMetadata,
  };
  const user = await one<UserRow>(
    db,
    `insert into auth.users (instance_id, id, aud, role, email, phone, encrypted_password,
       raw_app_meta_data, raw_user_meta_data, created_at, updated_at, is_anonymous, email_confirmed_at)
     values ('00000000-0000-0000-0000-000000000000', $1, 'authenticated', $8, $2, $3, $4, $5, $6,
       now(), now(), $7, case when $9::boolean then now() end)
     returning *`,
    [
      id,
      input.email ?? null,
      input.phone ?? null,
      input.encryptedPassword ?? null,
      JSON.stringify(appMetadata),
      JSON.stringify(input.userMetadata ?? {}),
      input.isAnonymous ?? false,
      input.role ?? "authenticated",
      input.confirmed ?? false,
    ],
  );
  if (!user) throw new Error("insert returned no row");
  if (input.email && !input.isAnonymous && input.provider === "email") {
    await createIdentity(db, user.id, "email", {
      ...(input.userMetadata ?? {}),
      sub: id,
      email: input.email,
      email_verified: input.confirmed ?? false,
      phone_verified: false,
    });
  }
  return user;
}

/** Marks the email confirmed (user and email identity), as User.Confirm does. */
export async function confirmEmail(db: Db, userId: string): Promise<void> {
  await run(
    db,
    `update auth.users set email_confirmed_at = coalesce(email_confirmed_at, now()),
       confirmation_token = '', updated_at = now() where id = $1`,
    [userId],
  );
  await run(
    db,
    `update auth.identities set identity_data = identity_data || '{"email_verified": true}'::jsonb,
       updated_at = now() where user_id = $1 and provider = 'email'`,
    [userId],
  );
}

export async function touchLastSignIn(db: Db, userId: string): Promise<void> {
  await run(db, "update auth.users set last_sign_in_at = now(), updated_at = now() where id = $1", [
    userId,
  ]);
}

/** The user object as the real service serializes it (models.User JSON). */
export async function userJson(db: Db, user: UserRow): Promise<Record<string, unknown>> {
  const [identities, factors] = await Promise.all([
    identitiesOf(db, user.id),
    factorsOf(db, user.id),
  ]);
  return {
    id: user.id,
    aud: user.aud,
    role: user.role,
    email: user.email ?? "",
    email_confirmed_at: iso(user.email_confirmed_at),
    invited_at: iso(user.invited_at),
    phone: user.phone ?? "",
    phone_confirmed_at: iso(user.phone_confirmed_at),
    confirmation_sent_at: iso(user.confirmation_sent_at),
    confirmed_at: iso(user.confirmed_at),
    recovery_sent_at: iso(user.recovery_sent_at),
    new_email: user.email_change || undefined,
    email_change_sent_at: iso(user.email_change_sent_at),
    new_phone: user.phone_change || undefined,
    phone_change_sent_at: iso(user.phone_change_sent_at),
    reauthentication_sent_at: iso(user.reauthentication_sent_at),
    last_sign_in_at: iso(user.last_sign_in_at),
    app_metadata: user.raw_app_meta_data ?? {},
    user_metadata: user.raw_user_meta_data ?? {},
    factors: factors.length ? factors.map(factorJson) : undefined,
    identities: identities.map(identityJson),
    created_at: iso(user.created_at),
    updated_at: iso(user.updated_at),
    banned_until: iso(user.banned_until),
    deleted_at: iso(user.deleted_at),
    is_anonymous: user.is_anonymous,
  };
}

/** The auth.users columns stamped when an email of a kind is sent (max_frequency, expiry). */
export type SentAtColumn =
  | "confirmation_sent_at"
  | "recovery_sent_at"
  | "email_change_sent_at"
  | "reauthentication_sent_at"
  | "phone_change_sent_at";

/** The user whose stored token in one of `columns` is `hash`. */
export async function findUserByTokenHash(
  db: Db,
  columns: ReadonlyArray<keyof UserRow>,
  hash: string,
): Promise<UserRow | undefined> {
  return one<UserRow>(db, tokenHashLookup(columns), [hash]);
}

/**
 * The search for a token's hash ($1) in `columns`, each narrowed as its unique index is (auth.sql:
 * the column's tokens, not its empty or all-digit values), so that Postgres finds the row by the
 * index instead of reading every user. (A hash is 56 hexadecimal digits: in practice never all
 * decimal ones.)
 */
export function tokenHashLookup(columns: ReadonlyArray<keyof UserRow>): string {
  const where = columns.map((c) => `(${c} = $1 and ${c}::text !~ '^[0-9 ]*$')`).join(" or ");
  return `select * from auth.users where ${where}`;
}

/** The user with `email` as their address or as the one they are changing to. */
export async function findUserByEmailOrNewEmail(
  db: Db,
  email: string,
): Promise<UserRow | undefined> {
  return one<UserRow>(
    db,
    "select * from auth.users where lower(email_change) = $1 or lower(email) = $1 limit 1",
    [email],
  );
}

/** Whether any user has `email` (lower-cased) as their address. */
export async function emailTaken(db: Db, email: string): Promise<boolean> {
  return (
    (await one(
      db,
      "select 1 from auth.users where instance_id = '00000000-0000-0000-0000-000000000000' and lower(email) = $1",
      [email],
    )) !== undefined
  );
}

export async function countUsers(db: Db): Promise<number> {
  return Number(
    (await one<{ n: number }>(db, "select count(*)::int as n from auth.users"))?.n ?? 0,
  );
}

/** A page of users, newest first. */
export async function listUsers(db: Db, limit: number, offset: number): Promise<UserRow[]> {
  return many<UserRow>(
    db,
    "select * from auth.users order by created_at desc, id limit $1 offset $2",
    [limit, offset],
  );
}

/** Whether the email stamped in `column` was sent more than `seconds` ago (or never). */
export async function sentTooLongAgo(
  db: Db,
  userId: string,
  column: SentAtColumn,
  seconds: number,
): Promise<boolean> {
  const row = await one<{ expired: boolean }>(
    db,
    `select coalesce(${column} + make_interval(secs => $2) < now(), true) as expired from auth.users where id = $1`,
    [userId, seconds],
  );
  return row?.expired === true;
}

/** Seconds left before another email of the kind stamped in `column` may go (≤ 0 or null: now). */
export async function secondsUntilCanSend(
  db: Db,
  userId: string,
  column: SentAtColumn,
  periodSeconds: number,
): Promise<number | null | undefined> {
  const row = await one<{ left: number | null }>(
    db,
    `select extract(epoch from (${column} + make_interval(secs => $2) - now()))::float8 as left
     from auth.users where id = $1`,
    [userId, periodSeconds],
  );
  return row?.left;
}

/** An email of the kind stamped in `column` went out now. */
export async function stampSent(db: Db, userId: string, column: SentAtColumn): Promise<void> {
  await run(db, `update auth.users set ${column} = now() where id = $1`, [userId]);
}

export async function markInvited(db: Db, userId: string): Promise<void> {
  await run(db, "update auth.users set invited_at = now() where id = $1", [userId]);
}

/** An email change to `newEmail` begins: nothing confirmed yet, no token for the current side. */
export async function startEmailChange(db: Db, userId: string, newEmail: string): Promise<void> {
  await run(
    db,
    `update auth.users set email_change = $2, email_change_sent_at = now(), email_change_confirm_status = 0,
       email_change_token_current = '', updated_at = now() where id = $1`,
    [userId, newEmail],
  );
  await run(
    db,
    "delete from auth.one_time_tokens where user_id = $1 and token_type = 'email_change_token_current'",
    [userId],
  );
}

/** One of the two addresses of a double-confirmed email change has confirmed. */
export async function markEmailChangeHalfConfirmed(db: Db, userId: string): Promise<void> {
  await run(db, "update auth.users set email_change_confirm_status = 1 where id = $1", [userId]);
}

/** The pending email change takes effect: the new address is the user's, confirmed. */
export async function applyEmailChange(db: Db, userId: string): Promise<void> {
  await run(
    db,
    `update auth.users set email = email_change, email_change = '', email_change_sent_at = null,
       email_change_token_new = '', email_change_token_current = '', email_change_confirm_status = 0,
       email_confirmed_at = coalesce(email_confirmed_at, now()), updated_at = now() where id = $1`,
    [userId],
  );
  await run(
    db,
    "delete from auth.one_time_tokens where user_id = $1 and token_type::text like 'email_change%'",
    [userId],
  );
}

/** The address changes at once, confirmed (no confirmation emails: autoconfirm). */
export async function changeEmailConfirmed(db: Db, userId: string, email: string): Promise<void> {
  await run(
    db,
    `update auth.users set email = $2, email_change = '', email_confirmed_at = coalesce(email_confirmed_at, now()),
       updated_at = now() where id = $1`,
    [userId, email],
  );
}

/** The user's address becomes `email` (nothing else changes). */
export async function setEmail(db: Db, userId: string, email: string): Promise<void> {
  await run(db, "update auth.users set email = $2, updated_at = now() where id = $1", [
    userId,
    email,
  ]);
}

/**
 * UpdateUserEmailFromIdentities: when no identity has the user's address any more, the user takes
 * the best remaining one (verified first, then unverified, oldest first) that nobody else has.
 * With confirmations off (`autoconfirm`) any remaining address counts as confirmed.
 */
export async function updateEmailFromIdentities(
  db: Db,
  user: UserRow,
  autoconfirm: boolean,
): Promise<void> {
  const rest = await many<IdentityRow>(
    db,
    "select * from auth.identities where user_id = $1 order by created_at, id",
    [user.id],
  );
  const current = (user.email ?? "").toLowerCase();
  if (rest.some((i) => (i.email ?? "") === current)) return;
  const rank = (i: IdentityRow) => (!i.email ? 2 : i.identity_data.email_verified ? 0 : 1);
  const ordered = [...rest].sort((a, b) => rank(a) - rank(b));
  for (const candidate of ordered) {
    const email = candidate.email ?? "";
    const taken =
      email !== "" &&
      (await one(
        db,
        "select 1 from auth.users where instance_id = '00000000-0000-0000-0000-000000000000' and lower(email) = $1 and id <> $2",
        [email, user.id],
      ));
    if (taken) continue;
    const confirmed =
      email !== "" && (candidate.identity_data.email_verified === true || autoconfirm);
    // Every pending token and change was issued for the address before: none may be used once
    // the email changes hands (upstream's ClearAllPendingTokens, since v2.195). An address the
    // provider did not verify, outside autoconfirm, is not confirmed (and the metadata says so);
    // a confirmed one keeps the confirmation it had.
    await run(
      db,
      `update auth.users set email = nullif($2, ''),
         email_confirmed_at = case when $3::boolean then email_confirmed_at end,
         raw_user_meta_data = case when $3::boolean then raw_user_meta_data
           else coalesce(raw_user_meta_data, '{}') || '{"email_verified": false}' end,
         confirmation_token = '', confirmation_sent_at = null,
         recovery_token = '', recovery_sent_at = null,
         email_change = '', email_change_token_current = '', email_change_token_new = '',
         email_change_sent_at = null, email_change_confirm_status = 0,
         phone_change = '', phone_change_token = '', phone_change_sent_at = null,
         reauthentication_token = '', reauthentication_sent_at = null,
         updated_at = now() where id = $1`,
      [user.id, email, confirmed],
    );
    await run(db, "delete from auth.one_time_tokens where user_id = $1", [user.id]);
    return;
  }
  throw authError("emailConflictIdentity");
}

/** UpdateUserMetaData: keys merged into user_metadata; a null value removes the key. */
export async function updateUserMetadata(
  db: Db,
  userId: string,
  data: Record<string, unknown>,
): Promise<void> {
  await run(
    db,
    `update auth.users set raw_user_meta_data = jsonb_strip_nulls(coalesce(raw_user_meta_data, '{}') || $2::jsonb),
       updated_at = now() where id = $1`,
    [userId, JSON.stringify(data)],
  );
}

/** An identity's data merged into user_metadata as it is (a sign-in through a provider). */
export async function mergeIdentityMetadata(
  db: Db,
  userId: string,
  data: Record<string, unknown>,
): Promise<void> {
  await run(
    db,
    `update auth.users set raw_user_meta_data = coalesce(raw_user_meta_data, '{}') || $2::jsonb,
       updated_at = now() where id = $1`,
    [userId, JSON.stringify(data)],
  );
}

/** Keys merged into app_metadata (admin only); a null value removes the key. */
export async function updateAppMetadata(
  db: Db,
  userId: string,
  data: Record<string, unknown>,
): Promise<void> {
  await run(
    db,
    "update auth.users set raw_app_meta_data = jsonb_strip_nulls(coalesce(raw_app_meta_data, '{}') || $2::jsonb) where id = $1",
    [userId, JSON.stringify(data)],
  );
}

export async function setRole(db: Db, userId: string, role: string): Promise<void> {
  await run(db, "update auth.users set role = $2 where id = $1", [userId, role]);
}

export async function touchUpdatedAt(db: Db, userId: string): Promise<void> {
  await run(db, "update auth.users set updated_at = now() where id = $1", [userId]);
}

/** A ban until `until` (null lifts it); a banned user's sessions end. */
/**
 * User.Ban: only banned_until changes. The user's sessions stay, as upstream's: every use of them
 * is refused while the ban lasts (requireUser's and a refresh's user_banned), and they work again
 * once it is lifted.
 */
export async function setBan(db: Db, userId: string, until: Date | null): Promise<void> {
  await run(db, "update auth.users set banned_until = $2 where id = $1", [userId, until]);
}

/** An anonymous user who gained an address is a permanent user. */
export async function markPermanent(db: Db, userId: string): Promise<void> {
  await run(db, "update auth.users set is_anonymous = false where id = $1", [userId]);
}

/**
 * RemoveUnconfirmedIdentities: an unconfirmed account taken over by a verified identity keeps
 * only that identity, loses its password, and its metadata becomes the identity's data.
 */
export async function removeUnconfirmedIdentities(
  db: Db,
  userId: string,
  keepIdentityId: string,
  metadata: Record<string, unknown>,
): Promise<void> {
  await run(db, "update auth.users set encrypted_password = null where id = $1", [userId]);
  await run(db, "update auth.users set raw_user_meta_data = $2 where id = $1", [
    userId,
    JSON.stringify(metadata),
  ]);
  await run(db, "delete from auth.identities where user_id = $1 and id <> $2", [
    userId,
    keepIdentityId,
  ]);
}

/** Soft delete: the row stays, with nothing that identifies or signs in the user. */
export async function softDeleteUser(db: Db, userId: string): Promise<void> {
  await run(
    db,
    `update auth.users set deleted_at = now(), email = null, phone = null, encrypted_password = '',
       raw_app_meta_data = '{}', raw_user_meta_data = '{}', updated_at = now() where id = $1`,
    [userId],
  );
  await run(db, "delete from auth.identities where user_id = $1", [userId]);
  await run(db, "delete from auth.mfa_factors where user_id = $1", [userId]);
  // Its passkeys too: a soft-deleted account must not sign in again.
  await run(db, "delete from auth.webauthn_credentials where user_id = $1", [userId]);
  await run(db, "delete from auth.sessions where user_id = $1", [userId]);
}

/** Deletes the user and, by foreign keys, everything of theirs. */
export async function deleteUser(db: Db, userId: string): Promise<void> {
  await run(db, "delete from auth.users where id = $1", [userId]);
}

/** The user with this phone number (digits only, as stored). */
export async function findUserByPhone(db: Db, phone: string): Promise<UserRow | undefined> {
  return one<UserRow>(db, "select * from auth.users where phone = $1 and is_sso_user = false", [
    phone,
  ]);
}

/** The user changing their number to `phone`. */
export async function findUserByPhoneChange(db: Db, phone: string): Promise<UserRow | undefined> {
  return one<UserRow>(
    db,
    "select * from auth.users where phone_change = $1 and is_sso_user = false",
    [phone],
  );
}

/** ConfirmPhone: the number is confirmed; the code and every one-time token are used up. */
export async function confirmPhone(db: Db, userId: string): Promise<void> {
  await run(
    db,
    `update auth.users set confirmation_token = '', phone_confirmed_at = now(), updated_at = now()
     where id = $1`,
    [userId],
  );
  await run(db, "delete from auth.one_time_tokens where user_id = $1", [userId]);
}

/** A change of number to `phone` waits for its code (sendPhoneConfirmation, phone_change). */
export async function startPhoneChange(db: Db, userId: string, phone: string): Promise<void> {
  await run(db, "update auth.users set phone_change = $2 where id = $1", [userId, phone]);
}

/** ConfirmPhoneChange: the pending number becomes the user's, confirmed. */
export async function applyPhoneChange(db: Db, userId: string): Promise<void> {
  await run(
    db,
    `update auth.users set phone = phone_change, phone_change = '', phone_change_token = '',
       phone_confirmed_at = now(), updated_at = now() where id = $1`,
    [userId],
  );
  await run(db, "delete from auth.one_time_tokens where user_id = $1", [userId]);
}

/** The user's number becomes `phone` (admin; nothing else changes). */
export async function setPhone(db: Db, userId: string, phone: string): Promise<void> {
  await run(db, "update auth.users set phone = $2, updated_at = now() where id = $1", [
    userId,
    phone,
  ]);
}

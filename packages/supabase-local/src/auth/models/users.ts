import { randomUUID } from "node:crypto";
import type { Db } from "./db.ts";
import { many, one, run } from "./db.ts";

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
  confirmed_at: Date | null;
  created_at: Date;
  updated_at: Date;
  banned_until: Date | null;
  deleted_at: Date | null;
  is_anonymous: boolean;
  is_sso_user: boolean;
}

export interface IdentityRow {
  id: string;
  provider_id: string;
  user_id: string;
  identity_data: Record<string, unknown>;
  provider: string;
  last_sign_in_at: Date | null;
  created_at: Date;
  updated_at: Date;
  email: string | null;
}

export interface FactorRow {
  id: string;
  user_id: string;
  friendly_name: string | null;
  factor_type: string;
  status: string;
  created_at: Date;
  updated_at: Date;
  phone: string | null;
  last_challenged_at: Date | null;
}

export async function findUserById(db: Db, id: string): Promise<UserRow | undefined> {
  return one<UserRow>(db, "select * from auth.users where id = $1", [id]);
}

export async function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return one<UserRow>(
    db,
    "select * from auth.users where lower(email) = lower($1) and is_sso_user = false",
    [email],
  );
}

export function isBanned(user: UserRow, now: Date): boolean {
  return user.banned_until !== null && user.banned_until > now;
}

/** User.HasMFAEnabled: the user has a verified factor. */
export async function hasVerifiedFactor(db: Db, userId: string): Promise<boolean> {
  const row = await one(
    db,
    "select 1 from auth.mfa_factors where user_id = $1 and status = 'verified' limit 1",
    [userId],
  );
  return row !== undefined;
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
    await createIdentity(db, user, "email", {
      ...(input.userMetadata ?? {}),
      sub: id,
      email: input.email,
      email_verified: input.confirmed ?? false,
      phone_verified: false,
    });
  }
  return user;
}

export async function createIdentity(
  db: Db,
  user: UserRow,
  provider: string,
  data: Record<string, unknown>,
): Promise<IdentityRow> {
  const providerId = String(data.sub ?? user.id);
  const row = await one<IdentityRow>(
    db,
    `insert into auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at)
     values ($1, $2, $3, $4, now(), now(), now()) returning *`,
    [providerId, user.id, JSON.stringify(data), provider],
  );
  if (!row) throw new Error("insert returned no row");
  return row;
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

const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : undefined);

/** The user object as the real service serializes it (models.User JSON). */
export async function userJson(db: Db, user: UserRow): Promise<Record<string, unknown>> {
  const [identities, factors] = await Promise.all([
    many<IdentityRow>(db, "select * from auth.identities where user_id = $1 order by created_at", [
      user.id,
    ]),
    many<FactorRow>(db, "select * from auth.mfa_factors where user_id = $1 order by created_at", [
      user.id,
    ]),
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

export function identityJson(identity: IdentityRow): Record<string, unknown> {
  return {
    identity_id: identity.id,
    id: identity.provider_id,
    user_id: identity.user_id,
    identity_data: identity.identity_data,
    provider: identity.provider,
    last_sign_in_at: iso(identity.last_sign_in_at),
    created_at: iso(identity.created_at),
    updated_at: iso(identity.updated_at),
    email: identity.email ?? undefined,
  };
}

export function factorJson(factor: FactorRow): Record<string, unknown> {
  return {
    id: factor.id,
    friendly_name: factor.friendly_name ?? undefined,
    factor_type: factor.factor_type,
    status: factor.status,
    created_at: iso(factor.created_at),
    updated_at: iso(factor.updated_at),
    last_challenged_at: iso(factor.last_challenged_at),
  };
}

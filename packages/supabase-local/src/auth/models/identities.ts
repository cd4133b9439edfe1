import { type Db, iso, many, one, run } from "./db.ts";

/** A row of auth.identities: one per provider account of a user (email included). */
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

/** A new identity of the user: `data.sub` is the provider's id for the account (the user's id by default). */
export async function createIdentity(
  db: Db,
  userId: string,
  provider: string,
  data: Record<string, unknown>,
): Promise<IdentityRow> {
  const providerId = String(data.sub ?? userId);
  const row = await one<IdentityRow>(
    db,
    `insert into auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at)
     values ($1, $2, $3, $4, now(), now(), now()) returning *`,
    [providerId, userId, JSON.stringify(data), provider],
  );
  if (!row) throw new Error("insert returned no row");
  return row;
}

/** The user's identities, oldest first (as the user JSON lists them). */
export async function identitiesOf(db: Db, userId: string): Promise<IdentityRow[]> {
  return many<IdentityRow>(
    db,
    "select * from auth.identities where user_id = $1 order by created_at",
    [userId],
  );
}

/** The user's identities in no particular order. */
export async function listIdentities(db: Db, userId: string): Promise<IdentityRow[]> {
  return many<IdentityRow>(db, "select * from auth.identities where user_id = $1", [userId]);
}

/** The identity of a provider account (provider + its id for the account), if any. */
export async function findIdentityByProvider(
  db: Db,
  providerId: string,
  provider: string,
): Promise<{ id: string; user_id: string } | undefined> {
  return one<{ id: string; user_id: string }>(
    db,
    "select id, user_id from auth.identities where provider_id = $1 and provider = $2",
    [providerId, provider],
  );
}

/** A sign-in through the identity: its data as the provider sent it this time. */
export async function refreshIdentity(
  db: Db,
  identityId: string,
  data: Record<string, unknown>,
): Promise<void> {
  await run(
    db,
    "update auth.identities set identity_data = $2, last_sign_in_at = now(), updated_at = now() where id = $1",
    [identityId, JSON.stringify(data)],
  );
}

export async function deleteIdentityRow(db: Db, identityId: string): Promise<void> {
  await run(db, "delete from auth.identities where id = $1", [identityId]);
}

/** Users whose own address or an identity's address is `email` (the default linking domain). */
export async function linkingCandidates(db: Db, email: string): Promise<string[]> {
  const identities = await many<{ user_id: string }>(
    db,
    "select distinct user_id from auth.identities where email = $1",
    [email],
  );
  if (identities.length > 0) return identities.map((i) => i.user_id);
  const users = await many<{ id: string }>(
    db,
    "select id from auth.users where instance_id = '00000000-0000-0000-0000-000000000000' and lower(email) = $1 and is_sso_user = false",
    [email],
  );
  return users.map((u) => u.id);
}

/** The email identity follows the user's address (created for anonymous users adding one). */
export async function upsertEmailIdentity(db: Db, userId: string, email: string): Promise<void> {
  const existing = await one(
    db,
    "select 1 from auth.identities where user_id = $1 and provider = 'email'",
    [userId],
  );
  if (existing) {
    await run(
      db,
      `update auth.identities set identity_data = identity_data || jsonb_build_object('email', $2::text, 'email_verified', true),
         updated_at = now() where user_id = $1 and provider = 'email'`,
      [userId, email],
    );
    return;
  }
  await run(
    db,
    `insert into auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at)
     values ($1, $3, jsonb_build_object('sub', $1::text, 'email', $2::text, 'email_verified', true, 'phone_verified', false),
       'email', now(), now(), now())`,
    [userId, email, userId],
  );
  await run(
    db,
    `update auth.users set is_anonymous = false,
       raw_app_meta_data = coalesce(raw_app_meta_data, '{}') || '{"provider": "email", "providers": ["email"]}'::jsonb
     where id = $1`,
    [userId],
  );
}

/**
 * The phone identity gets `fields` merged into its data (phone, phone_verified), or is created with
 * them (provider_id = the user's id, as createNewIdentity with provider.Claims does).
 */
export async function upsertPhoneIdentity(
  db: Db,
  userId: string,
  fields: Record<string, unknown>,
): Promise<void> {
  const existing = await one(
    db,
    "select 1 from auth.identities where user_id = $1 and provider = 'phone'",
    [userId],
  );
  if (existing) {
    await run(
      db,
      `update auth.identities set identity_data = identity_data || $2::jsonb, updated_at = now()
       where user_id = $1 and provider = 'phone'`,
      [userId, JSON.stringify(fields)],
    );
    return;
  }
  await createIdentity(db, userId, "phone", {
    sub: userId,
    email_verified: false,
    phone_verified: false,
    ...fields,
  });
}

/** UpdateAppMetaDataProviders: providers of the identities, oldest first; provider = the first. */
export async function updateProviders(db: Db, userId: string): Promise<void> {
  const rows = await many<{ provider: string }>(
    db,
    "select provider from auth.identities where user_id = $1 order by created_at, provider",
    [userId],
  );
  const providers = [...new Set(rows.map((r) => r.provider))];
  const payload: Record<string, unknown> = { providers };
  if (providers.length > 0) payload.provider = providers[0];
  await run(
    db,
    `update auth.users set raw_app_meta_data = coalesce(raw_app_meta_data, '{}') || $2::jsonb,
       updated_at = now() where id = $1`,
    [userId, JSON.stringify(payload)],
  );
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

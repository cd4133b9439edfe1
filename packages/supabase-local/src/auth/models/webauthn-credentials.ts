import { type Db, iso, many, one, run } from "./db.ts";

/** A row of auth.webauthn_credentials: one passkey of a user. */
export interface PasskeyRow {
  id: string;
  user_id: string;
  credential_id: Uint8Array;
  public_key: Uint8Array;
  attestation_type: string;
  aaguid: string | null;
  sign_count: string | number;
  transports: string[];
  backup_eligible: boolean;
  backed_up: boolean;
  friendly_name: string;
  created_at: Date;
  updated_at: Date;
  last_used_at: Date | null;
}

export interface NewPasskey {
  userId: string;
  credentialId: Uint8Array;
  publicKey: Uint8Array;
  attestationType: string;
  aaguid: string | null;
  signCount: number;
  transports: string[];
  backupEligible: boolean;
  backedUp: boolean;
  friendlyName: string;
}

export async function countPasskeys(db: Db, userId: string): Promise<number> {
  const row = await one<{ n: number }>(
    db,
    "select count(*)::int as n from auth.webauthn_credentials where user_id = $1",
    [userId],
  );
  return row?.n ?? 0;
}

/** The user's passkeys, oldest first. */
export async function passkeysOf(db: Db, userId: string): Promise<PasskeyRow[]> {
  return many<PasskeyRow>(
    db,
    "select * from auth.webauthn_credentials where user_id = $1 order by created_at, id",
    [userId],
  );
}

export async function findPasskeyByCredentialId(
  db: Db,
  credentialId: Uint8Array,
): Promise<PasskeyRow | undefined> {
  return one<PasskeyRow>(db, "select * from auth.webauthn_credentials where credential_id = $1", [
    credentialId,
  ]);
}

/** The passkey `id` of the user, if it is theirs. */
export async function findPasskey(
  db: Db,
  id: string,
  userId: string,
): Promise<PasskeyRow | undefined> {
  return one<PasskeyRow>(
    db,
    "select * from auth.webauthn_credentials where id = $1 and user_id = $2",
    [id, userId],
  );
}

/** Stores a new passkey; undefined when its credential id is registered already. */
export async function insertPasskey(db: Db, passkey: NewPasskey): Promise<PasskeyRow | undefined> {
  return one<PasskeyRow>(
    db,
    `insert into auth.webauthn_credentials (user_id, credential_id, public_key, attestation_type,
       aaguid, sign_count, transports, backup_eligible, backed_up, friendly_name)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     on conflict (credential_id) do nothing
     returning *`,
    [
      passkey.userId,
      passkey.credentialId,
      passkey.publicKey,
      passkey.attestationType,
      passkey.aaguid,
      passkey.signCount,
      JSON.stringify(passkey.transports),
      passkey.backupEligible,
      passkey.backedUp,
      passkey.friendlyName,
    ],
  );
}

/** UpdateLastUsedWithSignCount: a sign-in with the passkey. */
export async function markPasskeyUsed(db: Db, id: string, signCount: number): Promise<void> {
  await run(
    db,
    `update auth.webauthn_credentials set sign_count = $2, last_used_at = now(), updated_at = now()
     where id = $1`,
    [id, signCount],
  );
}

export async function renamePasskey(
  db: Db,
  id: string,
  friendlyName: string,
): Promise<PasskeyRow | undefined> {
  return one<PasskeyRow>(
    db,
    `update auth.webauthn_credentials set friendly_name = $2, updated_at = now() where id = $1
     returning *`,
    [id, friendlyName],
  );
}

export async function deletePasskey(db: Db, id: string): Promise<void> {
  await run(db, "delete from auth.webauthn_credentials where id = $1", [id]);
}

/** PasskeyMetadataResponse: what registration answers for the new passkey. */
export function passkeyMetadataJson(row: PasskeyRow): Record<string, unknown> {
  return {
    id: row.id,
    friendly_name: row.friendly_name || undefined,
    created_at: iso(row.created_at),
  };
}

/** PasskeyListItem: what the list, rename and admin endpoints answer for a passkey. */
export function passkeyJson(row: PasskeyRow): Record<string, unknown> {
  return {
    id: row.id,
    friendly_name: row.friendly_name || undefined,
    created_at: iso(row.created_at),
    last_used_at: iso(row.last_used_at),
  };
}

import { randomUUID } from "node:crypto";
import { type Db, run } from "./db.ts";
import type { UserRow } from "./users.ts";

/** Writes an auth.audit_log_entries row with the payload shape of the real service; `ip` is the
 * client's address. */
export async function audit(
  db: Db,
  ip: string,
  actor: Pick<UserRow, "id" | "email" | "phone" | "raw_user_meta_data"> | null,
  action: string,
  traits: Record<string, unknown> = {},
): Promise<void> {
  const payload = {
    action,
    actor_id: actor?.id ?? "",
    actor_username: actor?.email || actor?.phone || "",
    actor_via_sso: false,
    log_type: logType(action),
    ...(Object.keys(traits).length ? { traits } : {}),
  };
  await run(
    db,
    `insert into auth.audit_log_entries (instance_id, id, payload, created_at, ip_address)
     values ('00000000-0000-0000-0000-000000000000', $1, $2, now(), $3)`,
    [randomUUID(), JSON.stringify(payload), ip],
  );
}

/** ActionLogTypeMap of the real service. */
const LOG_TYPES: Record<string, string> = {
  login: "account",
  logout: "account",
  invite_accepted: "account",
  user_signedup: "team",
  user_invited: "team",
  user_deleted: "team",
  token_revoked: "token",
  token_refreshed: "token",
  user_modified: "user",
  user_recovery_requested: "user",
  user_reauthenticate_requested: "user",
  user_confirmation_requested: "user",
  user_repeated_signup: "user",
  user_updated_password: "user",
  identity_linked: "user",
  identity_unlinked: "user",
  factor_in_progress: "factor",
  factor_unenrolled: "factor",
  challenge_created: "factor",
  verification_attempted: "factor",
  factor_deleted: "factor",
  factor_updated: "factor",
  passkey_created: "user",
  passkey_updated: "user",
  passkey_deleted: "user",
  recovery_codes_generated: "factor",
  recovery_codes_regenerated: "factor",
  recovery_codes_verified: "factor",
  recovery_codes_deleted: "factor",
};

function logType(action: string): string {
  return LOG_TYPES[action] ?? "user";
}

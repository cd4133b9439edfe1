import { randomUUID } from "node:crypto";
import { type Db, many, one, run } from "./db.ts";

/** A row of auth.mfa_recovery_code_sets (one per user, tied to its recovery_code factor), with
 * whether verification is locked now and whether a past lock has run out. */
export interface RecoveryCodeSetRow {
  id: string;
  user_id: string;
  mfa_factor_id: string;
  failed_verification_count: number;
  locked: boolean;
  lock_expired: boolean;
}

/** One unused code of a set (auth.mfa_recovery_codes): only its hash is kept. */
export interface RecoveryCodeRow {
  id: string;
  code_hash: string;
}

const SET_COLUMNS = `id, user_id, mfa_factor_id, failed_verification_count,
  coalesce(verification_locked_until > now(), false) as locked,
  coalesce(verification_locked_until <= now(), false) as lock_expired`;

export async function findRecoveryCodeSet(
  db: Db,
  userId: string,
): Promise<RecoveryCodeSetRow | undefined> {
  return one<RecoveryCodeSetRow>(
    db,
    `select ${SET_COLUMNS} from auth.mfa_recovery_code_sets where user_id = $1`,
    [userId],
  );
}

/** FindRecoveryCodeSetForUpdate: the user's set, locked until the transaction ends. */
export async function lockRecoveryCodeSet(
  db: Db,
  userId: string,
): Promise<RecoveryCodeSetRow | undefined> {
  return one<RecoveryCodeSetRow>(
    db,
    `select ${SET_COLUMNS} from auth.mfa_recovery_code_sets where user_id = $1 for update`,
    [userId],
  );
}

/** A new set for the factor, one row per code hash. */
export async function createRecoveryCodeSet(
  db: Db,
  factor: { id: string; userId: string },
  hashes: string[],
): Promise<void> {
  const setId = randomUUID();
  await run(
    db,
    `insert into auth.mfa_recovery_code_sets (id, user_id, mfa_factor_id) values ($1, $2, $3)`,
    [setId, factor.userId, factor.id],
  );
  await insertCodes(db, setId, hashes);
}

/** ReplaceRecoveryCodes: the old codes go, the new ones come, and any lockout is lifted. */
export async function replaceRecoveryCodes(db: Db, setId: string, hashes: string[]) {
  await run(db, "delete from auth.mfa_recovery_codes where mfa_recovery_code_set_id = $1", [setId]);
  await insertCodes(db, setId, hashes);
  await resetRecoveryCodeLockout(db, setId);
}

async function insertCodes(db: Db, setId: string, hashes: string[]): Promise<void> {
  for (const hash of hashes) {
    await run(
      db,
      `insert into auth.mfa_recovery_codes (id, mfa_recovery_code_set_id, code_hash)
       values ($1, $2, $3)`,
      [randomUUID(), setId, hash],
    );
  }
}

export async function countRecoveryCodes(
  db: Db,
  setId: string,
): Promise<{ total: number; remaining: number }> {
  const row = await one<{ total: number; remaining: number }>(
    db,
    `select count(*)::int as total, (count(*) filter (where consumed_at is null))::int as remaining
     from auth.mfa_recovery_codes where mfa_recovery_code_set_id = $1`,
    [setId],
  );
  return row ?? { total: 0, remaining: 0 };
}

export async function unusedRecoveryCodes(db: Db, setId: string): Promise<RecoveryCodeRow[]> {
  return many<RecoveryCodeRow>(
    db,
    `select id, code_hash from auth.mfa_recovery_codes
     where mfa_recovery_code_set_id = $1 and consumed_at is null order by created_at, id`,
    [setId],
  );
}

/** MarkConsumed: false when the code was used meanwhile (it counts as a wrong one). */
export async function consumeRecoveryCode(db: Db, id: string): Promise<boolean> {
  const n = await run(
    db,
    "update auth.mfa_recovery_codes set consumed_at = now() where id = $1 and consumed_at is null",
    [id],
  );
  return n > 0;
}

/** RegisterFailure: one more failed attempt; at `maxAttempts` verification locks for a while. */
export async function registerRecoveryCodeFailure(
  db: Db,
  setId: string,
  maxAttempts: number,
  lockoutSeconds: number,
): Promise<void> {
  await run(
    db,
    `update auth.mfa_recovery_code_sets set
       failed_verification_count = failed_verification_count + 1,
       verification_locked_until = case when failed_verification_count + 1 >= $2
         then now() + make_interval(secs => $3) else verification_locked_until end,
       updated_at = now()
     where id = $1`,
    [setId, maxAttempts, lockoutSeconds],
  );
}

export async function resetRecoveryCodeLockout(db: Db, setId: string): Promise<void> {
  await run(
    db,
    `update auth.mfa_recovery_code_sets set failed_verification_count = 0,
       verification_locked_until = null, updated_at = now() where id = $1`,
    [setId],
  );
}

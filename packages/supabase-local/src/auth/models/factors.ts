import { type Db, iso, many, one, run } from "./db.ts";

/** A row of auth.mfa_factors (without the secret). */
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

/** A factor as stored, with its TOTP secret and WebAuthn credential (never serialized). */
export interface FactorWithSecret extends FactorRow {
  secret: string | null;
  web_authn_credential: WebAuthnFactorCredential | null;
}

/** mfa_factors.web_authn_credential: go-webauthn's Credential as the real service stores it
 * (byte fields in standard base64). */
export interface WebAuthnFactorCredential {
  id: string;
  publicKey: string;
  attestationType: string;
  transport: string[];
  flags: {
    userPresent: boolean;
    userVerified: boolean;
    backupEligible: boolean;
    backupState: boolean;
  };
  authenticator: { AAGUID: string; signCount: number; cloneWarning: boolean; attachment: string };
}

/** The AMR method a factor's verification records (amrMethodForFactorType). */
export function amrMethodOf(factorType: string): string {
  if (factorType === "totp") return "totp";
  return `mfa/${factorType}`;
}

/** A row of auth.mfa_challenges, with whether it has outlived its expiry. */
export interface ChallengeRow {
  id: string;
  verified_at: Date | null;
  /** host(ip_address): the address the challenge was created from. */
  ip_address: string;
  expired: boolean;
  /** A WebAuthn challenge's ceremony (the options' challenge, RP ID, user handle). */
  web_authn_session_data: Record<string, unknown> | null;
  /** A phone challenge's code (and, once verified, the code that verified a TOTP challenge). */
  otp_code: string | null;
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

/** The user's factors, oldest first. */
export async function factorsOf(db: Db, userId: string): Promise<FactorRow[]> {
  return many<FactorRow>(
    db,
    "select * from auth.mfa_factors where user_id = $1 order by created_at",
    [userId],
  );
}

/** The factor `id` of the user, if it is theirs. */
export async function findFactor(
  db: Db,
  id: string,
  userId: string,
): Promise<FactorWithSecret | undefined> {
  return one<FactorWithSecret>(
    db,
    "select * from auth.mfa_factors where id = $1 and user_id = $2",
    [id, userId],
  );
}

/** A new, unverified TOTP factor. */
export async function insertTotpFactor(
  db: Db,
  factor: { id: string; userId: string; friendlyName: string; secret: string },
): Promise<void> {
  await run(
    db,
    `insert into auth.mfa_factors (id, user_id, friendly_name, factor_type, status, created_at, updated_at, secret)
     values ($1, $2, $3, 'totp', 'unverified', now(), now(), $4)`,
    [factor.id, factor.userId, factor.friendlyName, factor.secret],
  );
}

/** A new, unverified phone factor for `phone` (digits, as validatePhone leaves them). */
export async function insertPhoneFactor(
  db: Db,
  factor: { id: string; userId: string; friendlyName: string; phone: string },
): Promise<void> {
  await run(
    db,
    `insert into auth.mfa_factors (id, user_id, friendly_name, factor_type, status, created_at, updated_at, phone)
     values ($1, $2, $3, 'phone', 'unverified', now(), now(), $4)`,
    [factor.id, factor.userId, factor.friendlyName, factor.phone],
  );
}

/** The user's unverified phone factors for `phone` go: enrolling the number again replaces them. */
export async function deleteUnverifiedPhoneFactors(
  db: Db,
  userId: string,
  phone: string,
): Promise<void> {
  await run(
    db,
    `delete from auth.mfa_factors
     where user_id = $1 and factor_type = 'phone' and status = 'unverified' and phone = $2`,
    [userId, phone],
  );
}

/** A new factor of another type: an unverified WebAuthn factor, or a recovery-code factor, which
 * is verified from the start (there is nothing to challenge). */
export async function insertFactor(
  db: Db,
  factor: {
    id: string;
    userId: string;
    friendlyName: string;
    type: "webauthn" | "recovery_code";
    status: "unverified" | "verified";
  },
): Promise<void> {
  await run(
    db,
    `insert into auth.mfa_factors (id, user_id, friendly_name, factor_type, status, created_at, updated_at)
     values ($1, $2, $3, $4, $5, now(), now())`,
    [factor.id, factor.userId, factor.friendlyName, factor.type, factor.status],
  );
}

/** The user's verified WebAuthn factors' credentials (User.WebAuthnCredentials). */
export async function webAuthnCredentialsOf(
  db: Db,
  userId: string,
): Promise<Array<{ factor_id: string; credential: WebAuthnFactorCredential }>> {
  return many(
    db,
    `select id as factor_id, web_authn_credential as credential from auth.mfa_factors
     where user_id = $1 and factor_type = 'webauthn' and status = 'verified'
       and web_authn_credential is not null
     order by created_at`,
    [userId],
  );
}

/** SaveWebAuthnCredential: the credential a WebAuthn factor was registered with. */
export async function saveWebAuthnCredential(
  db: Db,
  factorId: string,
  credential: WebAuthnFactorCredential,
  aaguid: string | null,
): Promise<void> {
  await run(
    db,
    `update auth.mfa_factors set web_authn_credential = $2, web_authn_aaguid = $3, updated_at = now()
     where id = $1`,
    [factorId, JSON.stringify(credential), aaguid],
  );
}

/** A sign-in with the factor's credential: its counter moves on (a replay would not pass). */
export async function updateWebAuthnSignCount(
  db: Db,
  factorId: string,
  signCount: number,
): Promise<void> {
  await run(
    db,
    `update auth.mfa_factors set web_authn_credential =
       jsonb_set(web_authn_credential, '{authenticator,signCount}', to_jsonb($2::bigint))
     where id = $1`,
    [factorId, signCount],
  );
}

/** UpdateLastWebAuthnChallenge: what the last ceremony of the factor was. */
export async function updateLastWebAuthnChallenge(
  db: Db,
  factorId: string,
  data: Record<string, unknown>,
): Promise<void> {
  await run(
    db,
    "update auth.mfa_factors set last_webauthn_challenge_data = $2, updated_at = now() where id = $1",
    [factorId, JSON.stringify(data)],
  );
}

/** DeleteUnverifiedFactors: what is left of enrollments of this type never finished. */
export async function deleteUnverifiedFactors(
  db: Db,
  userId: string,
  factorType: "totp" | "phone" | "webauthn",
): Promise<void> {
  await run(
    db,
    "delete from auth.mfa_factors where user_id = $1 and status = 'unverified' and factor_type = $2",
    [userId, factorType],
  );
}

/** Unverified factors older than `expirySeconds` go (DeleteExpiredFactors). */
export async function deleteExpiredUnverifiedFactors(
  db: Db,
  userId: string,
  expirySeconds: number,
): Promise<void> {
  await run(
    db,
    `delete from auth.mfa_factors where user_id = $1 and status = 'unverified'
       and created_at + make_interval(secs => $2) < now()`,
    [userId, expirySeconds],
  );
}

export async function markFactorVerified(db: Db, factorId: string): Promise<void> {
  await run(
    db,
    "update auth.mfa_factors set status = 'verified', updated_at = now() where id = $1",
    [factorId],
  );
}

/** Deletes a factor; the sessions it raised lose its AMR entry and drop to aal1
 * (DowngradeSessionsToAAL1). */
export async function deleteFactor(
  db: Db,
  factor: { id: string; user_id: string; factor_type: string },
) {
  await run(db, "delete from auth.mfa_factors where id = $1", [factor.id]);
  await run(
    db,
    `delete from auth.mfa_amr_claims where authentication_method = $2
       and session_id in (select id from auth.sessions where factor_id = $1)`,
    [factor.id, amrMethodOf(factor.factor_type)],
  );
  await run(
    db,
    "update auth.sessions set aal = 'aal1', factor_id = null, updated_at = now() where user_id = $1 and factor_id = $2",
    [factor.user_id, factor.id],
  );
}

/** UpdateFriendlyName (an admin's change). */
export async function renameFactor(db: Db, factorId: string, name: string): Promise<void> {
  await run(
    db,
    "update auth.mfa_factors set friendly_name = $2, updated_at = now() where id = $1",
    [factorId, name],
  );
}

/**
 * A challenge of the factor, from `ip`; the factor remembers it as its last challenge
 * (WriteChallengeToDatabase: a unique column, so a second factor challenged in the same instant
 * keeps its earlier value), with a WebAuthn ceremony or a phone code. Returns when it was created.
 */
export async function createChallenge(
  db: Db,
  challengeId: string,
  factorId: string,
  ip: string,
  extra: { webAuthnSession?: Record<string, unknown>; otpCode?: string } = {},
): Promise<Date> {
  const session = extra.webAuthnSession ? JSON.stringify(extra.webAuthnSession) : null;
  const row = await one<{ created_at: Date }>(
    db,
    `insert into auth.mfa_challenges (id, factor_id, created_at, ip_address, web_authn_session_data, otp_code)
     values ($1, $2, now(), $3, $4, $5) returning created_at`,
    [challengeId, factorId, ip, session, extra.otpCode ?? null],
  );
  await run(
    db,
    `update auth.mfa_factors set last_challenged_at = $2
     where id = $1 and not exists (select 1 from auth.mfa_factors where last_challenged_at = $2)`,
    [factorId, row?.created_at ?? new Date()],
  );
  return row?.created_at ?? new Date();
}

/** The challenge `id` of the factor, and whether it is older than `expirySeconds`. */
export async function findChallenge(
  db: Db,
  id: string,
  factorId: string,
  expirySeconds: number,
): Promise<ChallengeRow | undefined> {
  return one<ChallengeRow>(
    db,
    `select id, verified_at, host(ip_address) as ip_address, web_authn_session_data, otp_code,
       created_at + make_interval(secs => $3) < now() as expired
     from auth.mfa_challenges where id = $1 and factor_id = $2`,
    [id, factorId, expirySeconds],
  );
}

export async function deleteChallenge(db: Db, id: string): Promise<void> {
  await run(db, "delete from auth.mfa_challenges where id = $1", [id]);
}

/** Whether `code` verified a challenge of the factor within the last `windowSeconds`. */
export async function codeRecentlyVerified(
  db: Db,
  factorId: string,
  code: string,
  windowSeconds: number,
): Promise<boolean> {
  const row = await one(
    db,
    `select 1 from auth.mfa_challenges where factor_id = $1 and otp_code = $2
       and verified_at > now() - make_interval(secs => $3)`,
    [factorId, code, windowSeconds],
  );
  return row !== undefined;
}

/** Marks the challenge verified by `code`; false when it already was (two verifies at once). */
export async function markChallengeVerified(
  db: Db,
  challengeId: string,
  code: string,
): Promise<boolean> {
  const marked = await run(
    db,
    "update auth.mfa_challenges set verified_at = now(), otp_code = $2 where id = $1 and verified_at is null",
    [challengeId, code],
  );
  return marked > 0;
}

export function factorJson(factor: FactorRow): Record<string, unknown> {
  return {
    id: factor.id,
    friendly_name: factor.friendly_name ?? undefined,
    factor_type: factor.factor_type,
    status: factor.status,
    // storage.NullString: "" for the factors without a number
    phone: factor.phone ?? "",
    created_at: iso(factor.created_at),
    updated_at: iso(factor.updated_at),
    last_challenged_at: iso(factor.last_challenged_at),
  };
}

/** Seconds before the factor may be challenged again after its last challenge (≤ 0: now). */
export async function secondsUntilChallengeAllowed(
  db: Db,
  factorId: string,
  periodSeconds: number,
): Promise<number | null> {
  const row = await one<{ left: number | null }>(
    db,
    `select extract(epoch from (last_challenged_at + make_interval(secs => $2) - now()))::float8 as left
     from auth.mfa_factors where id = $1`,
    [factorId, periodSeconds],
  );
  return row?.left ?? null;
}

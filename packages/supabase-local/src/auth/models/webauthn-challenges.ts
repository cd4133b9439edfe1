import { type Db, one, run } from "./db.ts";

/**
 * What a ceremony's challenge remembers: go-webauthn's SessionData in its JSON, as the real service
 * stores it (webauthn_challenges.session_data, mfa_challenges.web_authn_session_data). The ceremony
 * shows in it as go-webauthn records it: a registration keeps the credential parameters it offered
 * (`credParams`, which the new key's algorithm must be one of), a sign-in has none and may name
 * the credentials allowed to answer.
 */
export interface CeremonySession {
  challenge: string;
  rpId: string;
  /** The user handle as Go writes bytes (standard base64); null for a discoverable sign-in. */
  user_id: string | null;
  /** A sign-in's allowed credential IDs (standard base64). */
  allowed_credentials?: string[];
  /** Zero time: the real service does not enforce go-webauthn's ceremony timeouts. */
  expires: string;
  userVerification: string;
  credParams?: { type: "public-key"; alg: number }[];
}

/** Which ceremony a session began: only a registration has credential parameters. */
export function ceremonyOf(session: CeremonySession): ChallengeType {
  return Array.isArray(session.credParams) && session.credParams.length > 0
    ? "registration"
    : "authentication";
}

export type ChallengeType = "registration" | "authentication";

/** A stored challenge, consumed: `expired` when it outlived its expires_at. */
export interface ConsumedChallenge {
  id: string;
  session_data: CeremonySession;
  expired: boolean;
}

/** A new challenge; returns its expiry as Unix seconds. */
export async function createWebAuthnChallenge(
  db: Db,
  challenge: {
    userId: string | null;
    type: ChallengeType;
    session: CeremonySession;
    expirySeconds: number;
  },
): Promise<{ id: string; expiresAt: number }> {
  const row = await one<{ id: string; expires_at: Date }>(
    db,
    `insert into auth.webauthn_challenges (user_id, challenge_type, session_data, expires_at)
     values ($1, $2, $3, now() + make_interval(secs => $4)) returning id, expires_at`,
    [challenge.userId, challenge.type, JSON.stringify(challenge.session), challenge.expirySeconds],
  );
  if (!row) throw new Error("challenge not stored");
  return { id: row.id, expiresAt: Math.floor(new Date(row.expires_at).getTime() / 1000) };
}

/**
 * ConsumeWebAuthnChallengeByID: deletes and returns the challenge of this type (bound to `userId`,
 * or to no user for a discoverable sign-in), so it can be used once only, even by two requests at
 * the same time.
 */
export async function consumeWebAuthnChallenge(
  db: Db,
  id: string,
  type: ChallengeType,
  userId: string | null,
): Promise<ConsumedChallenge | undefined> {
  return one<ConsumedChallenge>(
    db,
    `delete from auth.webauthn_challenges
     where id = $1 and challenge_type = $2 and user_id is not distinct from $3
     returning id, session_data, expires_at < now() as expired`,
    [id, type, userId],
  );
}

/** Challenges past their expiry go (the real service's cleanup does it in the background). */
export async function deleteExpiredWebAuthnChallenges(db: Db): Promise<void> {
  await run(
    db,
    "delete from auth.webauthn_challenges where expires_at < now() - interval '1 hour'",
  );
}

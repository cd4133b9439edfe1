import type { AuthContext } from "../context.ts";
import { authError } from "../errors.ts";
import type { Db } from "../models/db.ts";
import {
  type FactorWithSecret,
  type WebAuthnFactorCredential,
  webAuthnCredentialsOf,
} from "../models/factors.ts";
import type { UserRow } from "../models/users.ts";
import { type CeremonySession, ceremonyOf } from "../models/webauthn-challenges.ts";
import {
  creationOptions,
  descriptor,
  parseAssertion,
  parseRegistration,
  relyingParty,
  requestOptions,
  verifyAssertion,
  verifyRegistration,
} from "./webauthn.ts";

/**
 * WebAuthn as a second factor (mfa.go's challengeWebAuthnFactor / verifyWebAuthnFactor): an
 * unverified factor is challenged with creation options ("create"), a verified one with request
 * options for the user's WebAuthn factors' credentials ("request").
 */

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");
const b64urlOf = (standard: string) => Buffer.from(standard, "base64").toString("base64url");

/** The challenge's `webauthn` member and the ceremony to remember with it. */
export async function webAuthnFactorChallenge(
  ctx: AuthContext,
  db: Db,
  user: UserRow,
  factor: FactorWithSecret,
): Promise<{ webauthn: Record<string, unknown>; session: CeremonySession }> {
  const rp = relyingParty(ctx);
  const credentials = await webAuthnCredentialsOf(db, user.id);
  if (factor.status !== "verified") {
    const exclude = credentials.map((c) => descriptor(b64urlOf(c.credential.id), ["usb", "nfc"]));
    const email = user.email ?? "";
    const { options, session } = await creationOptions(
      rp,
      { id: user.id, name: email, displayName: email },
      exclude,
      "factor",
    );
    return { webauthn: { type: "create", credential_options: { publicKey: options } }, session };
  }
  const allow = credentials.map((c) =>
    descriptor(b64urlOf(c.credential.id), c.credential.transport ?? []),
  );
  const { options, session } = await requestOptions(rp, allow, user.id);
  return { webauthn: { type: "request", credential_options: { publicKey: options } }, session };
}

/** What a verified WebAuthn answer gives: a credential to save (create), or the factor whose
 * credential signed and its new counter (request). */
export type WebAuthnFactorResult =
  | {
      type: "create";
      credential: WebAuthnFactorCredential;
      aaguid: string | null;
      response: unknown;
    }
  | { type: "request"; factorId: string; signCount: number; response: unknown };

/**
 * The `webauthn` member of a verify request: {type, credential_response}, checked in the real
 * order, then verified against the challenge's ceremony. The answer must be the ceremony the
 * challenge began: "create" only while the factor is unverified, on a registration challenge;
 * "request" only on a sign-in challenge. Else a key the attacker just made could "register" in
 * answer to a sign-in challenge and pass as the second factor (go-webauthn refuses it too: a
 * sign-in session has no credential parameters; the real service answers that with a 500).
 */
export async function verifyWebAuthnFactor(
  ctx: AuthContext,
  db: Db,
  user: UserRow,
  factor: FactorWithSecret,
  params: Record<string, unknown> | undefined,
  session: CeremonySession,
): Promise<WebAuthnFactorResult> {
  if (!params) throw authError("webauthnParamsRequired");
  const type = params.type;
  if (type !== "create" && type !== "request") throw authError("webauthnTypeInvalid");
  const raw = params.credential_response;
  if (raw === undefined || raw === null) throw authError("credentialResponseRequired");
  const rp = relyingParty(ctx);
  if (type === "create") {
    const response = await parseRegistration(raw);
    if (!response) throw authError("credentialResponseInvalid");
    if (factor.status === "verified" || ceremonyOf(session) !== "registration") {
      throw authError("webauthnVerificationFailed");
    }
    const created = await verifyRegistration(rp, session, response);
    if (!created) throw authError("webauthnVerificationFailed");
    return {
      type,
      response,
      aaguid: created.aaguid,
      credential: {
        id: b64(created.credentialId),
        publicKey: b64(created.publicKey),
        attestationType: created.attestationType,
        transport: created.transports,
        flags: {
          userPresent: true,
          userVerified: true,
          backupEligible: created.backupEligible,
          backupState: created.backedUp,
        },
        authenticator: {
          AAGUID: created.aaguid ? b64(Buffer.from(created.aaguid.replace(/-/g, ""), "hex")) : "",
          signCount: created.signCount,
          cloneWarning: false,
          attachment: "",
        },
      },
    };
  }
  const response = await parseAssertion(raw);
  if (!response) throw authError("credentialResponseInvalid");
  if (factor.status !== "verified" || ceremonyOf(session) !== "authentication") {
    throw authError("webauthnVerificationFailed");
  }
  // ValidateLogin: the credential must be one of the user's WebAuthn factors'.
  const owned = (await webAuthnCredentialsOf(db, user.id)).find(
    (c) => b64urlOf(c.credential.id) === response.id,
  );
  if (!owned) throw authError("webauthnVerificationFailed");
  const signCount = await verifyAssertion(rp, session, response, {
    credentialId: Buffer.from(owned.credential.id, "base64"),
    publicKey: Buffer.from(owned.credential.publicKey, "base64"),
    signCount: owned.credential.authenticator.signCount,
    transports: owned.credential.transport ?? [],
  });
  if (signCount === undefined) throw authError("webauthnVerificationFailed");
  return { type, response, factorId: owned.factor_id, signCount };
}

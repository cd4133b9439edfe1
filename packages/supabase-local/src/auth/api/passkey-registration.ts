import type { AuthContext } from "../context.ts";
import { authError } from "../errors.ts";
import { type Caller, requireUser } from "../http/authenticate.ts";
import { clientIp } from "../http/request.ts";
import { audit } from "../models/audit.ts";
import type { UserRow } from "../models/users.ts";
import {
  consumeWebAuthnChallenge,
  createWebAuthnChallenge,
} from "../models/webauthn-challenges.ts";
import {
  countPasskeys,
  insertPasskey,
  passkeyMetadataJson,
  passkeysOf,
} from "../models/webauthn-credentials.ts";
import {
  readCeremonyParams,
  requirePasskeyManagementAal,
  requirePasskeysEnabled,
} from "../webauthn/passkey-request.ts";
import {
  base64url,
  creationOptions,
  descriptor,
  parseRegistration,
  passkeyName,
  relyingParty,
  verifyRegistration,
} from "../webauthn/webauthn.ts";

/** requireAuthentication + requireNotAnonymous, then the passkey checks of both steps. */
async function registrationCaller(ctx: AuthContext, request: Request): Promise<Caller> {
  requirePasskeysEnabled(ctx);
  const caller = await requireUser(ctx, request);
  if (caller.claims.is_anonymous === true) throw authError("anonymousNotAllowed");
  await requirePasskeyManagementAal(ctx, caller);
  return caller;
}

/** POST /passkeys/registration/options: creation options for a new passkey of the signed-in user
 * (their passkeys excluded), and the challenge's id and expiry. */
export async function passkeyRegistrationOptions(
  ctx: AuthContext,
  request: Request,
): Promise<Response> {
  const { user } = await registrationCaller(ctx, request);
  const { maxPasskeysPerUser } = ctx.config.auth.passkey;
  if ((await countPasskeys(ctx.db, user.id)) >= maxPasskeysPerUser) {
    throw authError("tooManyPasskeys");
  }
  const existing = await passkeysOf(ctx.db, user.id);
  const rp = relyingParty(ctx);
  const { options, session } = await creationOptions(
    rp,
    { id: user.id, name: webAuthnName(user), displayName: webAuthnDisplayName(user) },
    existing.map((p) => descriptor(base64url(p.credential_id))),
    "passkey",
  );
  const challenge = await createWebAuthnChallenge(ctx.db, {
    userId: user.id,
    type: "registration",
    session,
    expirySeconds: ctx.config.auth.webauthn.challengeExpirySeconds,
  });
  return Response.json({
    challenge_id: challenge.id,
    options,
    expires_at: challenge.expiresAt,
  });
}

/** POST /passkeys/registration/verify: the authenticator's attestation for the challenge; the
 * passkey is stored, named after its authenticator. */
export async function passkeyRegistrationVerify(
  ctx: AuthContext,
  request: Request,
): Promise<Response> {
  const { user } = await registrationCaller(ctx, request);
  const { challengeId, credential } = await readCeremonyParams(request);
  // Consumed before anything else is looked at: a challenge is good for one attempt.
  const challenge = await consumeWebAuthnChallenge(ctx.db, challengeId, "registration", user.id);
  if (!challenge) throw authError("webauthnChallengeNotFound");
  if (challenge.expired) throw authError("webauthnChallengeExpired");
  const response = await parseRegistration(credential);
  if (!response) throw authError("webauthnCredentialInvalid");
  const rp = relyingParty(ctx);
  const verified = await verifyRegistration(rp, challenge.session_data, response);
  if (!verified) throw authError("webauthnVerificationFailed");

  const passkey = await ctx.db.transaction(async (tx) => {
    if ((await countPasskeys(tx, user.id)) >= ctx.config.auth.passkey.maxPasskeysPerUser) {
      throw authError("tooManyPasskeys");
    }
    const row = await insertPasskey(tx, {
      userId: user.id,
      ...verified,
      friendlyName: passkeyName(verified.aaguid),
    });
    if (!row) throw authError("webauthnCredentialExists");
    await audit(tx, clientIp(request), user, "passkey_created", { passkey_id: row.id });
    return row;
  });
  return Response.json(passkeyMetadataJson(passkey));
}

/** webAuthnUser.WebAuthnName: the email, else the phone. */
function webAuthnName(user: UserRow): string {
  return user.email || user.phone || "";
}

/** webAuthnUser.WebAuthnDisplayName: user_metadata.name, else the name. */
function webAuthnDisplayName(user: UserRow): string {
  const name = user.raw_user_meta_data?.name;
  return typeof name === "string" && name !== "" ? name : webAuthnName(user);
}

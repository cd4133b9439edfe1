import { captchaProtected } from "../captcha.ts";
import type { AuthContext } from "../context.ts";
import { authError } from "../errors.ts";
import { clientIp } from "../http/request.ts";
import { UUID } from "../http/validate.ts";
import { audit } from "../models/audit.ts";
import { findUserById, isBanned } from "../models/users.ts";
import {
  consumeWebAuthnChallenge,
  createWebAuthnChallenge,
  deleteExpiredWebAuthnChallenges,
} from "../models/webauthn-challenges.ts";
import { findPasskeyByCredentialId, markPasskeyUsed } from "../models/webauthn-credentials.ts";
import { issueSession } from "../tokens/token-response.ts";
import { readCeremonyParams, requirePasskeysEnabled } from "../webauthn/passkey-request.ts";
import {
  assertedUserId,
  credentialIdOf,
  parseAssertion,
  relyingParty,
  requestOptions,
  verifyAssertion,
} from "../webauthn/webauthn.ts";

/** POST /passkeys/authentication/options: request options for a discoverable sign-in (no user
 * named, no allowCredentials), rate-limited per client address (RATE_LIMIT_PASSKEY). */
export async function passkeyAuthenticationOptions(
  ctx: AuthContext,
  request: Request,
): Promise<Response> {
  requirePasskeysEnabled(ctx);
  ctx.rateLimits.check("passkey", request);
  return captchaProtected(passkeyOptions)(ctx, request);
}

async function passkeyOptions(ctx: AuthContext): Promise<Response> {
  const rp = relyingParty(ctx);
  const { options, session } = await requestOptions(rp, undefined);
  await deleteExpiredWebAuthnChallenges(ctx.db);
  const challenge = await createWebAuthnChallenge(ctx.db, {
    userId: null,
    type: "authentication",
    session,
    expirySeconds: ctx.config.auth.webauthn.challengeExpirySeconds,
  });
  return Response.json({
    challenge_id: challenge.id,
    options,
    expires_at: challenge.expiresAt,
  });
}

/** POST /passkeys/authentication/verify: the assertion for the challenge, by a passkey of the user
 * its user handle names; a new aal1 session whose amr is `passkey`. */
export async function passkeyAuthenticationVerify(
  ctx: AuthContext,
  request: Request,
): Promise<Response> {
  requirePasskeysEnabled(ctx);
  const { challengeId, credential } = await readCeremonyParams(request);
  const challenge = await consumeWebAuthnChallenge(ctx.db, challengeId, "authentication", null);
  if (!challenge) throw authError("webauthnChallengeNotFound");
  if (challenge.expired) throw authError("webauthnChallengeExpired");
  const response = await parseAssertion(credential);
  if (!response) throw authError("webauthnCredentialInvalid");

  // ValidatePasskeyLogin: the user handle names the user; the credential must be one of theirs.
  const userId = await assertedUserId(response);
  const passkey = await findPasskeyByCredentialId(ctx.db, await credentialIdOf(response));
  if (!UUID.test(userId) || !passkey || passkey.user_id !== userId.toLowerCase()) {
    throw authError("webauthnVerificationFailed");
  }
  const rp = relyingParty(ctx);
  const signCount = await verifyAssertion(rp, challenge.session_data, response, {
    credentialId: passkey.credential_id,
    publicKey: passkey.public_key,
    signCount: Number(passkey.sign_count),
    transports: passkey.transports,
  });
  if (signCount === undefined) throw authError("webauthnVerificationFailed");

  const user = await findUserById(ctx.db, passkey.user_id);
  if (!user) throw authError("webauthnVerificationFailed");
  if (user.email && !user.email_confirmed_at) throw authError("passkeyEmailNotConfirmed");
  if (isBanned(user, ctx.now())) throw authError("passkeyUserBanned");

  const body = await ctx.db.transaction(async (tx) => {
    await markPasskeyUsed(tx, passkey.id, signCount);
    await audit(tx, clientIp(request), user, "login", { passkey_id: passkey.id });
    return issueSession(ctx, tx, user, "passkey", request);
  });
  return Response.json(body);
}

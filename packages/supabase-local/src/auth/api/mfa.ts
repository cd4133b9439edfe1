import { randomUUID } from "node:crypto";
import { Secret, TOTP } from "otpauth";
import type { AuthContext } from "../context.ts";
import { sendNotification } from "../emails/send.ts";
import { authError } from "../errors.ts";
import { mfaVerificationAttempt } from "../hooks/verification.ts";
import { type Caller, requireUser } from "../http/authenticate.ts";
import { clientIp, readBody, readParams } from "../http/request.ts";
import { UUID, validateFriendlyName, validatePhone } from "../http/validate.ts";
import { audit } from "../models/audit.ts";
import type { Db } from "../models/db.ts";
import {
  codeRecentlyVerified,
  createChallenge,
  deleteChallenge,
  deleteExpiredUnverifiedFactors,
  deleteFactor,
  deleteUnverifiedFactors,
  deleteUnverifiedPhoneFactors,
  type FactorWithSecret,
  factorsOf,
  findChallenge,
  findFactor,
  insertFactor,
  insertPhoneFactor,
  insertTotpFactor,
  markChallengeVerified,
  markFactorVerified,
  saveWebAuthnCredential,
  updateLastWebAuthnChallenge,
  updateWebAuthnSignCount,
} from "../models/factors.ts";
import { deleteSessionsBelowAal2 } from "../models/sessions.ts";
import { findUserById } from "../models/users.ts";
import type { CeremonySession } from "../models/webauthn-challenges.ts";
import { phoneChallengeCode, phoneCodeMatches } from "../phone/phone-factor.ts";
import { upgradeSession } from "../tokens/token-response.ts";
import { verifyWebAuthnFactor, webAuthnFactorChallenge } from "../webauthn/webauthn-factor.ts";

/** Unverified factors and challenges live 300 s (GOTRUE_MFA_FACTOR_EXPIRY_DURATION and
 * GOTRUE_MFA_CHALLENGE_EXPIRY_DURATION defaults). */
const FACTOR_EXPIRY_SECONDS = 300;
const CHALLENGE_EXPIRY_SECONDS = 300;
/** GOTRUE_MFA_MAX_VERIFIED_FACTORS default. */
const MAX_VERIFIED_FACTORS = 10;
/** The real service's TOTP parameters (pquerna/otp ValidateCustom): 30 s, 6 digits, SHA1, ±1 step. */
const PERIOD = 30;
const DIGITS = 6;
const SKEW = 1;
/**
 * The most bytes of the otpauth URI a QR code can hold: version 40 at level H in byte mode. Auth
 * encodes the whole URI in byte mode (boombuler/barcode qr.Auto: numeric or alphanumeric only when
 * the whole text is), so a longer URI fails there (a 500); here it is refused with a 400.
 */
const QR_CAPACITY_BYTES = 1273;

/** requireAuthentication + requireNotAnonymous, the middleware of every /factors route. */
async function requireFactorCaller(ctx: AuthContext, request: Request): Promise<Caller> {
  const caller = await requireUser(ctx, request);
  if (caller.claims.is_anonymous === true) throw authError("anonymousNotAllowed");
  return caller;
}

/** loadFactor: the {factor_id} of the path, owned by the caller (404 otherwise). */
async function loadFactor(ctx: AuthContext, request: Request, caller: Caller) {
  const segments = new URL(request.url).pathname.split("/");
  const id = segments[segments.indexOf("factors") + 1] ?? "";
  if (!UUID.test(id)) throw authError("factorIdNotUuid");
  const factor = await findFactor(ctx.db, id, caller.user.id);
  if (!factor) throw authError("factorNotFound");
  return factor;
}

/** POST /factors: enroll a TOTP, phone or WebAuthn factor. */
export async function enrollFactor(ctx: AuthContext, request: Request): Promise<Response> {
  const caller = await requireFactorCaller(ctx, request);
  const params = await readParams(request, {
    friendly_name: "string",
    factor_type: "string",
    issuer: "string",
    phone: "string",
  });
  const { totp, webAuthn, phone } = ctx.config.auth.mfa;
  switch (params.factor_type) {
    case "totp":
      if (!totp.enrollEnabled) throw authError("totpEnrollDisabled");
      break;
    case "phone":
      if (!phone.enrollEnabled) throw authError("phoneEnrollDisabled");
      return enrollPhoneFactor(ctx, request, caller, params.friendly_name ?? "", params.phone);
    case "webauthn":
      if (!webAuthn.enrollEnabled) throw authError("webauthnEnrollDisabled");
      return enrollWebAuthnFactor(ctx, request, caller, params.friendly_name ?? "");
    default:
      throw authError("factorTypeInvalid");
  }
  const { user, session } = caller;
  const friendlyName = params.friendly_name ?? "";
  const issuer = params.issuer || new URL(ctx.config.auth.siteUrl).host;

  const secret = new Secret({ size: 20 });
  const key = new TOTP({
    issuer,
    label: user.email ?? "",
    algorithm: "SHA1",
    digits: DIGITS,
    period: PERIOD,
    secret,
  });
  const uri = key.toString();

  const factorId = randomUUID();
  await ctx.db.transaction(async (tx) => {
    await validateFactors(ctx, tx, user.id, friendlyName, session?.aal);
    // Checked before any QR code is drawn: the library's search for the best encoding of a long
    // text takes seconds of this thread before it fails.
    const bytes = Buffer.byteLength(uri);
    if (bytes > QR_CAPACITY_BYTES) {
      throw authError(
        "totpUriTooLong",
        `The TOTP URI is ${bytes} bytes, more than the ${QR_CAPACITY_BYTES} a QR code holds: use a shorter issuer`,
      );
    }
    await insertTotpFactor(tx, {
      id: factorId,
      userId: user.id,
      friendlyName,
      secret: secret.base32,
    });
    await audit(tx, clientIp(request), user, "factor_in_progress", { factor_id: factorId });
  });
  // loaded after the start, not with it (loadAfterStart in http/app.ts): 40 ms of every start
  const { default: QRCode } = await import("qrcode");
  const qrCode = await QRCode.toString(uri, { type: "svg", errorCorrectionLevel: "H" });
  return Response.json({
    id: factorId,
    type: "totp",
    friendly_name: friendlyName,
    totp: { qr_code: qrCode, secret: secret.base32, uri },
  });
}

/** enrollPhoneFactor: an unverified factor for the number; an unverified one for the same number
 * is replaced, a verified one refuses. The answer echoes the number as the client wrote it. */
async function enrollPhoneFactor(
  ctx: AuthContext,
  request: Request,
  caller: Caller,
  friendlyName: string,
  rawPhone: string | undefined,
): Promise<Response> {
  if (!rawPhone) throw authError("factorPhoneRequired");
  const phone = validatePhone(rawPhone);
  const { user, session } = caller;
  const existing = await factorsOf(ctx.db, user.id);
  if (
    existing.some((f) => f.factor_type === "phone" && f.phone === phone && f.status === "verified")
  ) {
    throw authError("verifiedPhoneFactorExists");
  }
  const factorId = randomUUID();
  await ctx.db.transaction(async (tx) => {
    await deleteUnverifiedPhoneFactors(tx, user.id, phone);
    await validateFactors(ctx, tx, user.id, friendlyName, session?.aal);
    await insertPhoneFactor(tx, { id: factorId, userId: user.id, friendlyName, phone });
    await audit(tx, clientIp(request), user, "factor_in_progress", {
      factor_id: factorId,
      factor_type: "phone",
    });
  });
  return Response.json({
    id: factorId,
    type: "phone",
    friendly_name: friendlyName,
    phone: rawPhone,
  });
}

/** enrollWebAuthnFactor: an unverified factor; its challenge carries the creation options. */
async function enrollWebAuthnFactor(
  ctx: AuthContext,
  request: Request,
  caller: Caller,
  friendlyName: string,
): Promise<Response> {
  const { user, session } = caller;
  const factorId = randomUUID();
  await ctx.db.transaction(async (tx) => {
    await validateFactors(ctx, tx, user.id, friendlyName, session?.aal);
    await insertFactor(tx, {
      id: factorId,
      userId: user.id,
      friendlyName,
      type: "webauthn",
      status: "unverified",
    });
    await audit(tx, clientIp(request), user, "factor_in_progress", {
      factor_id: factorId,
      factor_type: "webauthn",
    });
  });
  return Response.json({ id: factorId, type: "webauthn", friendly_name: friendlyName });
}

/** validateFactors: expired unverified factors go; names are unique per user; the limits hold;
 * a user with a verified factor needs an aal2 session to add another. */
async function validateFactors(
  ctx: AuthContext,
  db: Db,
  userId: string,
  name: string,
  aal: string | undefined,
) {
  validateFriendlyName(name);
  await deleteExpiredUnverifiedFactors(db, userId, FACTOR_EXPIRY_SECONDS);
  const factors = await factorsOf(db, userId);
  if (factors.some((f) => (f.friendly_name ?? "") === name)) {
    throw authError(
      "factorNameConflict",
      `A factor with the friendly name ${JSON.stringify(name)} for this user already exists`,
    );
  }
  const verified = factors.filter((f) => f.status === "verified").length;
  if (factors.length >= ctx.config.auth.mfa.maxEnrolledFactors) throw authError("tooManyFactors");
  if (verified >= MAX_VERIFIED_FACTORS) throw authError("tooManyFactors");
  if (verified > 0 && aal !== "aal2") throw authError("enrollNeedsAal2");
}

/** POST /factors/{id}/challenge */
export async function challengeFactor(ctx: AuthContext, request: Request): Promise<Response> {
  const caller = await requireFactorCaller(ctx, request);
  const factor = await loadFactor(ctx, request, caller);
  // The route's limiter runs after loadFactor, as the real router's (an unknown factor is a 404).
  ctx.rateLimits.check("mfa_challenge", request);
  if (factor.factor_type === "webauthn") {
    if (!ctx.config.auth.mfa.webAuthn.verifyEnabled) throw authError("webauthnChallengeDisabled");
    // The body (channel, the client's rpId/rpOrigins) is read as the real one reads it: the
    // relying party is the server's own [auth.webauthn], whatever the client says.
    if ((await readBody(request.clone())) !== "") {
      await readParams(request, { channel: "string", webauthn: "object" });
    }
    const { webauthn, session } = await webAuthnFactorChallenge(ctx, ctx.db, caller.user, factor);
    const id = randomUUID();
    const created = await createChallenge(ctx.db, id, factor.id, clientIp(request), {
      webAuthnSession: session as unknown as Record<string, unknown>,
    });
    return Response.json({
      id,
      type: "webauthn",
      expires_at: Math.floor(new Date(created).getTime() / 1000) + CHALLENGE_EXPIRY_SECONDS,
      webauthn,
    });
  }
  let otpCode: string | undefined;
  if (factor.factor_type === "phone") {
    if (!ctx.config.auth.mfa.phone.verifyEnabled) throw authError("phoneVerifyDisabled");
    const params = await readParams(request, { channel: "string", webauthn: "object" });
    otpCode = await phoneChallengeCode(ctx, ctx.db, factor, params.channel, {
      request,
      user: caller.user,
    });
  } else {
    if (factor.factor_type !== "totp") throw authError("factorTypeInvalid");
    if (!ctx.config.auth.mfa.totp.verifyEnabled) throw authError("totpVerifyDisabled");
  }
  const challengeId = randomUUID();
  const created = await ctx.db.transaction(async (tx) => {
    const ip = clientIp(request);
    const createdAt = await createChallenge(tx, challengeId, factor.id, ip, { otpCode });
    await audit(tx, clientIp(request), caller.user, "challenge_created", {
      factor_id: factor.id,
      factor_status: factor.status,
    });
    return createdAt;
  });
  return Response.json({
    id: challengeId,
    type: factor.factor_type,
    expires_at: Math.floor(new Date(created).getTime() / 1000) + CHALLENGE_EXPIRY_SECONDS,
  });
}

/** POST /factors/{id}/verify: a TOTP code for a challenge of this factor; the session becomes aal2. */
export async function verifyFactor(ctx: AuthContext, request: Request): Promise<Response> {
  const caller = await requireFactorCaller(ctx, request);
  const factor = await loadFactor(ctx, request, caller);
  // Before the code is looked at: a spent limit refuses even the right code.
  ctx.rateLimits.check("mfa_verify", request);
  const params = await readParams(request, {
    challenge_id: "string",
    code: "string",
    webauthn: "object",
  });
  const challengeId = params.challenge_id ?? "";
  if (challengeId !== "" && !UUID.test(challengeId)) {
    throw authError(
      "badJson",
      `Could not parse request body as JSON: uuid: incorrect UUID length ${challengeId.length} in string ${JSON.stringify(challengeId)}`,
    );
  }
  const code = params.code ?? "";
  if (code === "" && factor.factor_type !== "webauthn") throw authError("codeRequired");
  const session = caller.session;
  if (!session) throw authError("sessionFromJwtMissing");
  if (factor.factor_type === "webauthn") {
    if (!ctx.config.auth.mfa.webAuthn.verifyEnabled) throw authError("webauthnVerifyDisabled");
    return verifyWebAuthn(ctx, request, caller, factor, challengeId, params.webauthn);
  }
  if (factor.factor_type === "phone") {
    if (!ctx.config.auth.mfa.phone.verifyEnabled) throw authError("phoneVerifyDisabled");
    const challenge = await validateChallenge(ctx, request, factor.id, challengeId);
    const valid = phoneCodeMatches(challenge.otp_code, code);
    await mfaVerificationAttempt(ctx, request, { ...factor, user_id: caller.user.id }, valid);
    if (!valid) throw authError("phoneCodeInvalid");
    return Response.json(await raiseSession(ctx, request, caller, factor, challenge.id, code));
  }
  if (factor.factor_type !== "totp") throw authError("factorTypeInvalid");
  if (!ctx.config.auth.mfa.totp.verifyEnabled) throw authError("totpVerifyDisabled");

  const challenge = await validateChallenge(ctx, request, factor.id, challengeId);
  const totp = new TOTP({
    algorithm: "SHA1",
    digits: DIGITS,
    period: PERIOD,
    secret: Secret.fromBase32(factor.secret ?? ""),
  });
  const valid = /^\d{6}$/.test(code) && totp.validate({ token: code, window: SKEW }) !== null;
  // A code that already verified a challenge of this factor is refused while it could still be
  // valid (stricter than the hosted service, which only refuses a verified challenge).
  const reused =
    valid && (await codeRecentlyVerified(ctx.db, factor.id, code, PERIOD * (2 * SKEW + 1)));
  await mfaVerificationAttempt(
    ctx,
    request,
    { ...factor, user_id: caller.user.id },
    valid && !reused,
  );
  if (!valid || reused) throw authError("totpInvalid");
  return Response.json(await raiseSession(ctx, request, caller, factor, challenge.id, code));
}

/** A TOTP or phone code verified the challenge: the factor is verified, the session becomes aal2
 * (amr `totp` or `mfa/phone`), lower sessions and unfinished enrollments of the type go. */
async function raiseSession(
  ctx: AuthContext,
  request: Request,
  caller: Caller,
  factor: FactorWithSecret,
  challengeId: string,
  code: string,
): Promise<Record<string, unknown>> {
  const session = caller.session;
  if (!session) throw authError("sessionFromJwtMissing");
  const factorType = factor.factor_type === "phone" ? "phone" : "totp";
  const body = await ctx.db.transaction(async (tx) => {
    await audit(tx, clientIp(request), caller.user, "verification_attempted", {
      factor_id: factor.id,
      challenge_id: challengeId,
      factor_type: factor.factor_type,
    });
    // Two verifies of one challenge at once: the second finds it verified.
    if (!(await markChallengeVerified(tx, challengeId, code))) {
      throw authError("challengeIpMismatch");
    }
    if (factor.status !== "verified") await markFactorVerified(tx, factor.id);
    const user = (await findUserById(tx, caller.user.id)) ?? caller.user;
    const method = factorType === "phone" ? "mfa/phone" : "totp";
    const result = await upgradeSession(ctx, tx, user, session.id, method, factor.id, request);
    // InvalidateSessionsWithAALLessThan(aal2), DeleteUnverifiedFactors(type)
    await deleteSessionsBelowAal2(tx, user.id);
    await deleteUnverifiedFactors(tx, user.id, factorType);
    return result;
  });
  if (factor.status !== "verified") {
    await sendNotification(ctx, ctx.db, request, caller.user, "mfa_factor_enrolled", {
      factorType,
    });
  }
  return body;
}

/** validateChallenge: the challenge of this factor, from this address, not verified before, not
 * expired (an expired one is deleted). */
async function validateChallenge(
  ctx: AuthContext,
  request: Request,
  factorId: string,
  challengeId: string,
) {
  const challenge = await findChallenge(
    ctx.db,
    challengeId || "00000000-0000-0000-0000-000000000000",
    factorId,
    CHALLENGE_EXPIRY_SECONDS,
  );
  if (!challenge) throw authError("challengeNotFound");
  if (challenge.verified_at || challenge.ip_address !== clientIp(request)) {
    throw authError("challengeIpMismatch");
  }
  if (challenge.expired) {
    await deleteChallenge(ctx.db, challenge.id);
    throw authError(
      "challengeExpired",
      `MFA challenge ${challenge.id} has expired, verify against another challenge or create a new challenge.`,
    );
  }
  return challenge;
}

/** verifyWebAuthnFactor: the authenticator's answer to the challenge. A first ("create") answer
 * verifies the factor and stores its credential; either way the session becomes aal2 with
 * `mfa/webauthn` in amr. A forged or mis-addressed answer is a 400 webauthn_verification_failed
 * (the real service answers it with a 500). */
async function verifyWebAuthn(
  ctx: AuthContext,
  request: Request,
  caller: Caller,
  factor: FactorWithSecret,
  challengeId: string,
  params: Record<string, unknown> | undefined,
): Promise<Response> {
  const session = caller.session;
  if (!session) throw authError("sessionFromJwtMissing");
  if (!params) throw authError("webauthnParamsRequired");
  if (params.type !== "create" && params.type !== "request") throw authError("webauthnTypeInvalid");
  if (params.credential_response == null) throw authError("credentialResponseRequired");
  const challenge = await validateChallenge(ctx, request, factor.id, challengeId);
  const ceremony = challenge.web_authn_session_data as unknown as CeremonySession | null;
  if (!ceremony) throw authError("challengeNotFound");
  // Used once, whatever the answer.
  await deleteChallenge(ctx.db, challenge.id);
  const result = await verifyWebAuthnFactor(ctx, ctx.db, caller.user, factor, params, ceremony);
  const newlyVerified = factor.status !== "verified";
  const body = await ctx.db.transaction(async (tx) => {
    await audit(tx, clientIp(request), caller.user, "verification_attempted", {
      factor_id: factor.id,
      challenge_id: challenge.id,
      factor_type: factor.factor_type,
    });
    if (result.type === "create") {
      // Only an unverified factor takes a registration (verifyWebAuthnFactor), once: of two
      // registration challenges answered at the same time, the second finds it verified.
      if ((await findFactor(tx, factor.id, caller.user.id))?.status !== "unverified") {
        throw authError("webauthnVerificationFailed");
      }
      await markFactorVerified(tx, factor.id);
      await saveWebAuthnCredential(tx, factor.id, result.credential, result.aaguid);
    } else {
      await updateWebAuthnSignCount(tx, result.factorId, result.signCount);
    }
    await updateLastWebAuthnChallenge(tx, factor.id, {
      challenge: { id: challenge.id, factor_id: factor.id },
      type: result.type,
      credential_response: result.response,
    });
    const user = (await findUserById(tx, caller.user.id)) ?? caller.user;
    const upgraded = await upgradeSession(
      ctx,
      tx,
      user,
      session.id,
      "mfa/webauthn",
      factor.id,
      request,
    );
    await deleteSessionsBelowAal2(tx, user.id);
    await deleteUnverifiedFactors(tx, user.id, "webauthn");
    return upgraded;
  });
  if (newlyVerified) {
    await sendNotification(ctx, ctx.db, request, caller.user, "mfa_factor_enrolled", {
      factorType: "webauthn",
    });
  }
  return Response.json(body);
}

/** DELETE /factors/{id}: a verified factor needs an aal2 session; its sessions drop to aal1. */
export async function unenrollFactor(ctx: AuthContext, request: Request): Promise<Response> {
  const caller = await requireFactorCaller(ctx, request);
  const factor = await loadFactor(ctx, request, caller);
  const session = caller.session;
  if (!session) throw authError("sessionFromJwtMissing");
  if (factor.factor_type === "recovery_code") throw authError("recoveryCodesOwnEndpoint");
  if (factor.status === "verified" && session.aal !== "aal2") {
    throw authError("unenrollNeedsAal2");
  }
  if (factor.status === "verified") {
    // Recovery codes never stay as the only factor.
    const factors = await factorsOf(ctx.db, caller.user.id);
    const others = factors.filter(
      (f) => f.id !== factor.id && f.status === "verified" && f.factor_type !== "recovery_code",
    );
    if (others.length === 0 && factors.some((f) => f.factor_type === "recovery_code")) {
      throw authError("recoveryCodesLastFactor");
    }
  }
  await ctx.db.transaction(async (tx) => {
    await audit(tx, clientIp(request), caller.user, "factor_unenrolled", {
      factor_id: factor.id,
      factor_status: factor.status,
      session_id: session.id,
    });
    await deleteFactor(tx, factor);
  });
  await sendNotification(ctx, ctx.db, request, caller.user, "mfa_factor_unenrolled", {
    factorType: factor.factor_type,
  });
  return Response.json({ id: factor.id });
}

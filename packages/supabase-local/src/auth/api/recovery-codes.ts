import { randomUUID } from "node:crypto";
import type { AuthContext } from "../context.ts";
import { sendNotification } from "../emails/send.ts";
import { authError } from "../errors.ts";
import { type Caller, requireUser } from "../http/authenticate.ts";
import { clientIp, readBody, readParams } from "../http/request.ts";
import { validateFriendlyName } from "../http/validate.ts";
import { audit } from "../models/audit.ts";
import {
  deleteExpiredUnverifiedFactors,
  deleteFactor,
  factorsOf,
  insertFactor,
} from "../models/factors.ts";
import {
  consumeRecoveryCode,
  countRecoveryCodes,
  createRecoveryCodeSet,
  findRecoveryCodeSet,
  lockRecoveryCodeSet,
  registerRecoveryCodeFailure,
  replaceRecoveryCodes,
  resetRecoveryCodeLockout,
  unusedRecoveryCodes,
} from "../models/recovery-codes.ts";
import { deleteSessionsBelowAal2 } from "../models/sessions.ts";
import { findUserById } from "../models/users.ts";
import {
  generateRecoveryCode,
  hashRecoveryCode,
  normalizeRecoveryCode,
  recoveryCodeMatches,
} from "../tokens/recovery-code-hashing.ts";
import { upgradeSession } from "../tokens/token-response.ts";

/** DefaultRecoveryCodeFriendlyName. */
const DEFAULT_NAME = "Recovery codes";
/** GOTRUE_MFA_FACTOR_EXPIRY_DURATION default (unverified factors go after it). */
const FACTOR_EXPIRY_SECONDS = 300;

/**
 * requireAuthentication + requireNotAnonymous, as every /factors route. With neither setting on
 * (the default, as on hosted Supabase) the routes do not exist: Auth v2.189.0 takes
 * "recovery-codes" for the {factor_id} of /factors/{factor_id}, whose loadFactor refuses it before
 * any method is matched (404 validation_failed "factor_id must be an UUID"), and so does this.
 */
async function factorCaller(ctx: AuthContext, request: Request): Promise<Caller> {
  const caller = await requireUser(ctx, request);
  if (caller.claims.is_anonymous === true) throw authError("anonymousNotAllowed");
  const { enrollEnabled, verifyEnabled } = ctx.config.auth.mfa.recoveryCodes;
  if (!enrollEnabled && !verifyEnabled) throw authError("factorIdNotUuid");
  return caller;
}

/** A fresh set: the canonical codes (shown once) and their hashes (stored). */
async function newCodes(ctx: AuthContext): Promise<{ codes: string[]; hashes: string[] }> {
  const { count, codeLength, hashCost } = ctx.config.auth.mfa.recoveryCodes;
  const codes = Array.from({ length: count }, () => generateRecoveryCode(codeLength));
  const hashes = await Promise.all(codes.map((code) => hashRecoveryCode(code, hashCost)));
  return { codes, hashes };
}

/** GET /factors/recovery-codes: {id, type, total, remaining} at any aal; never the codes. */
export async function recoveryCodesStatus(ctx: AuthContext, request: Request): Promise<Response> {
  const { user } = await factorCaller(ctx, request);
  const set = await findRecoveryCodeSet(ctx.db, user.id);
  if (!set) throw authError("recoveryCodesNotEnrolled");
  const { total, remaining } = await countRecoveryCodes(ctx.db, set.id);
  return Response.json({ id: set.mfa_factor_id, type: "recovery_code", total, remaining });
}

/** POST /factors/recovery-codes: the user's one set of codes, from an aal2 session of a user with
 * another verified factor; the codes are in this answer only. */
export async function generateRecoveryCodes(ctx: AuthContext, request: Request): Promise<Response> {
  const { user, session } = await factorCaller(ctx, request);
  if (!session) throw authError("sessionFromJwtMissing");
  if (!ctx.config.auth.mfa.recoveryCodes.enrollEnabled) {
    throw authError("recoveryCodesEnrollDisabled");
  }
  // The body is optional.
  const text = await readBody(request.clone());
  const params = text === "" ? {} : await readParams(request, { friendly_name: "string" });
  if (session.aal !== "aal2") throw authError("recoveryCodesGenerateNeedsAal2");
  if (await findRecoveryCodeSet(ctx.db, user.id)) throw authError("recoveryCodesExist");
  const friendlyName = params.friendly_name || DEFAULT_NAME;
  validateFriendlyName(friendlyName);

  // validateFactors, then: recovery codes are never a user's only second factor.
  await deleteExpiredUnverifiedFactors(ctx.db, user.id, FACTOR_EXPIRY_SECONDS);
  const factors = await factorsOf(ctx.db, user.id);
  if (factors.some((f) => (f.friendly_name ?? "") === friendlyName)) {
    throw authError(
      "factorNameConflict",
      `A factor with the friendly name ${JSON.stringify(friendlyName)} for this user already exists`,
    );
  }
  if (factors.length >= ctx.config.auth.mfa.maxEnrolledFactors) throw authError("tooManyFactors");
  if (!factors.some((f) => f.status === "verified" && f.factor_type !== "recovery_code")) {
    throw authError("recoveryCodesSoleFactor");
  }

  const { codes, hashes } = await newCodes(ctx);
  const factorId = randomUUID();
  await ctx.db.transaction(async (tx) => {
    await insertFactor(tx, {
      id: factorId,
      userId: user.id,
      friendlyName,
      type: "recovery_code",
      status: "verified",
    });
    await createRecoveryCodeSet(tx, { id: factorId, userId: user.id }, hashes);
    await audit(tx, clientIp(request), user, "recovery_codes_generated", {
      factor_id: factorId,
      count: codes.length,
    });
  });
  await sendNotification(ctx, ctx.db, request, user, "mfa_factor_enrolled", {
    factorType: "recovery_code",
  });
  return Response.json({
    id: factorId,
    type: "recovery_code",
    friendly_name: friendlyName,
    total: codes.length,
    codes,
  });
}

/** POST /factors/recovery-codes/regenerate: a new set replaces the old one (every old code stops
 * working, a lockout is lifted); same factor id and name. */
export async function regenerateRecoveryCodes(
  ctx: AuthContext,
  request: Request,
): Promise<Response> {
  const { user, session } = await factorCaller(ctx, request);
  if (!session) throw authError("sessionFromJwtMissing");
  if (!ctx.config.auth.mfa.recoveryCodes.enrollEnabled) {
    throw authError("recoveryCodesEnrollDisabled");
  }
  if (session.aal !== "aal2") throw authError("recoveryCodesRegenerateNeedsAal2");
  const set = await findRecoveryCodeSet(ctx.db, user.id);
  if (!set) throw authError("recoveryCodesNotEnrolled");
  const factor = (await factorsOf(ctx.db, user.id)).find((f) => f.id === set.mfa_factor_id);
  if (!factor) throw authError("recoveryCodesNotEnrolled");
  const { codes, hashes } = await newCodes(ctx);
  await ctx.db.transaction(async (tx) => {
    await replaceRecoveryCodes(tx, set.id, hashes);
    await audit(tx, clientIp(request), user, "recovery_codes_regenerated", {
      factor_id: factor.id,
      count: codes.length,
    });
  });
  return Response.json({
    id: factor.id,
    type: "recovery_code",
    friendly_name: factor.friendly_name || undefined,
    total: codes.length,
    codes,
  });
}

/** POST /factors/recovery-codes/verify: one unused code (any case, hyphens and spaces ignored)
 * raises the caller's session to aal2 (`mfa/recovery_code` in amr); it is used up. Wrong codes
 * count towards a lockout (429 mfa_recovery_codes_locked). */
export async function verifyRecoveryCode(ctx: AuthContext, request: Request): Promise<Response> {
  const caller = await factorCaller(ctx, request);
  const session = caller.session;
  if (!session) throw authError("sessionFromJwtMissing");
  const settings = ctx.config.auth.mfa.recoveryCodes;
  if (!settings.verifyEnabled) throw authError("recoveryCodesVerifyDisabled");
  // Each guess hashes every unused code: guesses come out of the MFA verify limiter's bucket for
  // this address (our choice, as upstream has no recovery codes yet: docs/decisions/021).
  ctx.rateLimits.check("mfa_verify", request);
  const params = await readParams(request, { code: "string" });
  const code = normalizeRecoveryCode(params.code ?? "");
  if (code === "") throw authError("codeRequired");
  const set = await findRecoveryCodeSet(ctx.db, caller.user.id);
  if (!set) throw authError("recoveryCodeInvalid");
  if (set.locked) throw authError("recoveryCodesLocked");

  // Every unused code is compared (no early exit), outside the transaction (hashing is slow).
  let matched: string | undefined;
  for (const entry of await unusedRecoveryCodes(ctx.db, set.id)) {
    if ((await recoveryCodeMatches(entry.code_hash, code)) && !matched) matched = entry.id;
  }

  const outcome = await ctx.db.transaction(async (tx) => {
    const locked = await lockRecoveryCodeSet(tx, caller.user.id);
    if (!locked) return { error: authError("recoveryCodeInvalid") };
    if (locked.locked) return { error: authError("recoveryCodesLocked") };
    if (locked.lock_expired) await resetRecoveryCodeLockout(tx, locked.id);
    // A code another request used meanwhile counts as a wrong one; the failure is kept.
    if (!matched || !(await consumeRecoveryCode(tx, matched))) {
      await registerRecoveryCodeFailure(
        tx,
        locked.id,
        settings.maxVerifyAttempts,
        settings.lockoutSeconds,
      );
      return { error: authError("recoveryCodeInvalid") };
    }
    await resetRecoveryCodeLockout(tx, locked.id);
    const { remaining } = await countRecoveryCodes(tx, locked.id);
    await audit(tx, clientIp(request), caller.user, "recovery_codes_verified", {
      factor_id: locked.mfa_factor_id,
      remaining,
    });
    const user = (await findUserById(tx, caller.user.id)) ?? caller.user;
    const body = await upgradeSession(
      ctx,
      tx,
      user,
      session.id,
      "mfa/recovery_code",
      locked.mfa_factor_id,
      request,
    );
    await deleteSessionsBelowAal2(tx, user.id);
    return { body };
  });
  if (outcome.error) throw outcome.error;
  return Response.json(outcome.body);
}

/** DELETE /factors/recovery-codes: the factor and its codes go (aal2); sessions it raised drop
 * to aal1. */
export async function deleteRecoveryCodes(ctx: AuthContext, request: Request): Promise<Response> {
  const { user, session } = await factorCaller(ctx, request);
  if (!session) throw authError("sessionFromJwtMissing");
  if (session.aal !== "aal2") throw authError("recoveryCodesDeleteNeedsAal2");
  const factor = (await factorsOf(ctx.db, user.id)).find((f) => f.factor_type === "recovery_code");
  if (!factor) throw authError("recoveryCodesNotEnrolled");
  await ctx.db.transaction(async (tx) => {
    await audit(tx, clientIp(request), user, "recovery_codes_deleted", { factor_id: factor.id });
    await deleteFactor(tx, factor);
  });
  await sendNotification(ctx, ctx.db, request, user, "mfa_factor_unenrolled", {
    factorType: "recovery_code",
  });
  return Response.json({ id: factor.id });
}

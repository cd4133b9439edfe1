import type { AuthContext } from "../context.ts";
import { AuthError } from "../errors.ts";
import { logoutSessions } from "../models/sessions.ts";
import { hookEnabled, invokeHook, rejects } from "./hooks.ts";

/**
 * The verification attempt hooks: after Auth has checked a password (the password grant) or an
 * MFA code (TOTP, phone), and before it answers, the hook learns whether it was right and may
 * refuse the attempt anyway ("decision": "reject"), to lock accounts out after too many tries.
 * A refused MFA attempt also signs the user out everywhere; a refused password attempt does when
 * the hook says `should_logout_user`.
 */

/** [auth.hook.password_verification_attempt] (token.go ResourceOwnerPasswordGrant). */
export async function passwordVerificationAttempt(
  ctx: AuthContext,
  request: Request,
  userId: string,
  valid: boolean,
): Promise<void> {
  if (!hookEnabled(ctx, "password_verification_attempt")) return;
  const output = await invokeHook(ctx, ctx.db, "password_verification_attempt", request, {
    user_id: userId,
    valid,
  });
  if (!rejects(output)) return;
  if (output.should_logout_user === true) await logoutSessions(ctx.db, userId, undefined, "global");
  throw new AuthError(
    400,
    "invalid_credentials",
    messageOr(output, "Further password verification attempts will be rejected."),
  );
}

/** [auth.hook.mfa_verification_attempt] (mfa.go verifyTOTPFactor, verifyPhoneFactor). */
export async function mfaVerificationAttempt(
  ctx: AuthContext,
  request: Request,
  factor: { id: string; user_id: string; factor_type: string },
  valid: boolean,
): Promise<void> {
  if (!hookEnabled(ctx, "mfa_verification_attempt")) return;
  const output = await invokeHook(ctx, ctx.db, "mfa_verification_attempt", request, {
    user_id: factor.user_id,
    factor_id: factor.id,
    factor_type: factor.factor_type,
    valid,
  });
  if (!rejects(output)) return;
  await logoutSessions(ctx.db, factor.user_id, undefined, "global");
  throw new AuthError(
    403,
    "mfa_verification_rejected",
    messageOr(output, "Further MFA verification attempts will be rejected."),
  );
}

const messageOr = (output: Record<string, unknown>, fallback: string) =>
  typeof output.message === "string" && output.message !== "" ? output.message : fallback;

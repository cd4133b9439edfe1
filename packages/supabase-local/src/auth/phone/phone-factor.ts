import { timingSafeEqual } from "node:crypto";
import type { AuthContext } from "../context.ts";
import { AuthError, authError, rateLimited } from "../errors.ts";
import { hookEnabled, invokeHook } from "../hooks/hooks.ts";
import { validateChannel } from "../http/validate.ts";
import type { Db } from "../models/db.ts";
import { type FactorRow, secondsUntilChallengeAllowed } from "../models/factors.ts";
import { generateOtp } from "../models/one-time-tokens.ts";
import { type UserRow, userJson } from "../models/users.ts";
import { testOtp } from "./sms.ts";

/**
 * A phone number as a second factor (mfa.go's challengePhoneFactor / verifyPhoneFactor). The real
 * service texts a fresh code of [auth.mfa.phone] otp_length to the factor's number, through the
 * send SMS hook when it is on (sms_type "mfa"), as here. No SMS provider is called here, so
 * without the hook a number in [auth.sms.test_otp] is challenged with its fixed code and any other
 * meets what the real service answers without an SMS provider.
 */

/** The code of a new challenge of `factor`: the channel is checked, then [auth.mfa.phone]
 * max_frequency since the factor's last challenge, then the number's code. */
export async function phoneChallengeCode(
  ctx: AuthContext,
  db: Db,
  factor: FactorRow,
  channel: string | undefined,
  caller: { request: Request; user: UserRow },
): Promise<string> {
  validateChannel(channel);
  const period = ctx.config.auth.mfa.phone.maxFrequencySeconds;
  const left = await secondsUntilChallengeAllowed(db, factor.id, period);
  if (left !== null && left >= 0) {
    throw rateLimited(
      "over_sms_send_rate_limit",
      `For security purposes, you can only request this after ${Math.trunc(left)} seconds.`,
    );
  }
  if (hookEnabled(ctx, "send_sms")) {
    const code = generateOtp(ctx.config.auth.mfa.phone.otpLength);
    const sms = { otp: code, sms_type: "mfa", phone: factor.phone ?? "" };
    const user = await userJson(db, caller.user);
    await invokeHook(ctx, db, "send_sms", caller.request, { user, sms }).catch(() => {
      throw new AuthError(500, "unexpected_failure", "error invoking hook");
    });
    return code;
  }
  const code = testOtp(ctx, factor.phone ?? "");
  if (code === undefined) throw authError("mfaSmsProviderMissing");
  return code;
}

/** The code sent for the challenge, compared in constant time. */
export function phoneCodeMatches(sent: string | null, code: string): boolean {
  const a = Buffer.from(sent ?? "");
  const b = Buffer.from(code);
  return sent !== null && a.length === b.length && timingSafeEqual(a, b);
}

import type { AuthContext } from "../context.ts";
import { authError, rateLimited } from "../errors.ts";
import type { Db } from "../models/db.ts";
import { storeToken, type TokenType } from "../models/one-time-tokens.ts";
import {
  type SentAtColumn,
  secondsUntilCanSend,
  stampSent,
  startPhoneChange,
  type UserRow,
} from "../models/users.ts";

/**
 * SMS codes (sendPhoneConfirmation). Nothing is ever sent: a number in [auth.sms.test_otp] gets
 * its fixed code, as the real service uses it instead of its provider; any other number meets what
 * the real service answers without an SMS provider.
 */

/** How long an SMS code is valid, in seconds: the CLI gives Auth GOTRUE_SMS_OTP_EXP=6000. */
export const SMS_OTP_EXPIRY = 6000;

type SmsKind = "confirmation" | "phone_change" | "reauthentication";

const KINDS: Record<SmsKind, { token: TokenType; sentAt: SentAtColumn }> = {
  confirmation: { token: "confirmation_token", sentAt: "confirmation_sent_at" },
  phone_change: { token: "phone_change_token", sentAt: "phone_change_sent_at" },
  reauthentication: { token: "reauthentication_token", sentAt: "reauthentication_sent_at" },
};

/** The test code of a number, if [auth.sms.test_otp] has one. */
export function testOtp(ctx: AuthContext, phone: string): string | undefined {
  return Object.hasOwn(ctx.config.auth.sms.testOtp, phone)
    ? ctx.config.auth.sms.testOtp[phone]
    : undefined;
}

/**
 * "Sends" the code of `kind` to `phone` (for a phone change, the new number): [auth.sms]
 * max_frequency first (as for real codes), then the hashed code stored with its send time. Returns
 * the message id the real service reports for a test code. A number without a test code would need
 * a real SMS: with confirmations on it first counts against [auth.rate_limit] sms_sent (as the real
 * service counts before it calls its provider), then meets the missing provider.
 */
export async function sendSms(
  ctx: AuthContext,
  db: Db,
  user: UserRow,
  phone: string,
  kind: SmsKind,
): Promise<string> {
  const spec = KINDS[kind];
  const period = ctx.config.auth.sms.maxFrequencySeconds;
  const left = await secondsUntilCanSend(db, user.id, spec.sentAt, period);
  if (left != null && left > 0) {
    throw rateLimited(
      "over_sms_send_rate_limit",
      `For security purposes, you can only request this after ${Math.floor(left)} seconds.`,
    );
  }
  const otp = testOtp(ctx, phone);
  if (otp === undefined) {
    if (ctx.config.auth.sms.enableConfirmations) ctx.rateLimits.checkSms();
    throw authError("smsProviderMissing");
  }
  if (kind === "phone_change") await startPhoneChange(db, user.id, phone);
  await storeToken(db, user.id, spec.token, phone, otp, false);
  await stampSent(db, user.id, spec.sentAt);
  return "test-otp";
}

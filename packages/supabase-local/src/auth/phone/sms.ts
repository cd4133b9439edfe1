import type { AuthContext } from "../context.ts";
import { authError, rateLimited } from "../errors.ts";
import { hookEnabled, invokeHook } from "../hooks/hooks.ts";
import type { Db } from "../models/db.ts";
import { generateOtp, storeToken, type TokenType } from "../models/one-time-tokens.ts";
import {
  type SentAtColumn,
  secondsUntilCanSend,
  stampSent,
  startPhoneChange,
  type UserRow,
  userJson,
} from "../models/users.ts";

/**
 * SMS codes (sendPhoneConfirmation). No SMS provider is ever called: a number in
 * [auth.sms.test_otp] gets its fixed code, as the real service uses it instead of its provider; any
 * other number gets a fresh code through the send SMS hook ([auth.hook.send_sms]) when it is on,
 * as the real service hands it the code instead of its provider, and otherwise meets what the real
 * service answers without an SMS provider.
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

/** The length of the codes Auth makes for SMS (GOTRUE_SMS_OTP_LENGTH; the CLI leaves it at 6). */
const SMS_OTP_LENGTH = 6;

/**
 * "Sends" the code of `kind` to `phone` (for a phone change, the new number): [auth.sms]
 * max_frequency first (as for real codes), then the hashed code stored with its send time. Returns
 * the message id the real service reports ("test-otp" for a test code, none for the hook). A number
 * without a test code needs a real SMS: with confirmations on it first counts against
 * [auth.rate_limit] sms_sent (as the real service counts before it calls its provider), then goes
 * to the send SMS hook, or meets the missing provider.
 */
export async function sendSms(
  ctx: AuthContext,
  db: Db,
  user: UserRow,
  phone: string,
  kind: SmsKind,
  request: Request,
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
  let otp = testOtp(ctx, phone);
  let messageId = "test-otp";
  if (otp === undefined) {
    if (ctx.config.auth.sms.enableConfirmations) ctx.rateLimits.checkSms();
    if (!hookEnabled(ctx, "send_sms")) throw authError("smsProviderMissing");
    otp = generateOtp(SMS_OTP_LENGTH);
    messageId = "";
    await invokeHook(ctx, db, "send_sms", request, {
      user: await userJson(db, user),
      sms: { otp, phone },
    });
  }
  if (kind === "phone_change") await startPhoneChange(db, user.id, phone);
  await storeToken(db, user.id, spec.token, phone, otp, false);
  await stampSent(db, user.id, spec.sentAt);
  return messageId;
}

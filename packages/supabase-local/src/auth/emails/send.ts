import type { AuthContext } from "../context.ts";
import { rateLimited } from "../errors.ts";
import { hookEnabled, invokeHook } from "../hooks/hooks.ts";
import type { Db } from "../models/db.ts";
import { generateOtp, storeToken, type TokenType } from "../models/one-time-tokens.ts";
import {
  markInvited,
  type SentAtColumn,
  secondsUntilCanSend,
  stampSent,
  startEmailChange,
  type UserRow,
  userJson,
} from "../models/users.ts";
import { type MailType, type NotificationKind, sendMail, verifyUrl } from "./templates.ts";

/** How an email is sent: the request it is for, where its link leads, whether it is PKCE's, and
 * whether it is delivered at all (admin generate_link only makes it) and max_frequency applies. */
export interface SendOptions {
  request: Request;
  redirectTo: string;
  pkce: boolean;
  deliver?: boolean;
  checkFrequency?: boolean;
}

/**
 * The send email hook ([auth.hook.send_email]): when it is on, Auth sends no email itself; the
 * hook gets the user and what the email would carry (EmailData: every field, empty where it does
 * not apply), and its error fails the request. Returns whether it took the email.
 */
async function sendThroughHook(
  ctx: AuthContext,
  db: Db,
  request: Request,
  user: UserRow,
  data: Partial<Record<(typeof EMAIL_DATA_FIELDS)[number], string>>,
): Promise<boolean> {
  if (!hookEnabled(ctx, "send_email")) return false;
  const emailData = Object.fromEntries(
    EMAIL_DATA_FIELDS.map((field) => [field, data[field] ?? ""]),
  );
  emailData.site_url = ctx.externalUrl();
  await invokeHook(ctx, db, "send_email", request, {
    user: await userJson(db, user),
    email_data: emailData,
  });
  return true;
}

const EMAIL_DATA_FIELDS = [
  "token",
  "token_hash",
  "redirect_to",
  "email_action_type",
  "site_url",
  "token_new",
  "token_hash_new",
  "old_email",
  "old_phone",
  "provider",
  "factor_type",
] as const;

/** What a sent (or, for generate_link, only generated) email carries. */
export interface Sent {
  otp: string;
  hashedToken: string;
  actionLink: string;
  verifyType: string;
  redirectTo: string;
}

interface Flow {
  mail: MailType;
  token: TokenType;
  /** auth.users column stamped with the send time. */
  sentAt: SentAtColumn;
  verifyType: string;
}

const FLOWS = {
  signup: {
    mail: "confirmation",
    token: "confirmation_token",
    sentAt: "confirmation_sent_at",
    verifyType: "signup",
  },
  invite: {
    mail: "invite",
    token: "confirmation_token",
    sentAt: "confirmation_sent_at",
    verifyType: "invite",
  },
  magiclink: {
    mail: "magic_link",
    token: "recovery_token",
    sentAt: "recovery_sent_at",
    verifyType: "magiclink",
  },
  recovery: {
    mail: "recovery",
    token: "recovery_token",
    sentAt: "recovery_sent_at",
    verifyType: "recovery",
  },
  reauthentication: {
    mail: "reauthentication",
    token: "reauthentication_token",
    sentAt: "reauthentication_sent_at",
    verifyType: "reauthentication",
  },
} as const satisfies Record<string, Flow>;

export type EmailFlow = keyof typeof FLOWS;

/** max_frequency: the same kind of email to the same user at most once per period (429). */
export async function assertCanSend(
  ctx: AuthContext,
  db: Db,
  userId: string,
  column: Flow["sentAt"],
): Promise<void> {
  const left = await secondsUntilCanSend(
    db,
    userId,
    column,
    ctx.config.auth.email.maxFrequencySeconds,
  );
  if (left != null && left > 0) {
    throw rateLimited(
      "over_email_send_rate_limit",
      `For security purposes, you can only request this after ${Math.floor(left)} seconds.`,
    );
  }
}

/** email_sent per hour, counted only when confirmations are on (the real `!Mailer.Autoconfirm`). */
function checkEmailRate(ctx: AuthContext): void {
  if (ctx.config.auth.email.enableConfirmations) ctx.rateLimits.checkEmail();
}

/**
 * Creates the one-time token for a flow, stamps the send time and delivers the email to the inbox
 * (unless `deliver` is false: admin generate_link). Checks max_frequency first.
 */
export async function sendEmail(
  ctx: AuthContext,
  db: Db,
  user: UserRow,
  flow: EmailFlow,
  options: SendOptions,
): Promise<Sent> {
  const spec: Flow = FLOWS[flow];
  const email = user.email ?? "";
  if (options.checkFrequency !== false) await assertCanSend(ctx, db, user.id, spec.sentAt);
  if (options.deliver !== false) checkEmailRate(ctx);
  const otp = generateOtp(ctx.config.auth.email.otpLength);
  const hashedToken = await storeToken(db, user.id, spec.token, email, otp, options.pkce);
  await stampSent(db, user.id, spec.sentAt);
  if (flow === "invite") await markInvited(db, user.id);
  const actionLink = verifyUrl(ctx, hashedToken, spec.verifyType, options.redirectTo);
  const hooked =
    options.deliver !== false &&
    (await sendThroughHook(ctx, db, options.request, user, {
      token: otp,
      token_hash: hashedToken,
      redirect_to: options.redirectTo,
      email_action_type: spec.verifyType,
    }));
  if (options.deliver !== false && !hooked) {
    sendMail(ctx, {
      type: spec.mail,
      to: email,
      token: otp,
      tokenHash: hashedToken,
      verifyType: spec.verifyType,
      redirectTo: options.redirectTo,
      data: user.raw_user_meta_data,
    });
  }
  return {
    otp,
    hashedToken,
    actionLink,
    verifyType: spec.verifyType,
    redirectTo: options.redirectTo,
  };
}

/**
 * Email change: a token for the new address, and with double_confirm_changes one for the current
 * address too (each gets its own email with its own code).
 */
export async function sendEmailChange(
  ctx: AuthContext,
  db: Db,
  user: UserRow,
  newEmail: string,
  options: SendOptions,
): Promise<{ newSide: Sent; currentSide?: Sent }> {
  if (options.checkFrequency !== false)
    await assertCanSend(ctx, db, user.id, "email_change_sent_at");
  if (options.deliver !== false) checkEmailRate(ctx);
  const double = ctx.config.auth.email.doubleConfirmChanges && !!user.email;
  const deliver = options.deliver !== false && !hookEnabled(ctx, "send_email");
  const make = async (to: string, type: TokenType): Promise<Sent> => {
    const otp = generateOtp(ctx.config.auth.email.otpLength);
    const hashedToken = await storeToken(db, user.id, type, to, otp, options.pkce);
    const actionLink = verifyUrl(ctx, hashedToken, "email_change", options.redirectTo);
    if (deliver) {
      sendMail(ctx, {
        type: "email_change",
        to,
        token: otp,
        tokenHash: hashedToken,
        verifyType: "email_change",
        redirectTo: options.redirectTo,
        email: user.email ?? "",
        newEmail,
        data: user.raw_user_meta_data,
      });
    }
    return {
      otp,
      hashedToken,
      actionLink,
      verifyType: "email_change",
      redirectTo: options.redirectTo,
    };
  };
  await startEmailChange(db, user.id, newEmail);
  const newSide = await make(newEmail, "email_change_token_new");
  const currentSide = double
    ? await make(user.email ?? "", "email_change_token_current")
    : undefined;
  if (options.deliver !== false) {
    // One hook call for both addresses, with Auth's pairing of codes and hashes: with a double
    // confirmation `token` is the current address's code and `token_hash` the new one's hash.
    await sendThroughHook(ctx, db, options.request, user, {
      token: (currentSide ?? newSide).otp,
      token_hash: newSide.hashedToken,
      token_new: currentSide ? newSide.otp : "",
      token_hash_new: currentSide?.hashedToken ?? "",
      redirect_to: options.redirectTo,
      email_action_type: "email_change",
    });
  }
  return { newSide, currentSide };
}

/**
 * A security notification ([auth.email.notification.<kind>] enabled) to the user's address, or to
 * `recipient` (the old address of an email change, the address before an unlink). It counts
 * towards email_sent like any email; as on the real service, a notification that cannot be sent
 * is logged and the change it reports stands.
 */
export async function sendNotification(
  ctx: AuthContext,
  db: Db,
  request: Request,
  user: UserRow,
  kind: NotificationKind,
  details: { recipient?: string; oldEmail?: string; provider?: string; factorType?: string } = {},
): Promise<void> {
  if (!ctx.config.auth.email.notifications[kind]?.enabled) return;
  const to = details.recipient ?? user.email ?? "";
  if (!to) return;
  try {
    checkEmailRate(ctx);
    const hooked = await sendThroughHook(ctx, db, request, user, {
      email_action_type: `${kind}_notification`,
      old_email: details.oldEmail,
      provider: details.provider,
      factor_type: details.factorType,
    });
    if (hooked) return;
    sendMail(ctx, {
      type: `${kind}_notification`,
      to,
      token: "",
      redirectTo: "",
      email: kind === "identity_unlinked" ? to : (user.email ?? ""),
      oldEmail: details.oldEmail,
      provider: details.provider,
      factorType: details.factorType,
      data: user.raw_user_meta_data,
    });
  } catch (error) {
    console.warn(`[local auth] unable to send the ${kind} notification:`, (error as Error).message);
  }
}

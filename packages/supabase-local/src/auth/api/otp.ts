import { randomBytes } from "node:crypto";
import type { AuthContext } from "../context.ts";
import { sendEmail } from "../emails/send.ts";
import { authError } from "../errors.ts";
import { beforeUserCreated } from "../hooks/before-user-created.ts";
import { redirectTarget } from "../http/redirect.ts";
import { clientIp, readParams } from "../http/request.ts";
import { validateChannel, validateEmail, validatePhone } from "../http/validate.ts";
import { audit } from "../models/audit.ts";
import { createFlowState } from "../models/flow-state.ts";
import { createUser, findUserByEmail, findUserByPhone } from "../models/users.ts";
import { signUpWithPhone } from "../phone/phone-signup.ts";
import { sendSms } from "../phone/sms.ts";
import { pkceRequested } from "../tokens/pkce.ts";

/**
 * POST /otp: an email with a magic link and a code (signInWithOtp). A new address gets an account
 * when create_user is true (the default) and signups are on; unconfirmed users get the
 * confirmation email instead, as the real MagicLink handler does.
 */
export async function otp(ctx: AuthContext, request: Request): Promise<Response> {
  const params = await readParams(request, {
    email: "string",
    phone: "string",
    data: "object",
    create_user: "boolean",
    code_challenge: "string",
    code_challenge_method: "string",
    channel: "string",
  });
  if (params.email && params.phone) throw authError("otpEmailOrPhone");
  if (params.email && params.channel) throw authError("otpChannelNeedsPhone");
  if (!params.email && !params.phone) throw authError("otpNeedsEmailOrPhone");
  if (!params.email) return smsOtp(ctx, request, params);
  // Auth's Otp answers an unknown address with create_user false first, then hands over to
  // MagicLink, which refuses while the email provider is off
  if (params.create_user === false && !(await findUserByEmail(ctx.db, validateEmail(params.email))))
    throw authError("otpSignupDisabled");
  if (!ctx.config.auth.email.enabled) throw authError("emailLoginsDisabled");
  const email = validateEmail(params.email);
  const pkce = pkceRequested(params);
  const createUserAllowed = params.create_user ?? true;
  const redirectTo = redirectTarget(ctx.config, request);

  const known = await findUserByEmail(ctx.db, email);
  const newId =
    known || !createUserAllowed || !ctx.config.auth.enableSignup
      ? undefined
      : await beforeUserCreated(ctx, ctx.db, request, {
          email,
          provider: "email",
          userMetadata: params.data ?? {},
        });
  await ctx.db.transaction(async (tx) => {
    let user = await findUserByEmail(tx, email);
    if (!user) {
      if (!createUserAllowed || !ctx.config.auth.enableSignup) throw authError("otpSignupDisabled");
      user = await createUser(tx, {
        id: newId,
        email,
        encryptedPassword: null,
        userMetadata: params.data ?? {},
        provider: "email",
      });
      await audit(tx, clientIp(request), user, "user_confirmation_requested", {
        provider: "email",
      });
    }
    if (!user.email_confirmed_at && !ctx.config.auth.email.enableConfirmations) {
      // autoconfirm: the magic link itself confirms the address
    }
    const flow = user.email_confirmed_at ? "magiclink" : "signup";
    if (pkce)
      await createFlowState(tx, params, flow === "signup" ? "email/signup" : "magiclink", user.id);
    await audit(tx, clientIp(request), user, "user_recovery_requested");
    await sendEmail(ctx, tx, user, flow, { request, redirectTo, pkce });
  });
  return Response.json({});
}

/** POST /magiclink: refused before its body is read while the email provider is off (MagicLink),
 * else as POST /otp. */
export async function magicLink(ctx: AuthContext, request: Request): Promise<Response> {
  if (!ctx.config.auth.email.enabled) throw authError("emailLoginsDisabled");
  return otp(ctx, request);
}

/**
 * POST /otp with a phone (SmsOtp): a number new or not yet confirmed signs up first (with a random
 * password); with confirmations off it is confirmed then and gets its sign-in code like a known
 * number. The code is the number's [auth.sms.test_otp] one (sms.ts).
 */
async function smsOtp(
  ctx: AuthContext,
  request: Request,
  params: {
    phone?: string;
    data?: Record<string, unknown>;
    create_user?: boolean;
    channel?: string;
  },
): Promise<Response> {
  if (params.create_user === false) {
    const known = await findUserByPhone(ctx.db, validatePhone(params.phone));
    if (!known) throw authError("otpSignupDisabled");
  }
  if (!ctx.config.auth.sms.enableSignup) throw authError("phoneProviderDisabled");
  const phone = validatePhone(params.phone);
  validateChannel(params.channel);
  const channel = params.channel || "sms";
  let user = await findUserByPhone(ctx.db, phone);
  if (!user?.phone_confirmed_at) {
    if (!ctx.config.auth.enableSignup) throw authError("signupDisabled");
    const password = randomBytes(48).toString("base64url");
    const data = params.data ?? {};
    await signUpWithPhone(ctx, request, { phone, password, data, channel });
    if (ctx.config.auth.sms.enableConfirmations) return Response.json({});
    user = await findUserByPhone(ctx.db, phone);
    if (!user) throw authError("otpExpired");
  }
  const known = user;
  const messageId = await ctx.db.transaction(async (tx) => {
    await audit(tx, clientIp(request), known, "user_recovery_requested", { channel });
    return sendSms(ctx, tx, known, phone, "confirmation", request);
  });
  // message_id is left out when there is none (the send SMS hook reports no id)
  return Response.json(messageId ? { message_id: messageId } : {});
}

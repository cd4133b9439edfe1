import type { AuthContext } from "../context.ts";
import { sendEmail, sendEmailChange } from "../emails/send.ts";
import { authError } from "../errors.ts";
import { redirectTarget } from "../http/redirect.ts";
import { clientIp, readParams } from "../http/request.ts";
import { validateEmail, validatePhone } from "../http/validate.ts";
import { audit } from "../models/audit.ts";
import { createFlowState } from "../models/flow-state.ts";
import { findUserByEmail, findUserByPhone } from "../models/users.ts";
import { sendSms } from "../phone/sms.ts";
import { pkceRequested } from "../tokens/pkce.ts";

/** POST /resend: the signup confirmation or the email-change email again (same 200 for unknown). */
export async function resend(ctx: AuthContext, request: Request): Promise<Response> {
  const params = await readParams(request, {
    type: "string",
    email: "string",
    phone: "string",
    code_challenge: "string",
    code_challenge_method: "string",
  });
  const type = params.type ?? "";
  if (!["signup", "email_change", "sms", "phone_change"].includes(type))
    throw authError("resendBadType");
  const emailType = type === "signup" || type === "email_change";
  if (emailType && !params.email) throw authError("resendNeedsEmail");
  if (!emailType && !params.phone) throw authError("resendNeedsPhone");
  if (params.email && params.phone)
    throw authError("otpEmailOrPhone", "Only an email address or phone number should be provided.");
  if (params.email && !ctx.config.auth.email.enabled) {
    throw authError("emailLoginsDisabled").withStatus(400);
  }
  if (!emailType) return resendSms(ctx, request, type, params.phone);
  const email = validateEmail(params.email);
  const redirectTo = redirectTarget(ctx.config, request);
  // As the real service: a code_challenge starts a new PKCE flow for the resent link.
  const challenged = pkceRequested(params);
  await ctx.db.transaction(async (tx) => {
    const user = await findUserByEmail(tx, email);
    if (!user) return;
    const pkce =
      challenged ||
      user.confirmation_token.startsWith("pkce_") ||
      user.email_change_token_new.startsWith("pkce_");
    if (type === "signup") {
      if (user.email_confirmed_at) return;
      if (challenged) await createFlowState(tx, params, "email/signup", user.id);
      await sendEmail(ctx, tx, user, "signup", { request, redirectTo, pkce });
    } else if (user.email_change) {
      if (challenged) await createFlowState(tx, params, "email_change", user.id);
      await sendEmailChange(ctx, tx, user, user.email_change, { request, redirectTo, pkce });
    }
  });
  return Response.json({});
}

/** POST /resend for `sms` (the sign-up code) and `phone_change` (the new number's code). */
async function resendSms(
  ctx: AuthContext,
  request: Request,
  type: string,
  rawPhone: string | undefined,
): Promise<Response> {
  if (!ctx.config.auth.sms.enableSignup) {
    throw authError("phoneProviderDisabled", "Phone logins are disabled");
  }
  const phone = validatePhone(rawPhone);
  const user = await findUserByPhone(ctx.db, phone);
  if (!user) return Response.json({});
  if (type === "sms" ? user.phone_confirmed_at : !user.phone_change) return Response.json({});
  const messageId = await ctx.db.transaction(async (tx) => {
    if (type === "sms") {
      await audit(tx, clientIp(request), user, "user_recovery_requested");
      return sendSms(ctx, tx, user, phone, "confirmation", request);
    }
    return sendSms(ctx, tx, user, user.phone_change, "phone_change", request);
  });
  return Response.json(messageId ? { message_id: messageId } : {});
}

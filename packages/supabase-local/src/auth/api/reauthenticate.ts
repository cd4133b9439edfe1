import type { AuthContext } from "../context.ts";
import { sendEmail } from "../emails/send.ts";
import { authError } from "../errors.ts";
import { requireUser } from "../http/authenticate.ts";
import { clientIp } from "../http/request.ts";
import { audit } from "../models/audit.ts";
import { sendSms } from "../phone/sms.ts";

/** GET /reauthenticate: emails (or, for a phone-only user, "texts") a nonce (code) that PUT /user
 * accepts as `nonce`. */
export async function reauthenticate(ctx: AuthContext, request: Request): Promise<Response> {
  const { user } = await requireUser(ctx, request);
  if (!user.email && !user.phone) throw authError("reauthNeedsEmailOrPhone");
  if (!user.email && user.phone) {
    if (!user.phone_confirmed_at) throw authError("verifyPhoneFirst");
    const phone = user.phone;
    const messageId = await ctx.db.transaction(async (tx) => {
      await audit(tx, clientIp(request), user, "user_reauthenticate_requested");
      return sendSms(ctx, tx, user, phone, "reauthentication", request);
    });
    return Response.json(messageId ? { message_id: messageId } : {});
  }
  if (!user.email_confirmed_at) throw authError("verifyEmailFirst");
  await ctx.db.transaction(async (tx) => {
    await audit(tx, clientIp(request), user, "user_reauthenticate_requested");
    await sendEmail(ctx, tx, user, "reauthentication", {
      request,
      redirectTo: ctx.config.auth.siteUrl,
      pkce: false,
    });
  });
  return Response.json({});
}

import type { AuthContext } from "../context.ts";
import { sendEmail } from "../emails/send.ts";
import { authError } from "../errors.ts";
import { audit } from "../models/audit.ts";
import { createFlowState } from "../models/flow-state.ts";
import { createUser, findUserByEmail } from "../models/users.ts";
import { pkceRequested } from "../pkce.ts";
import { redirectTarget } from "../redirect.ts";
import { clientIp, readParams } from "../request.ts";
import { validateEmail } from "../validate.ts";

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
  if (!params.email && !params.phone) throw authError("otpNeedsEmailOrPhone");
  if (!params.email) throw authError("phoneProviderDisabled");
  const email = validateEmail(params.email);
  const pkce = pkceRequested(params);
  const createUserAllowed = params.create_user ?? true;
  const redirectTo = redirectTarget(ctx.config, request);

  await ctx.db.transaction(async (tx) => {
    let user = await findUserByEmail(tx, email);
    if (!user) {
      if (!createUserAllowed || !ctx.config.auth.enableSignup) throw authError("otpSignupDisabled");
      user = await createUser(tx, {
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
    await sendEmail(ctx, tx, user, flow, { redirectTo, pkce });
  });
  return Response.json({});
}

import { requireUser } from "../authenticate.ts";
import type { AuthContext } from "../context.ts";
import { sendEmail } from "../emails/send.ts";
import { authError } from "../errors.ts";

/** GET /reauthenticate: emails a nonce (code) that PUT /user accepts as `nonce`. */
export async function reauthenticate(ctx: AuthContext, request: Request): Promise<Response> {
  const { user } = await requireUser(ctx, request);
  if (!user.email) throw authError("reauthNeedsEmailOrPhone");
  if (!user.email_confirmed_at) throw authError("verifyEmailFirst");
  await ctx.db.transaction(async (tx) => {
    await sendEmail(ctx, tx, user, "reauthentication", {
      redirectTo: ctx.config.auth.siteUrl,
      pkce: false,
    });
  });
  return Response.json({});
}

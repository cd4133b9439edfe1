import type { AuthContext } from "../context.ts";
import { sendEmail } from "../emails/send.ts";
import { authError } from "../errors.ts";
import { redirectTarget } from "../http/redirect.ts";
import { clientIp, readParams } from "../http/request.ts";
import { validateEmail } from "../http/validate.ts";
import { audit } from "../models/audit.ts";
import { createFlowState } from "../models/flow-state.ts";
import { findUserByEmail } from "../models/users.ts";
import { pkceRequested } from "../tokens/pkce.ts";

/** POST /recover: a password-recovery email. Unknown addresses get the same 200 (no enumeration). */
export async function recover(ctx: AuthContext, request: Request): Promise<Response> {
  // requireEmailProvider, the route's middleware after its rate limit: before the body is read
  if (!ctx.config.auth.email.enabled) throw authError("emailLoginsDisabled").withStatus(400);
  const params = await readParams(request, {
    email: "string",
    code_challenge: "string",
    code_challenge_method: "string",
  });
  if (!params.email) throw authError("recoverNeedsEmail");
  const email = validateEmail(params.email);
  const pkce = pkceRequested(params);
  const redirectTo = redirectTarget(ctx.config, request);
  await ctx.db.transaction(async (tx) => {
    const user = await findUserByEmail(tx, email);
    if (!user) return;
    if (pkce) await createFlowState(tx, params, "recovery", user.id);
    await audit(tx, clientIp(request), user, "user_recovery_requested");
    await sendEmail(ctx, tx, user, "recovery", { request, redirectTo, pkce });
  });
  return Response.json({});
}

import type { AuthContext } from "../context.ts";
import { sendEmail } from "../emails/send.ts";
import { authError } from "../errors.ts";
import { beforeUserCreated } from "../hooks/before-user-created.ts";
import { requireAdmin } from "../http/authenticate.ts";
import { redirectTarget } from "../http/redirect.ts";
import { clientIp, readParams } from "../http/request.ts";
import { validateEmail } from "../http/validate.ts";
import { audit } from "../models/audit.ts";
import { createUser, findUserByEmail, findUserById, userJson } from "../models/users.ts";

/** POST /invite (admin.inviteUserByEmail): creates the user and mails an invite link. */
export async function invite(ctx: AuthContext, request: Request): Promise<Response> {
  await requireAdmin(ctx, request);
  const params = await readParams(request, { email: "string", data: "object" });
  const email = validateEmail(params.email);
  const redirectTo = redirectTarget(ctx.config, request);
  const known = await findUserByEmail(ctx.db, email);
  if (known?.email_confirmed_at) throw authError("emailExists");
  const newId = known
    ? undefined
    : await beforeUserCreated(ctx, ctx.db, request, {
        email,
        provider: "email",
        userMetadata: params.data ?? {},
      });
  const user = await ctx.db.transaction(async (tx) => {
    let user = await findUserByEmail(tx, email);
    if (user?.email_confirmed_at) throw authError("emailExists");
    if (!user) {
      user = await createUser(tx, {
        id: newId,
        email,
        encryptedPassword: null,
        userMetadata: params.data ?? {},
        provider: "email",
      });
    }
    await audit(tx, clientIp(request), user, "user_invited", { user_email: email });
    await sendEmail(ctx, tx, user, "invite", { request, redirectTo, pkce: false });
    return (await findUserById(tx, user.id)) ?? user;
  });
  return Response.json(await userJson(ctx.db, user));
}

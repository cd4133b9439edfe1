import { requireUser } from "../authenticate.ts";
import type { AuthContext } from "../context.ts";
import { sendEmail } from "../emails/send.ts";
import { authError } from "../errors.ts";
import type { Db } from "../models/db.ts";
import { one } from "../models/db.ts";
import { clearToken, stripPkce, tokenHash } from "../models/one-time-tokens.ts";
import type { UserRow } from "../models/users.ts";

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

/** verifyReauthentication: the nonce must match the last one sent and be within otp_expiry. */
export async function verifyNonce(
  ctx: AuthContext,
  db: Db,
  user: UserRow,
  nonce: string,
): Promise<void> {
  const stored = user.reauthentication_token;
  if (!stored || !user.email || stripPkce(stored) !== tokenHash(user.email, nonce)) {
    throw authError("reauthenticationNotValid");
  }
  const row = await one<{ expired: boolean }>(
    db,
    `select coalesce(reauthentication_sent_at + make_interval(secs => $2) < now(), true) as expired
     from auth.users where id = $1`,
    [user.id, ctx.config.auth.email.otpExpiry],
  );
  if (row?.expired) throw authError("otpExpired");
  await clearToken(db, user.id, "reauthentication_token");
}

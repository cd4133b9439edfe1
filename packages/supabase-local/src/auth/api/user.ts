import { requireUser } from "../authenticate.ts";
import type { AuthContext } from "../context.ts";
import { sendEmailChange, sendNotification } from "../emails/send.ts";
import { authError } from "../errors.ts";
import { audit } from "../models/audit.ts";
import { hasVerifiedFactor } from "../models/factors.ts";
import { createFlowState } from "../models/flow-state.ts";
import { upsertEmailIdentity } from "../models/identities.ts";
import { consumeReauthenticationNonce } from "../models/one-time-tokens.ts";
import {
  changeEmailConfirmed,
  findUserByEmail,
  findUserById,
  updatePassword,
  updateUserMetadata,
  userJson,
} from "../models/users.ts";
import { checkPasswordStrength, comparePassword, hashPassword } from "../passwords.ts";
import { pkceRequested } from "../pkce.ts";
import { redirectTarget } from "../redirect.ts";
import { clientIp, readParams } from "../request.ts";
import { validateEmail } from "../validate.ts";

/** GET /user: the signed-in user. */
export async function getUser(ctx: AuthContext, request: Request): Promise<Response> {
  const { user } = await requireUser(ctx, request);
  return Response.json(await userJson(ctx.db, user));
}

/** A session younger than this may change the password without a nonce (secure_password_change). */
const RECENT_SESSION_MS = 24 * 60 * 60 * 1000;

/** PUT /user: metadata, password (optionally with a reauthentication nonce), email change. */
export async function updateUser(ctx: AuthContext, request: Request): Promise<Response> {
  const caller = await requireUser(ctx, request);
  const params = await readParams(request, {
    email: "string",
    phone: "string",
    password: "string",
    nonce: "string",
    data: "object",
    app_metadata: "object",
    code_challenge: "string",
    code_challenge_method: "string",
    channel: "string",
  });
  const { user, session } = caller;
  // validateUserUpdateParams
  const newEmail =
    params.email !== undefined && params.email !== "" ? validateEmail(params.email) : undefined;
  if (params.password !== undefined) checkPasswordStrength(ctx.config, params.password);
  if (params.app_metadata) throw authError("appMetadataNeedsAdmin");
  // With MFA on, only an aal2 session may change how the account is signed in to.
  const emailChange = newEmail !== user.email ? newEmail : undefined;
  const changesPhone = !!params.phone && params.phone !== (user.phone ?? "");
  if (
    (params.password || emailChange || changesPhone) &&
    session?.aal !== "aal2" &&
    (await hasVerifiedFactor(ctx.db, user.id))
  ) {
    throw authError("updateNeedsAal2");
  }
  if (params.password !== undefined && user.is_anonymous && !user.email && !params.email) {
    throw authError("anonymousPasswordUpdate");
  }
  const pkce = pkceRequested(params);
  if (emailChange) {
    const taken = await findUserByEmail(ctx.db, emailChange);
    if (taken && taken.id !== user.id) throw authError("emailExists");
  }
  let encrypted: string | undefined;
  if (params.password !== undefined) {
    const sessionIsRecent =
      session && Date.now() - new Date(session.created_at).getTime() < RECENT_SESSION_MS;
    if (ctx.config.auth.email.securePasswordChange && !sessionIsRecent) {
      if (!params.nonce) throw authError("reauthenticationNeeded");
      await consumeReauthenticationNonce(
        ctx.db,
        user,
        params.nonce,
        ctx.config.auth.email.otpExpiry,
      );
    }
    if (await comparePassword(params.password, user.encrypted_password))
      throw authError("samePassword");
    encrypted = await hashPassword(params.password);
  }
  const redirectTo = redirectTarget(ctx.config, request);

  const updated = await ctx.db.transaction(async (tx) => {
    if (encrypted) {
      // The session making the change stays; every other one ends, every emailed token goes.
      await updatePassword(tx, user.id, encrypted, session?.id);
      await audit(tx, clientIp(request), user, "user_updated_password");
    }
    if (params.data) {
      // UpdateUserMetaData: merge keys; a null value removes the key.
      await updateUserMetadata(tx, user.id, params.data);
    }
    if (emailChange) {
      if (!ctx.config.auth.email.enableConfirmations) {
        await changeEmailConfirmed(tx, user.id, emailChange);
        await upsertEmailIdentity(tx, user.id, emailChange);
      } else {
        if (pkce) await createFlowState(tx, params, "email_change", user.id);
        const fresh = (await findUserById(tx, user.id)) ?? user;
        await sendEmailChange(ctx, tx, fresh, emailChange, { redirectTo, pkce });
      }
    }
    await audit(tx, clientIp(request), user, "user_modified");
    return (await findUserById(tx, user.id)) ?? user;
  });
  if (encrypted) await sendNotification(ctx, updated, "password_changed");
  return Response.json(await userJson(ctx.db, updated));
}

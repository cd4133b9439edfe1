import type { AuthContext } from "../context.ts";
import { sendEmailChange, sendNotification } from "../emails/send.ts";
import { authError } from "../errors.ts";
import { audienceMatches, requireUser } from "../http/authenticate.ts";
import { redirectTarget } from "../http/redirect.ts";
import { clientIp, readParams } from "../http/request.ts";
import { validateChannel, validateEmail, validatePhone } from "../http/validate.ts";
import { audit } from "../models/audit.ts";
import { hasVerifiedFactor } from "../models/factors.ts";
import { createFlowState } from "../models/flow-state.ts";
import { upsertEmailIdentity, upsertPhoneIdentity } from "../models/identities.ts";
import { consumeReauthenticationNonce } from "../models/one-time-tokens.ts";
import {
  applyPhoneChange,
  changeEmailConfirmed,
  findUserByEmail,
  findUserById,
  findUserByPhone,
  markPermanent,
  startPhoneChange,
  updatePassword,
  updateUserMetadata,
  userJson,
} from "../models/users.ts";
import { checkPasswordStrength, comparePassword, hashPassword } from "../passwords.ts";
import { SMS_OTP_EXPIRY, sendSms } from "../phone/sms.ts";
import { pkceRequested } from "../tokens/pkce.ts";

/** GET /user: the signed-in user. */
export async function getUser(ctx: AuthContext, request: Request): Promise<Response> {
  const { user, claims } = await requireUser(ctx, request);
  if (!audienceMatches(request, claims)) throw authError("audienceMismatch");
  return Response.json(await userJson(ctx.db, user));
}

/** A session younger than this may change the password without a nonce (secure_password_change). */
const RECENT_SESSION_MS = 24 * 60 * 60 * 1000;

/** PUT /user: metadata, password (optionally with a reauthentication nonce), email or phone change. */
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
  const newPhone = params.phone ? validatePhone(params.phone) : undefined;
  if (newPhone) validateChannel(params.channel);
  if (params.password !== undefined) checkPasswordStrength(ctx.config, params.password);
  if (params.app_metadata) throw authError("appMetadataNeedsAdmin");
  // With MFA on, only an aal2 session may change how the account is signed in to.
  const emailChange = newEmail !== user.email ? newEmail : undefined;
  const changesPhone = !!newPhone && newPhone !== (user.phone ?? "");
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
  if (changesPhone && (await findUserByPhone(ctx.db, newPhone))) throw authError("phoneExists");
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
        user.email ? ctx.config.auth.email.otpExpiry : SMS_OTP_EXPIRY,
      );
    }
    if (await comparePassword(params.password, user.encrypted_password))
      throw authError("samePassword");
    encrypted = await hashPassword(ctx.config, params.password);
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
        await sendEmailChange(ctx, tx, fresh, emailChange, { request, redirectTo, pkce });
      }
    }
    if (changesPhone) {
      if (!ctx.config.auth.sms.enableConfirmations) {
        // autoconfirm: the change is verified at once (smsVerify, phone_change)
        await startPhoneChange(tx, user.id, newPhone);
        await audit(tx, clientIp(request), user, "user_modified");
        await upsertPhoneIdentity(tx, user.id, { phone: newPhone, phone_verified: true });
        await applyPhoneChange(tx, user.id);
        if (user.is_anonymous) await markPermanent(tx, user.id);
      } else {
        await sendSms(
          ctx,
          tx,
          (await findUserById(tx, user.id)) ?? user,
          newPhone,
          "phone_change",
          request,
        );
      }
    }
    await audit(tx, clientIp(request), user, "user_modified");
    return (await findUserById(tx, user.id)) ?? user;
  });
  if (encrypted) await sendNotification(ctx, ctx.db, request, updated, "password_changed");
  return Response.json(await userJson(ctx.db, updated));
}

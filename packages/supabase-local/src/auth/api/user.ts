import { requireUser } from "../authenticate.ts";
import type { AuthContext } from "../context.ts";
import { sendEmailChange } from "../emails/send.ts";
import { authError } from "../errors.ts";
import { audit } from "../models/audit.ts";
import { one, run } from "../models/db.ts";
import { createFlowState, pkceRequested } from "../models/flow-state.ts";
import {
  findUserByEmail,
  findUserById,
  hasVerifiedFactor,
  updatePassword,
  userJson,
} from "../models/users.ts";
import { checkPasswordStrength, comparePassword, hashPassword } from "../passwords.ts";
import { redirectTarget } from "../redirect.ts";
import { readParams } from "../request.ts";
import { validateEmail } from "../validate.ts";
import { verifyNonce } from "./reauthenticate.ts";

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
      await verifyNonce(ctx, ctx.db, user, params.nonce);
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
      await audit(tx, request, user, "user_updated_password");
    }
    if (params.data) {
      // UpdateUserMetaData: merge keys; a null value removes the key.
      await run(
        tx,
        `update auth.users set raw_user_meta_data = jsonb_strip_nulls(coalesce(raw_user_meta_data, '{}') || $2::jsonb),
           updated_at = now() where id = $1`,
        [user.id, JSON.stringify(params.data)],
      );
    }
    if (emailChange) {
      if (!ctx.config.auth.email.enableConfirmations) {
        await run(
          tx,
          `update auth.users set email = $2, email_change = '', email_confirmed_at = coalesce(email_confirmed_at, now()),
             updated_at = now() where id = $1`,
          [user.id, emailChange],
        );
        await upsertEmailIdentity(tx, user.id, emailChange);
      } else {
        if (pkce) await createFlowState(tx, params, "email_change", user.id);
        const fresh = (await findUserById(tx, user.id)) ?? user;
        await sendEmailChange(ctx, tx, fresh, emailChange, { redirectTo, pkce });
      }
    }
    await audit(tx, request, user, "user_modified");
    return (await findUserById(tx, user.id)) ?? user;
  });
  return Response.json(await userJson(ctx.db, updated));
}

/** The email identity follows the user's address (created for anonymous users adding one). */
export async function upsertEmailIdentity(
  tx: Parameters<typeof run>[0],
  userId: string,
  email: string,
) {
  const existing = await one(
    tx,
    "select 1 from auth.identities where user_id = $1 and provider = 'email'",
    [userId],
  );
  if (existing) {
    await run(
      tx,
      `update auth.identities set identity_data = identity_data || jsonb_build_object('email', $2::text, 'email_verified', true),
         updated_at = now() where user_id = $1 and provider = 'email'`,
      [userId, email],
    );
    return;
  }
  await run(
    tx,
    `insert into auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at)
     values ($1, $3, jsonb_build_object('sub', $1::text, 'email', $2::text, 'email_verified', true, 'phone_verified', false),
       'email', now(), now(), now())`,
    [userId, email, userId],
  );
  await run(
    tx,
    `update auth.users set is_anonymous = false,
       raw_app_meta_data = coalesce(raw_app_meta_data, '{}') || '{"provider": "email", "providers": ["email"]}'::jsonb
     where id = $1`,
    [userId],
  );
}

import { randomUUID } from "node:crypto";
import type { AuthContext } from "../context.ts";
import { sendEmail } from "../emails/send.ts";
import { authError } from "../errors.ts";
import { beforeUserCreated } from "../hooks/before-user-created.ts";
import { redirectTarget } from "../http/redirect.ts";
import { clientIp, readParams } from "../http/request.ts";
import { validateChannel, validateEmail } from "../http/validate.ts";
import { audit } from "../models/audit.ts";
import { createFlowState } from "../models/flow-state.ts";
import {
  confirmEmail,
  createUser,
  findUserByEmail,
  findUserById,
  userJson,
} from "../models/users.ts";
import { checkPasswordStrength, hashPassword } from "../passwords.ts";
import { signUpWithPhone } from "../phone/phone-signup.ts";
import { pkceRequested } from "../tokens/pkce.ts";
import { issueSession } from "../tokens/token-response.ts";

const SHAPE = {
  email: "string",
  phone: "string",
  password: "string",
  data: "object",
  code_challenge: "string",
  code_challenge_method: "string",
  channel: "string",
} as const;

/** POST /signup: email or phone + password (confirmation on or off), or neither: anonymous. */
export async function signup(ctx: AuthContext, request: Request): Promise<Response> {
  const { config, db } = ctx;
  const params = await readParams(request, SHAPE);
  if (!params.email && !params.phone) {
    if (!config.auth.enableAnonymousSignIns) throw authError("anonymousDisabled");
    ctx.rateLimits.check("anonymous_users", request);
    if (!config.auth.enableSignup) throw authError("signupDisabled");
    return signupAnonymously(ctx, request, params.data ?? {});
  }
  ctx.rateLimits.check("signups", request);
  if (!config.auth.enableSignup) throw authError("signupDisabled");
  if (!params.password) throw authError("signupNeedsPassword");
  checkPasswordStrength(config, params.password);
  if (params.email && params.phone) throw authError("emailOrPhoneSignup");
  if (!params.email) {
    validateChannel(params.channel);
    if (params.code_challenge) throw authError("pkcePhoneSignup");
  }
  const pkce = pkceRequested(params);
  if (!params.email) {
    const phone = params.phone ?? "";
    const data = params.data ?? {};
    const input = { phone, password: params.password, data, channel: params.channel || "sms" };
    return Response.json((await signUpWithPhone(ctx, request, input)).body);
  }
  if (!config.auth.email.enabled) throw authError("emailSignupDisabled");
  const email = validateEmail(params.email);
  const data = params.data ?? {};
  const redirectTo = redirectTarget(config, request);
  const autoconfirm = !config.auth.email.enableConfirmations;

  const existing = await findUserByEmail(db, email);
  if (existing?.email_confirmed_at) {
    await audit(db, clientIp(request), existing, "user_repeated_signup", { provider: "email" });
    if (autoconfirm) throw authError("userAlreadyExists");
    return Response.json(obfuscatedUser(email, data));
  }
  const encryptedPassword = existing ? null : await hashPassword(ctx.config, params.password);
  const newId = existing
    ? undefined
    : await beforeUserCreated(ctx, db, request, { email, provider: "email", userMetadata: data });

  const user = await db.transaction(async (tx) => {
    // Looked up again inside the transaction: a concurrent sign-up for the same address may have
    // created (and, with autoconfirm, confirmed) the user since the check above. PGlite runs one
    // transaction at a time, so this second look cannot race.
    const current = existing ?? (await findUserByEmail(tx, email));
    if (current?.email_confirmed_at) return null;
    const user =
      current ??
      (await createUser(tx, {
        id: newId,
        email,
        encryptedPassword,
        userMetadata: data,
        provider: "email",
      }));
    if (autoconfirm) {
      await audit(tx, clientIp(request), user, "user_signedup", { provider: "email" });
      await confirmEmail(tx, user.id);
    } else {
      await audit(tx, clientIp(request), user, "user_confirmation_requested", {
        provider: "email",
      });
      if (pkce) await createFlowState(tx, params, "email/signup", user.id);
      await sendEmail(ctx, tx, user, "signup", { request, redirectTo, pkce });
    }
    return (await findUserById(tx, user.id)) ?? user;
  });
  if (!user) {
    if (autoconfirm) throw authError("userAlreadyExists");
    return Response.json(obfuscatedUser(email, data));
  }

  if (user.email_confirmed_at) {
    const body = await db.transaction(async (tx) => {
      await audit(tx, clientIp(request), user, "login", { provider: "email" });
      return issueSession(ctx, tx, user, "password", request);
    });
    return Response.json(body);
  }
  return Response.json(await userJson(db, user));
}

async function signupAnonymously(
  ctx: AuthContext,
  request: Request,
  data: Record<string, unknown>,
) {
  const id = await beforeUserCreated(ctx, ctx.db, request, { userMetadata: data });
  const body = await ctx.db.transaction(async (tx) => {
    const user = await createUser(tx, {
      id,
      provider: "anonymous",
      isAnonymous: true,
      userMetadata: data,
    });
    return issueSession(ctx, tx, user, "anonymous", request);
  });
  return Response.json(body);
}

/** sanitizeUser: what a repeated sign-up of a confirmed address gets when confirmations are on, so
 * the response does not reveal that the address is registered. */
function obfuscatedUser(email: string, data: Record<string, unknown>) {
  const now = new Date().toISOString();
  return {
    id: randomUUID(),
    aud: "authenticated",
    role: "",
    email,
    phone: "",
    confirmation_sent_at: now,
    app_metadata: { provider: "email", providers: ["email"] },
    user_metadata: data,
    identities: [],
    created_at: now,
    updated_at: now,
    is_anonymous: false,
  };
}

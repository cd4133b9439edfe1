import { randomUUID } from "node:crypto";
import type { AuthContext } from "../context.ts";
import { authError } from "../errors.ts";
import { beforeUserCreated } from "../hooks/before-user-created.ts";
import { clientIp } from "../http/request.ts";
import { validatePhone } from "../http/validate.ts";
import { audit } from "../models/audit.ts";
import { upsertPhoneIdentity } from "../models/identities.ts";
import {
  confirmPhone,
  createUser,
  findUserById,
  findUserByPhone,
  type UserRow,
  userJson,
} from "../models/users.ts";
import { hashPassword } from "../passwords.ts";
import { issueSession } from "../tokens/token-response.ts";
import { sendSms } from "./sms.ts";

/**
 * Sign-up with a phone number (Signup, PhoneProvider), shared by POST /signup and the first
 * POST /otp of a number. With [auth.sms] enable_confirmations off the number is confirmed at once
 * and a session is issued; otherwise the confirmation code is "sent" (sms.ts). A confirmed number
 * signs up again as the real service answers it: `user_already_exists`, or an obfuscated user.
 */
export async function signUpWithPhone(
  ctx: AuthContext,
  request: Request,
  input: { phone: string; password: string; data: Record<string, unknown>; channel: string },
): Promise<
  | { kind: "session"; body: Record<string, unknown> }
  | { kind: "user"; body: Record<string, unknown>; user: UserRow }
> {
  const { config, db } = ctx;
  if (!config.auth.sms.enableSignup) throw authError("phoneSignupDisabled");
  const phone = validatePhone(input.phone);
  const autoconfirm = !config.auth.sms.enableConfirmations;
  const existing = await findUserByPhone(db, phone);
  if (existing?.phone_confirmed_at) {
    await audit(db, clientIp(request), existing, "user_repeated_signup", { provider: "phone" });
    if (autoconfirm || !config.auth.email.enableConfirmations) throw authError("userAlreadyExists");
    return { kind: "user", body: obfuscatedPhoneUser(phone, input.data), user: existing };
  }
  const encryptedPassword = existing ? null : await hashPassword(config, input.password);
  const newId = existing
    ? undefined
    : await beforeUserCreated(ctx, db, request, {
        phone,
        provider: "phone",
        userMetadata: input.data,
      });
  const user = await db.transaction(async (tx) => {
    const user =
      existing ??
      (await createUser(tx, {
        id: newId,
        phone,
        encryptedPassword,
        userMetadata: input.data,
        provider: "phone",
      }));
    // the identity's data: provider.Claims{sub} and the sign-up data (which never overrides it)
    if (!existing) {
      const claims = { sub: user.id, email_verified: false, phone_verified: false };
      await upsertPhoneIdentity(tx, user.id, { ...input.data, ...claims });
    }
    if (autoconfirm) {
      await audit(tx, clientIp(request), user, "user_signedup", {
        provider: "phone",
        channel: input.channel,
      });
      await confirmPhone(tx, user.id);
    } else {
      await audit(tx, clientIp(request), user, "user_confirmation_requested", {
        provider: "phone",
      });
      await sendSms(ctx, tx, user, phone, "confirmation", request);
    }
    return (await findUserById(tx, user.id)) ?? user;
  });
  if (user.phone_confirmed_at) {
    const body = await db.transaction(async (tx) => {
      await audit(tx, clientIp(request), user, "login", { provider: "phone" });
      return issueSession(ctx, tx, user, "password", request);
    });
    return { kind: "session", body };
  }
  return { kind: "user", body: await userJson(db, user), user };
}

/** sanitizeUser for a phone: what a repeated sign-up gets, revealing nothing. */
function obfuscatedPhoneUser(phone: string, data: Record<string, unknown>) {
  const now = new Date().toISOString();
  return {
    id: randomUUID(),
    aud: "authenticated",
    role: "",
    email: "",
    phone,
    confirmation_sent_at: now,
    app_metadata: { provider: "phone", providers: ["phone"] },
    user_metadata: data,
    identities: [],
    created_at: now,
    updated_at: now,
    is_anonymous: false,
  };
}

import type { AuthContext } from "../context.ts";
import { sendNotification } from "../emails/send.ts";
import { AuthError, authError, inputRefusal } from "../errors.ts";
import { redirectTarget } from "../http/redirect.ts";
import { clientIp, readParams } from "../http/request.ts";
import { validatePhone } from "../http/validate.ts";
import { audit } from "../models/audit.ts";
import type { Db } from "../models/db.ts";
import { issueAuthCode } from "../models/flow-state.ts";
import { updateProviders, upsertEmailIdentity, upsertPhoneIdentity } from "../models/identities.ts";
import { clearToken, PKCE_PREFIX, stripPkce, tokenHash } from "../models/one-time-tokens.ts";
import {
  applyEmailChange,
  applyPhoneChange,
  confirmEmail,
  confirmPhone,
  findUserByEmail,
  findUserByEmailOrNewEmail,
  findUserById,
  findUserByPhone,
  findUserByPhoneChange,
  findUserByTokenHash,
  isBanned,
  markEmailChangeHalfConfirmed,
  markPermanent,
  sentTooLongAgo,
  type UserRow,
} from "../models/users.ts";
import { SMS_OTP_EXPIRY, testOtp } from "../phone/sms.ts";
import { issueSession } from "../tokens/token-response.ts";

const EMAIL_TYPES = ["signup", "invite", "magiclink", "recovery", "email_change", "email"] as const;
type VerifyType = (typeof EMAIL_TYPES)[number];

export const SINGLE_CONFIRMATION_ACCEPTED =
  "Confirmation link accepted. Please proceed to confirm link sent to the other email";

/** Which stored token each verification type checks. */
const COLUMNS: Record<VerifyType, Array<keyof UserRow>> = {
  signup: ["confirmation_token"],
  invite: ["confirmation_token"],
  magiclink: ["recovery_token"],
  recovery: ["recovery_token"],
  email: ["confirmation_token", "recovery_token"],
  email_change: ["email_change_token_new", "email_change_token_current"],
};

/** The flow_state authentication_method of a PKCE link (models.ParseAuthenticationMethod). */
const PKCE_METHODS: Record<string, string> = {
  signup: "email/signup",
  invite: "invite",
  magiclink: "magiclink",
  recovery: "recovery",
  email_change: "email_change",
  email: "magiclink",
};

/** GET /verify?token=&type=&redirect_to= (the email link) and POST /verify (code or token_hash). */
export async function verify(ctx: AuthContext, request: Request): Promise<Response> {
  return request.method === "GET" ? verifyGet(ctx, request) : verifyPost(ctx, request);
}

async function verifyGet(ctx: AuthContext, request: Request): Promise<Response> {
  const query = new URL(request.url).searchParams;
  const token = query.get("token") ?? "";
  const type = query.get("type") ?? "";
  const redirectTo = redirectTarget(ctx.config, request);
  if (!type) throw authError("verifyNeedsType");
  if (!token) throw authError("verifyNeedsToken");
  const pkce = token.startsWith(PKCE_PREFIX);
  try {
    // the link's token is read as a token hash (Auth's VerifyParams.Validate sets TokenHash from it),
    // and a hash is of an emailed type only: the same refusal as POST's, in the redirect
    if (!isEmailType(type)) throw authError("hashNeedsEmailType");
    type Outcome =
      | { kind: "message"; message: string }
      | { kind: "code"; code: string }
      | { kind: "session"; session: Record<string, unknown> };
    const outcome = await ctx.db.transaction(async (tx): Promise<Outcome> => {
      const user = await userByTokenHash(ctx, tx, type, token);
      const verified = await applyVerification(ctx, tx, request, user, type, token);
      if (!verified) return { kind: "message", message: SINGLE_CONFIRMATION_ACCEPTED };
      if (pkce) {
        try {
          return {
            kind: "code",
            code: await issueAuthCode(tx, verified.id, PKCE_METHODS[type] as string),
          };
        } catch (error) {
          throw authError(
            "flowStateNotFound",
            `No associated flow state found. ${(error as Error).message}`,
          ).withStatus(400);
        }
      }
      return { kind: "session", session: await issueSession(ctx, tx, verified, "otp", request) };
    });
    const url = new URL(redirectTo);
    if (outcome.kind === "message") {
      if (pkce) url.searchParams.set("message", outcome.message);
      url.hash = new URLSearchParams({ message: outcome.message, sb: "" }).toString();
    } else if (outcome.kind === "code") {
      url.searchParams.set("code", outcome.code);
    } else {
      const s = outcome.session;
      url.hash = new URLSearchParams({
        access_token: String(s.access_token),
        expires_at: String(s.expires_at),
        expires_in: String(s.expires_in),
        refresh_token: String(s.refresh_token),
        token_type: "bearer",
        type,
      }).toString();
    }
    return redirect(url);
  } catch (error) {
    // a link's bad value (a NUL in its token) is redirected like any other refusal
    const failure = error instanceof AuthError ? error : inputRefusal(error);
    if (!failure) throw error;
    return redirect(errorRedirect(redirectTo, failure, pkce));
  }
}

/** prepErrorRedirectURL: error params in the fragment (and the query for PKCE). */
function errorRedirect(target: string, error: AuthError, pkce: boolean): URL {
  const url = new URL(target);
  const oauth = {
    400: "invalid_request",
    401: "unauthorized_client",
    403: "access_denied",
    500: "server_error",
  }[error.status];
  const hash = new URLSearchParams();
  if (oauth) hash.set("error", oauth);
  hash.set("error_code", error.code);
  hash.set("error_description", error.message);
  if (pkce) {
    if (oauth) url.searchParams.set("error", oauth);
    url.searchParams.set("error_code", error.code);
    url.searchParams.set("error_description", error.message);
  }
  hash.set("sb", "");
  url.hash = hash.toString();
  return url;
}

function redirect(url: URL): Response {
  return new Response(null, { status: 303, headers: { Location: url.toString() } });
}

async function verifyPost(ctx: AuthContext, request: Request): Promise<Response> {
  const params = await readParams(request, {
    type: "string",
    token: "string",
    token_hash: "string",
    email: "string",
    phone: "string",
    redirect_to: "string",
  });
  const type = params.type ?? "";
  if (!type) throw authError("verifyNeedsType");
  const usingHash = !!params.token_hash;
  if (!params.token && !params.token_hash) throw authError("verifyNeedsToken");
  if (params.token && params.token_hash) throw authError("verifyTokenOrHash");
  if (usingHash && (params.email || params.phone || params.redirect_to)) {
    throw authError("verifyOnlyHash");
  }
  // verifyTokenHash knows the emailed types only: a hash of an SMS code (sms, phone_change) is refused
  if (usingHash && !isEmailType(type)) throw authError("hashNeedsEmailType");
  if (!usingHash) {
    if (params.email && params.phone) throw authError("verifyEmailOrPhone");
    if (params.phone && !params.email) {
      const phone = validatePhone(params.phone);
      if (type !== "sms" && type !== "phone_change") throw authError("otpExpired");
      return Response.json(await verifyPhone(ctx, request, type, phone, params.token ?? ""));
    }
  }
  if (type === "sms" || type === "phone_change") throw authError("otpExpired");
  let email = "";
  if (!usingHash) {
    email = (params.email ?? "").toLowerCase();
    if (!/^[^@\s]+@[^@\s]+$/.test(email)) throw authError("invalidEmailFormat");
  }
  if (!isEmailType(type)) {
    // verifyUserAndToken: an unknown type still looks the user up (banned: user_banned), then
    // matches no token (otp_expired)
    await ctx.db.transaction((tx) => userByCode(ctx, tx, type, email, params.token ?? ""));
    throw authError("otpExpired");
  }
  const result = await ctx.db.transaction(async (tx) => {
    const user = usingHash
      ? await userByTokenHash(ctx, tx, type, params.token_hash as string)
      : await userByCode(ctx, tx, type, email, params.token as string);
    const verified = await applyVerification(
      ctx,
      tx,
      request,
      user,
      type,
      usingHash ? params.token_hash : undefined,
      usingHash ? undefined : { email, otp: params.token as string },
    );
    if (!verified) return null;
    return issueSession(ctx, tx, verified, "otp", request);
  });
  if (!result) return Response.json({ msg: SINGLE_CONFIRMATION_ACCEPTED, code: "200" });
  return Response.json(result);
}

function isEmailType(type: string): type is VerifyType {
  return (EMAIL_TYPES as readonly string[]).includes(type);
}

/** verifyTokenHash: the user whose stored token (for the type) is this hash, and not expired. */
async function userByTokenHash(
  ctx: AuthContext,
  db: Db,
  type: VerifyType,
  hash: string,
): Promise<UserRow> {
  const user = await findUserByTokenHash(db, COLUMNS[type], hash);
  if (!user) throw authError(type === "email_change" ? "otpExpired" : "linkExpired");
  if (isBanned(user, ctx.now())) throw authError("userBanned").withStatus(403);
  await assertNotExpired(ctx, db, user, type, hash);
  return user;
}

/** verifyUserAndToken: the user with that address whose code matches, and not expired. */
async function userByCode(
  ctx: AuthContext,
  db: Db,
  type: string,
  email: string,
  otp: string,
): Promise<UserRow> {
  const user =
    type === "email_change"
      ? await findUserByEmailOrNewEmail(db, email)
      : await findUserByEmail(db, email);
  if (!user) throw authError("otpExpired");
  if (isBanned(user, ctx.now())) throw authError("userBanned").withStatus(403);
  const hash = tokenHash(email, otp);
  const match = (isEmailType(type) ? COLUMNS[type] : []).find((c) => {
    const stored = user[c];
    return typeof stored === "string" && stored !== "" && stripPkce(stored) === hash;
  });
  if (!match || !isEmailType(type)) throw authError("otpExpired");
  await assertNotExpired(ctx, db, user, type, user[match] as string);
  return user;
}

async function assertNotExpired(
  ctx: AuthContext,
  db: Db,
  user: UserRow,
  type: VerifyType,
  hash: string,
) {
  const sentColumn =
    hash === user.confirmation_token
      ? "confirmation_sent_at"
      : hash === user.recovery_token
        ? "recovery_sent_at"
        : "email_change_sent_at";
  if (await sentTooLongAgo(db, user.id, sentColumn, ctx.config.auth.email.otpExpiry)) {
    throw authError(type === "email_change" ? "otpExpired" : "linkExpired");
  }
}

/**
 * signupVerify / recoverVerify / emailChangeVerify. Returns the user to sign in, or null when an
 * email change still waits for the other address's confirmation.
 */
async function applyVerification(
  ctx: AuthContext,
  db: Db,
  request: Request,
  user: UserRow,
  type: VerifyType,
  hash: string | undefined,
  code?: { email: string; otp: string },
): Promise<UserRow | null> {
  const isConfirmationToken = hash
    ? hash === user.confirmation_token
    : !!code && stripPkce(user.confirmation_token) === tokenHash(code.email, code.otp);
  switch (type) {
    case "signup":
    case "invite":
    case "email":
      if (type === "email" && !isConfirmationToken) {
        await clearToken(db, user.id, "recovery_token");
        await confirmEmail(db, user.id);
        break;
      }
      await audit(
        db,
        clientIp(request),
        user,
        type === "invite" ? "invite_accepted" : "user_signedup",
        {
          provider: "email",
        },
      );
      await clearToken(db, user.id, "confirmation_token");
      await confirmEmail(db, user.id);
      break;
    case "magiclink":
    case "recovery":
      await audit(db, clientIp(request), user, "login", { provider: "email" });
      await clearToken(db, user.id, "recovery_token");
      await confirmEmail(db, user.id);
      break;
    case "email_change": {
      const matchesNew = hash
        ? hash === user.email_change_token_new
        : !!code && stripPkce(user.email_change_token_new) === tokenHash(code.email, code.otp);
      const side = matchesNew ? "email_change_token_new" : "email_change_token_current";
      await clearToken(db, user.id, side);
      const double = ctx.config.auth.email.doubleConfirmChanges && !!user.email;
      if (double && user.email_change_confirm_status === 0) {
        await markEmailChangeHalfConfirmed(db, user.id);
        return null;
      }
      await applyEmailChange(db, user.id);
      await upsertEmailIdentity(db, user.id, user.email_change);
      await audit(db, clientIp(request), user, "user_modified");
      // To the address the account had: whoever holds it learns of the change.
      if (user.email && user.email.toLowerCase() !== user.email_change.toLowerCase()) {
        await sendNotification(
          ctx,
          db,
          request,
          { ...user, email: user.email_change },
          "email_changed",
          {
            recipient: user.email,
            oldEmail: user.email,
          },
        );
      }
      break;
    }
  }
  return (await findUserById(db, user.id)) ?? user;
}

/**
 * verifyUserAndToken + smsVerify for `sms` (the sign-up or sign-in code of a number) and
 * `phone_change` (the code sent to the new number): the number's [auth.sms.test_otp] code is always
 * good; otherwise the stored code, within the SMS code lifetime. Signs the user in.
 */
async function verifyPhone(
  ctx: AuthContext,
  request: Request,
  type: "sms" | "phone_change",
  phone: string,
  token: string,
): Promise<Record<string, unknown>> {
  return ctx.db.transaction(async (tx) => {
    const user =
      type === "sms" ? await findUserByPhone(tx, phone) : await findUserByPhoneChange(tx, phone);
    if (!user) throw authError("otpExpired");
    if (isBanned(user, ctx.now())) throw authError("userBanned").withStatus(403);
    if (testOtp(ctx, phone) !== token) {
      const [column, sentAt] =
        type === "sms"
          ? (["confirmation_token", "confirmation_sent_at"] as const)
          : (["phone_change_token", "phone_change_sent_at"] as const);
      const stored = user[column];
      const matches = stored !== "" && stripPkce(stored) === tokenHash(phone, token);
      if (!matches || (await sentTooLongAgo(tx, user.id, sentAt, SMS_OTP_EXPIRY))) {
        throw authError("otpExpired");
      }
    }
    if (type === "sms") {
      await audit(tx, clientIp(request), user, "user_signedup", { provider: "phone" });
      await confirmPhone(tx, user.id);
    } else {
      await audit(tx, clientIp(request), user, "user_modified");
      await upsertPhoneIdentity(tx, user.id, { phone, phone_verified: true });
      await applyPhoneChange(tx, user.id);
    }
    if (user.is_anonymous) await markPermanent(tx, user.id);
    await updateProviders(tx, user.id);
    const fresh = (await findUserById(tx, user.id)) ?? user;
    return issueSession(ctx, tx, fresh, "otp", request);
  });
}

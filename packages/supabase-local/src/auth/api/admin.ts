import { parseGoDuration } from "../../project/go-duration.ts";
import type { AuthContext } from "../context.ts";
import { sendEmail, sendEmailChange } from "../emails/send.ts";
import { authError } from "../errors.ts";
import { beforeUserCreated } from "../hooks/before-user-created.ts";
import { requireAdmin } from "../http/authenticate.ts";
import { redirectTarget } from "../http/redirect.ts";
import { clientIp, parseJson, pick, readBody, readParams } from "../http/request.ts";
import {
  pageOffset,
  pagination,
  UUID,
  validateEmail,
  validateFriendlyName,
  validatePhone,
} from "../http/validate.ts";
import { audit } from "../models/audit.ts";
import type { Db } from "../models/db.ts";
import {
  deleteFactor,
  factorJson,
  factorsOf,
  findFactor,
  renameFactor,
} from "../models/factors.ts";
import { upsertEmailIdentity, upsertPhoneIdentity } from "../models/identities.ts";
import {
  confirmEmail,
  confirmPhone,
  countUsers,
  createUser,
  deleteUser,
  findUserByEmail,
  findUserById,
  findUserByPhone,
  listUsers as listUserRows,
  markPermanent,
  setBan,
  setEmail,
  setPhone,
  setRole,
  softDeleteUser,
  touchUpdatedAt,
  type UserRow,
  updateAppMetadata,
  updatePassword,
  updateUserMetadata,
  userJson,
} from "../models/users.ts";
import { checkPasswordHash, checkPasswordStrength, hashPassword } from "../passwords.ts";

const USER_SHAPE = {
  id: "string",
  email: "string",
  phone: "string",
  password: "string",
  password_hash: "string",
  email_confirm: "boolean",
  phone_confirm: "boolean",
  user_metadata: "object",
  app_metadata: "object",
  role: "string",
  ban_duration: "string",
} as const;

/** GET /admin/users?page=&per_page= — { users, aud } with X-Total-Count and Link headers. */
export async function listUsers(ctx: AuthContext, request: Request): Promise<Response> {
  await requireAdmin(ctx, request);
  const url = new URL(request.url);
  const requested = pagination(url, 50);
  const { page } = requested;
  const perPage = Math.min(requested.perPage, 1000);
  const total = await countUsers(ctx.db);
  const rows = await listUserRows(ctx.db, perPage, pageOffset(page, perPage));
  const users = [];
  for (const row of rows) users.push(await userJson(ctx.db, row));
  const headers = new Headers({ "X-Total-Count": String(total) });
  const last = Math.max(1, Math.ceil(total / perPage));
  const link = (p: number, rel: string) => {
    const next = new URL(url);
    next.searchParams.set("page", String(p));
    next.searchParams.set("per_page", String(perPage));
    return `<${next.pathname}${next.search}>; rel="${rel}"`;
  };
  const links = [];
  if (page < last) links.push(link(page + 1, "next"));
  links.push(link(last, "last"));
  headers.set("Link", links.join(", "));
  return Response.json({ users, aud: "authenticated" }, { headers });
}

/** POST /admin/users */
export async function createUserAdmin(ctx: AuthContext, request: Request): Promise<Response> {
  await requireAdmin(ctx, request);
  const params = await readParams(request, USER_SHAPE);
  if (!params.email && !params.phone) throw authError("adminNeedsEmailOrPhone");
  const providers: string[] = [];
  const email = params.email ? validateEmail(params.email) : undefined;
  if (email) {
    if (await findUserByEmail(ctx.db, email)) throw authError("emailExists");
    providers.push("email");
  }
  const phone = params.phone ? validatePhone(params.phone) : undefined;
  if (phone) {
    if (await findUserByPhone(ctx.db, phone)) throw authError("phoneExistsAdmin");
    providers.push("phone");
  }
  if (params.password && params.password_hash) throw authError("adminPasswordOrHash");
  if (params.id !== undefined && !UUID.test(params.id)) throw authError("idNotUuid");
  checkRole(params.role);
  const bannedUntil = banUntil(params.ban_duration);
  let encryptedPassword: string | null = null;
  if (params.password) {
    checkPasswordStrength(ctx.config, params.password);
    encryptedPassword = await hashPassword(ctx.config, params.password);
  } else if (params.password_hash) {
    checkPasswordHash(params.password_hash);
    encryptedPassword = params.password_hash;
  }
  const user = await ctx.db.transaction(async (tx) => {
    const user = await createUser(tx, {
      id: params.id,
      email,
      phone,
      encryptedPassword,
      userMetadata: params.user_metadata ?? {},
      appMetadata: { providers, ...params.app_metadata },
      provider: providers[0] as string,
      role: params.role,
      confirmed: params.email_confirm ?? false,
    });
    if (phone) {
      await upsertPhoneIdentity(tx, user.id, { sub: user.id, phone });
      if (params.phone_confirm) await confirmPhone(tx, user.id);
    }
    if (bannedUntil !== undefined) await setBan(tx, user.id, bannedUntil);
    await audit(tx, clientIp(request), user, "user_signedup", { provider: providers[0] });
    return (await findUserById(tx, user.id)) ?? user;
  });
  return Response.json(await userJson(ctx.db, user));
}

async function loadUser(ctx: AuthContext, request: Request): Promise<UserRow> {
  const id = new URL(request.url).pathname.split("/").pop() ?? "";
  if (!UUID.test(id)) throw authError("userIdNotUuid");
  const user = await findUserById(ctx.db, id);
  if (!user) throw authError("userNotFound");
  return user;
}

/** GET /admin/users/{id} */
export async function getUserAdmin(ctx: AuthContext, request: Request): Promise<Response> {
  await requireAdmin(ctx, request);
  return Response.json(await userJson(ctx.db, await loadUser(ctx, request)));
}

/** PUT /admin/users/{id} */
export async function updateUserAdmin(ctx: AuthContext, request: Request): Promise<Response> {
  await requireAdmin(ctx, request);
  const user = await loadUser(ctx, request);
  const params = await readParams(request, USER_SHAPE);
  const email = params.email ? validateEmail(params.email) : undefined;
  const phone = params.phone ? validatePhone(params.phone) : undefined;
  if (email && email !== user.email) {
    const taken = await findUserByEmail(ctx.db, email);
    if (taken && taken.id !== user.id) throw authError("emailExists");
  }
  checkRole(params.role);
  const bannedUntil = banUntil(params.ban_duration);
  let encrypted: string | undefined;
  if (params.password !== undefined) {
    checkPasswordStrength(ctx.config, params.password);
    encrypted = await hashPassword(ctx.config, params.password);
  }
  const updated = await ctx.db.transaction(async (tx) => {
    if (params.role) await setRole(tx, user.id, params.role);
    if (email && email !== user.email) {
      await setEmail(tx, user.id, email);
      await upsertEmailIdentity(tx, user.id, email);
    }
    // An admin's password change signs the user out everywhere (UpdatePassword without a session).
    if (encrypted) await updatePassword(tx, user.id, encrypted, undefined);
    if (params.email_confirm) await confirmEmail(tx, user.id);
    if (params.phone_confirm) await confirmPhone(tx, user.id);
    if (phone) {
      const verified = params.phone_confirm ?? false;
      await upsertPhoneIdentity(tx, user.id, { phone, phone_verified: verified });
      if (user.is_anonymous && verified) await markPermanent(tx, user.id);
      await setPhone(tx, user.id, phone);
    }
    if (params.user_metadata) await updateUserMetadata(tx, user.id, params.user_metadata);
    if (params.app_metadata) await updateAppMetadata(tx, user.id, params.app_metadata);
    if (bannedUntil !== undefined) await setBan(tx, user.id, bannedUntil);
    await touchUpdatedAt(tx, user.id);
    await audit(tx, clientIp(request), user, "user_modified");
    return (await findUserById(tx, user.id)) ?? user;
  });
  return Response.json(await userJson(ctx.db, updated));
}

/** DELETE /admin/users/{id} ({ should_soft_delete }) */
export async function deleteUserAdmin(ctx: AuthContext, request: Request): Promise<Response> {
  await requireAdmin(ctx, request);
  const user = await loadUser(ctx, request);
  const text = await readBody(request);
  const body = text.trim() === "" ? {} : parseJson(text);
  const { should_soft_delete: soft } = pick(body, { should_soft_delete: "boolean" });
  await ctx.db.transaction(async (tx) => {
    await audit(tx, clientIp(request), user, "user_deleted");
    if (soft) await softDeleteUser(tx, user.id);
    else await deleteUser(tx, user.id);
  });
  return Response.json({});
}

const LINK_TYPES = [
  "signup",
  "invite",
  "magiclink",
  "recovery",
  "email_change_current",
  "email_change_new",
];

/** POST /admin/generate_link: the action link and code without sending an email. */
export async function generateLink(ctx: AuthContext, request: Request): Promise<Response> {
  await requireAdmin(ctx, request);
  const params = await readParams(request, {
    type: "string",
    email: "string",
    new_email: "string",
    password: "string",
    data: "object",
    redirect_to: "string",
  });
  const type = params.type ?? "";
  const email = validateEmail(params.email);
  if (!LINK_TYPES.includes(type)) {
    throw authError("generateLinkBadType", `Invalid email action link type requested: ${type}`);
  }
  const redirectTo = redirectTarget(ctx.config, request, params.redirect_to);
  let encrypted: string | null = null;
  if (type === "signup") {
    if (!params.password) throw authError("signupNeedsPassword");
    checkPasswordStrength(ctx.config, params.password);
    encrypted = await hashPassword(ctx.config, params.password);
  }
  const newEmail = params.new_email ? validateEmail(params.new_email) : undefined;
  const result = await ctx.db.transaction(async (tx) => {
    let user = await findUserByEmail(tx, email);
    if (!user) {
      if (type !== "signup" && type !== "invite") throw authError("userWithEmailNotFound");
      const userMetadata = params.data ?? {};
      user = await createUser(tx, {
        id: await beforeUserCreated(ctx, tx, request, { email, provider: "email", userMetadata }),
        email,
        encryptedPassword: encrypted,
        userMetadata,
        provider: "email",
      });
    } else if ((type === "signup" || type === "invite") && user.email_confirmed_at) {
      throw authError("emailExists");
    }
    const options = { request, redirectTo, pkce: false, deliver: false, checkFrequency: false };
    if (type === "email_change_current" || type === "email_change_new") {
      if (!newEmail) throw authError("emailRequired", "The new email address provided is invalid");
      const taken = await findUserByEmail(tx, newEmail);
      if (taken) throw authError("emailExists");
      const sent = await sendEmailChange(ctx, tx, user, newEmail, options);
      const side = type === "email_change_new" ? sent.newSide : (sent.currentSide ?? sent.newSide);
      return { user: await refreshed(tx, user), sent: side, verificationType: type };
    }
    const flow =
      type === "magiclink" && !user.email_confirmed_at
        ? "signup"
        : (type as "signup" | "invite" | "magiclink" | "recovery");
    const sent = await sendEmail(ctx, tx, user, flow, options);
    return { user: await refreshed(tx, user), sent, verificationType: type };
  });
  return Response.json({
    ...(await userJson(ctx.db, result.user)),
    action_link: result.sent.actionLink,
    email_otp: result.sent.otp,
    hashed_token: result.sent.hashedToken,
    verification_type: result.verificationType,
    redirect_to: result.sent.redirectTo,
  });
}

async function refreshed(db: Db, user: UserRow): Promise<UserRow> {
  return (await findUserById(db, user.id)) ?? user;
}

/** role: any name, within auth.users.role, a varchar(255) (longer fails there: a 500 on Auth). */
function checkRole(role: string | undefined): void {
  if (role !== undefined && [...role].length > 255) {
    throw authError("validationFailed", "role must be 255 characters or less");
  }
}

/** ban_duration: "none" lifts a ban; a Go duration ("24h", "1h30m") bans until now + duration. */
function banUntil(value: string | undefined): Date | null | undefined {
  if (value === undefined || value === "") return undefined;
  if (value === "none") return null;
  const nanoseconds = parseGoDuration(value);
  if (typeof nanoseconds === "string") {
    throw authError("validationFailed", `invalid format for ban duration: ${nanoseconds}`);
  }
  return new Date(Date.now() + Number(nanoseconds / 1_000_000n));
}

/** The {id} and {factor_id} of /admin/users/{id}/factors[/{factor_id}] (loadUser, loadFactor). */
async function loadUserAndFactor(ctx: AuthContext, request: Request) {
  const segments = new URL(request.url).pathname.split("/");
  const at = segments.indexOf("users");
  const userId = segments[at + 1] ?? "";
  if (!UUID.test(userId)) throw authError("userIdNotUuid");
  const user = await findUserById(ctx.db, userId);
  if (!user) throw authError("userNotFound");
  const factorId = segments[at + 3];
  if (factorId === undefined) return { user };
  if (!UUID.test(factorId)) throw authError("factorIdNotUuid");
  const factor = await findFactor(ctx.db, factorId, user.id);
  if (!factor) throw authError("factorNotFound");
  return { user, factor };
}

/** GET /admin/users/{id}/factors: the user's factors (a JSON array). */
export async function listFactorsAdmin(ctx: AuthContext, request: Request): Promise<Response> {
  await requireAdmin(ctx, request);
  const { user } = await loadUserAndFactor(ctx, request);
  const factors = await factorsOf(ctx.db, user.id);
  return Response.json(factors.map(factorJson));
}

/** DELETE /admin/users/{id}/factors/{factor_id}: for a user who lost their authenticator. */
export async function deleteFactorAdmin(ctx: AuthContext, request: Request): Promise<Response> {
  await requireAdmin(ctx, request);
  const { user, factor } = await loadUserAndFactor(ctx, request);
  if (!factor) throw authError("factorNotFound");
  await ctx.db.transaction(async (tx) => {
    await audit(tx, clientIp(request), user, "factor_deleted", {
      user_id: user.id,
      factor_id: factor.id,
    });
    await deleteFactor(tx, factor);
  });
  return Response.json(factorJson(factor));
}

/** PUT /admin/users/{id}/factors/{factor_id}: the factor's friendly_name (no phone factors locally). */
export async function updateFactorAdmin(ctx: AuthContext, request: Request): Promise<Response> {
  await requireAdmin(ctx, request);
  const { user, factor } = await loadUserAndFactor(ctx, request);
  if (!factor) throw authError("factorNotFound");
  const params = await readParams(request, { friendly_name: "string", phone: "string" });
  if (params.friendly_name) validateFriendlyName(params.friendly_name);
  const updated = await ctx.db.transaction(async (tx) => {
    if (params.friendly_name) await renameFactor(tx, factor.id, params.friendly_name);
    await audit(tx, clientIp(request), user, "factor_updated", {
      user_id: user.id,
      factor_id: factor.id,
      factor_type: factor.factor_type,
    });
    return (await findFactor(tx, factor.id, user.id)) ?? factor;
  });
  return Response.json(factorJson(updated));
}

import type { AuthContext } from "../context.ts";
import { authError } from "../errors.ts";
import { requireAdmin, requireUser } from "../http/authenticate.ts";
import { clientIp, readParams } from "../http/request.ts";
import { UUID, validateFriendlyName } from "../http/validate.ts";
import { audit } from "../models/audit.ts";
import { findUserById } from "../models/users.ts";
import {
  deletePasskey,
  findPasskey,
  passkeyJson,
  passkeysOf,
  renamePasskey,
} from "../models/webauthn-credentials.ts";
import {
  passkeyIdOf,
  requirePasskeyManagementAal,
  requirePasskeysEnabled,
} from "../webauthn/passkey-request.ts";

/** GET /passkeys: the signed-in user's passkeys, oldest first. */
export async function listPasskeys(ctx: AuthContext, request: Request): Promise<Response> {
  requirePasskeysEnabled(ctx);
  const { user } = await requireUser(ctx, request);
  return Response.json((await passkeysOf(ctx.db, user.id)).map(passkeyJson));
}

/** PATCH /passkeys/{id}: renames one of the user's passkeys (no aal2 needed, as on the real one). */
export async function updatePasskey(ctx: AuthContext, request: Request): Promise<Response> {
  requirePasskeysEnabled(ctx);
  const { user } = await requireUser(ctx, request);
  const id = passkeyIdOf(request);
  const { friendly_name: name = "" } = await readParams(request, { friendly_name: "string" });
  if (name === "") throw authError("friendlyNameRequired");
  validateFriendlyName(name);
  const passkey = await findPasskey(ctx.db, id, user.id);
  if (!passkey) throw authError("passkeyNotFound");
  const renamed = await ctx.db.transaction(async (tx) => {
    const row = await renamePasskey(tx, passkey.id, name);
    await audit(tx, clientIp(request), user, "passkey_updated", { passkey_id: passkey.id });
    return row ?? passkey;
  });
  return Response.json(passkeyJson(renamed));
}

/** DELETE /passkeys/{id}: 204; needs an aal2 session when the user has a verified factor. */
export async function deletePasskeyOfUser(ctx: AuthContext, request: Request): Promise<Response> {
  requirePasskeysEnabled(ctx);
  const caller = await requireUser(ctx, request);
  await requirePasskeyManagementAal(ctx, caller);
  const id = passkeyIdOf(request);
  const passkey = await findPasskey(ctx.db, id, caller.user.id);
  if (!passkey) throw authError("passkeyNotFound");
  await ctx.db.transaction(async (tx) => {
    await deletePasskey(tx, passkey.id);
    await audit(tx, clientIp(request), caller.user, "passkey_deleted", { passkey_id: passkey.id });
  });
  return new Response(null, { status: 204 });
}

/** The {user_id} of /admin/users/{user_id}/passkeys (loadUser). */
async function adminTarget(ctx: AuthContext, request: Request) {
  const segments = new URL(request.url).pathname.split("/");
  const userId = segments[segments.indexOf("users") + 1] ?? "";
  if (!UUID.test(userId)) throw authError("userIdNotUuid");
  const user = await findUserById(ctx.db, userId);
  if (!user) throw authError("userNotFound");
  return user;
}

/** GET /admin/users/{user_id}/passkeys (admin routes answer whether or not passkeys are on). */
export async function listPasskeysAdmin(ctx: AuthContext, request: Request): Promise<Response> {
  await requireAdmin(ctx, request);
  const user = await adminTarget(ctx, request);
  return Response.json((await passkeysOf(ctx.db, user.id)).map(passkeyJson));
}

/** DELETE /admin/users/{user_id}/passkeys/{passkey_id}: 204; the audit entry names the admin. */
export async function deletePasskeyAdmin(ctx: AuthContext, request: Request): Promise<Response> {
  await requireAdmin(ctx, request);
  const user = await adminTarget(ctx, request);
  const id = passkeyIdOf(request);
  const passkey = await findPasskey(ctx.db, id, user.id);
  if (!passkey) throw authError("passkeyNotFound");
  await ctx.db.transaction(async (tx) => {
    await deletePasskey(tx, passkey.id);
    // The actor is the admin (a secret key or service_role JWT names no user).
    await audit(tx, clientIp(request), null, "passkey_deleted", {
      user_id: user.id,
      passkey_id: passkey.id,
    });
  });
  return new Response(null, { status: 204 });
}

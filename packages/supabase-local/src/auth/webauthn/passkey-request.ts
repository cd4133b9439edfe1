import type { AuthContext } from "../context.ts";
import { authError } from "../errors.ts";
import type { Caller } from "../http/authenticate.ts";
import { pick, rawField, readJson } from "../http/request.ts";
import { UUID } from "../http/validate.ts";
import { hasVerifiedFactor } from "../models/factors.ts";

/** What the passkey endpoints share (the real router's middleware and request params). */

/** requirePasskeyEnabled: every /passkeys route is a 404 passkey_disabled while [auth.passkey] is off. */
export function requirePasskeysEnabled(ctx: AuthContext): void {
  if (!ctx.config.auth.passkey.enabled) throw authError("passkeyDisabled");
}

/** requirePasskeyManagementAAL: registering or deleting a passkey needs an aal2 session once the
 * user has a verified factor (a user without one can never reach aal2). */
export async function requirePasskeyManagementAal(ctx: AuthContext, caller: Caller): Promise<void> {
  if (!(await hasVerifiedFactor(ctx.db, caller.user.id))) return;
  if (caller.session?.aal !== "aal2") throw authError("passkeyNeedsAal2");
}

/** The body of /passkeys/{registration,authentication}/verify: a challenge id and the credential
 * (kept raw, as json.RawMessage), checked in the real order. */
export async function readCeremonyParams(
  request: Request,
): Promise<{ challengeId: string; credential: unknown }> {
  const body = await readJson(request);
  const { challenge_id: challengeId = "" } = pick(body, { challenge_id: "string" });
  const credential = rawField(body, "credential");
  if (challengeId === "") throw authError("challengeIdRequired");
  if (credential === undefined) throw authError("credentialRequired");
  if (!UUID.test(challengeId)) throw authError("challengeIdNotUuid");
  return { challengeId: challengeId.toLowerCase(), credential };
}

/** The {passkey_id} of the path; a malformed one is as unknown as a missing one. */
export function passkeyIdOf(request: Request): string {
  const segments = new URL(request.url).pathname.split("/");
  const id = segments[segments.indexOf("passkeys") + 1] ?? "";
  if (!UUID.test(id)) throw authError("passkeyNotFound");
  return id.toLowerCase();
}

import { randomUUID } from "node:crypto";
import type { AuthContext } from "../context.ts";
import type { Db } from "../models/db.ts";
import { hookEnabled, invokeHook } from "./hooks.ts";

/** The user a sign-up is about to create. */
export interface NewUserCandidate {
  email?: string;
  phone?: string;
  /** The provider the account is made with (`email`, `phone`, `google`, …); none if anonymous. */
  provider?: string;
  userMetadata: Record<string, unknown>;
}

/**
 * [auth.hook.before_user_created]: a sign-up (email or phone, anonymous, a one-time code or magic
 * link to a new address, an invite, a first OAuth sign-in) shows the hook the user it is about to
 * create, and the hook's error refuses it. Admin-created users do not go through it, as in Auth.
 * Returns the id the user is to be created with: the hook saw it. `db` is ctx.db where the caller
 * has not begun its transaction yet, as Auth calls it; an OAuth sign-in and an admin-generated
 * link decide to create the user inside theirs, so the hook runs in it.
 */
export async function beforeUserCreated(
  ctx: AuthContext,
  db: Db,
  request: Request,
  candidate: NewUserCandidate,
): Promise<string> {
  const id = randomUUID();
  if (!hookEnabled(ctx, "before_user_created")) return id;
  await invokeHook(ctx, db, "before_user_created", request, { user: userModel(id, candidate) });
  return id;
}

/** The user as Auth's model marshals it before it is saved (no timestamps set yet, no role). */
function userModel(id: string, candidate: NewUserCandidate): Record<string, unknown> {
  const never = "0001-01-01T00:00:00Z";
  return {
    id,
    aud: "authenticated",
    role: "",
    email: candidate.email ?? "",
    phone: candidate.phone ?? "",
    app_metadata: candidate.provider
      ? { provider: candidate.provider, providers: [candidate.provider] }
      : {},
    user_metadata: candidate.userMetadata,
    identities: [],
    created_at: never,
    updated_at: never,
    is_anonymous: !candidate.provider,
  };
}

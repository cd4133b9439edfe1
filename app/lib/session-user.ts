import { avatarPathOf } from "./avatars";

/** The part of the verified claims pages show. Safe to send to the browser. */
export interface SessionUser {
  id: string;
  email: string | null;
  /** Authenticator assurance level: aal1 (password, link…) or aal2 (plus a second factor). */
  aal: string | null;
  /** The current avatar (user metadata, carried by the access token: no round trip), or null. */
  avatarPath: string | null;
  /** The display name the user's metadata carries, for the avatar's initials. */
  displayName: string | null;
}

export function toSessionUser(
  claims: {
    sub?: string;
    email?: string;
    aal?: string;
    user_metadata?: { avatar_path?: unknown; display_name?: unknown };
  } | null,
): SessionUser | null {
  if (!claims?.sub) return null;
  const meta = claims.user_metadata;
  return {
    id: claims.sub,
    email: claims.email ?? null,
    aal: claims.aal ?? null,
    avatarPath: avatarPathOf(claims.sub, meta?.avatar_path),
    displayName: typeof meta?.display_name === "string" ? meta.display_name.slice(0, 100) : null,
  };
}

/** The part of the verified claims pages show. Safe to send to the browser. */
export interface SessionUser {
  id: string;
  email: string | null;
  /** Authenticator assurance level: aal1 (password, link…) or aal2 (plus a second factor). */
  aal: string | null;
}

export function toSessionUser(
  claims: { sub?: string; email?: string; aal?: string } | null,
): SessionUser | null {
  if (!claims?.sub) return null;
  return { id: claims.sub, email: claims.email ?? null, aal: claims.aal ?? null };
}

import { SignJWT } from "jose";
import { type AuthContext, jwtIssuer } from "../context.ts";
import { customizeClaims } from "../hooks/access-token.ts";
import type { Db } from "../models/db.ts";
import type { AmrEntry } from "../models/sessions.ts";
import type { UserRow } from "../models/users.ts";

/**
 * Signs a user access token (the current signing key: ES256 or RS256, its kid in the header) with
 * the real service's claims, or those the custom access token hook makes of them. `grant` is the
 * request and how the session was authenticated this time (the hook's authentication_method).
 */
export async function signAccessToken(
  ctx: AuthContext,
  db: Db,
  user: UserRow,
  session: { id: string; aal: string; amr: AmrEntry[] },
  grant: { request: Request; method: string },
): Promise<{ token: string; expiresAt: number; expiresIn: number }> {
  const iat = Math.floor(Date.now() / 1000);
  const expiresIn = ctx.config.auth.jwtExpiry;
  const claims = {
    iss: jwtIssuer(ctx),
    sub: user.id,
    aud: user.aud,
    exp: iat + expiresIn,
    iat,
    email: user.email ?? "",
    phone: user.phone ?? "",
    app_metadata: user.raw_app_meta_data ?? {},
    user_metadata: user.raw_user_meta_data ?? {},
    role: user.role,
    aal: session.aal,
    amr: session.amr,
    session_id: session.id,
    is_anonymous: user.is_anonymous,
  };
  const key = ctx.signingKeys.current;
  const token = await new SignJWT(await customizeClaims(ctx, db, grant, claims))
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: "JWT" })
    .sign(key.privateKey);
  return { token, expiresAt: iat + expiresIn, expiresIn };
}

import { requestContext } from "../../http/context.ts";
import { type Claims, JwtRejected } from "../../http/jwt.ts";
import type { AuthContext } from "../context.ts";
import { authError } from "../errors.ts";
import { findSession, type SessionRow, sessionExpiry } from "../models/sessions.ts";
import { findUserById, isBanned, type UserRow } from "../models/users.ts";
import { UUID } from "./validate.ts";

export type { Claims };

const NIL_UUID = "00000000-0000-0000-0000-000000000000";

/** GOTRUE_JWT_AUD: the audience of the tokens Auth issues and of requests that name none. */
const DEFAULT_AUDIENCE = "authenticated";

/** The bearer JWT's claims (requireAuthentication's first half): 401 without one, 403 bad_jwt. */
export async function requireClaims(_ctx: AuthContext, request: Request): Promise<Claims> {
  // the gateway picked the bearer and verifies it once (http/app.ts)
  const context = requestContext(request);
  if (!context.bearer) throw authError("noAuthorization");
  try {
    return await context.claims();
  } catch (error) {
    if (!(error instanceof JwtRejected)) throw error;
    throw authError("badJwt", `invalid JWT: unable to parse or verify signature, ${error.auth}`);
  }
}

export interface Caller {
  claims: Claims;
  user: UserRow;
  session?: SessionRow;
}

/** A signed-in user: valid JWT whose sub is a user and whose session_id still exists. */
export async function requireUser(ctx: AuthContext, request: Request): Promise<Caller> {
  const caller = await loadCaller(ctx, await requireClaims(ctx, request));
  // an access token issued before a ban is refused while it lasts (upstream since v2.195)
  if (isBanned(caller.user, ctx.now())) throw authError("userBanned").withStatus(403);
  return caller;
}

/** maybeLoadUserOrSession: the token's user, and its session when it names one; both must exist. */
async function loadCaller(ctx: AuthContext, claims: Claims): Promise<Caller> {
  const sub = claims.sub;
  if (typeof sub !== "string" || sub === "") throw authError("jwtMissingSub");
  // Auth answers an unparseable sub with a 400 (its other claim refusals are 403s)
  if (!UUID.test(sub))
    throw authError("badJwt", "invalid claim: sub claim must be a UUID").withStatus(400);
  const user = await findUserById(ctx.db, sub);
  if (!user) throw authError("userFromSubMissing");
  let session: SessionRow | undefined;
  const sessionId = claims.session_id;
  // the nil UUID is no session, as an empty session_id
  if (typeof sessionId === "string" && sessionId !== "" && sessionId !== NIL_UUID) {
    if (!UUID.test(sessionId))
      throw authError("badJwt", "invalid claim: session_id claim must be a UUID");
    session = await findSession(ctx.db, sessionId);
    if (!session) throw authError("sessionFromJwtMissing");
  }
  return { claims, user, session };
}

/**
 * Whether the token's first `aud` is the request's audience (requestAud): the X-JWT-AUD header
 * when sent, else the token's own first `aud` (ignored for admin roles), else DEFAULT_AUDIENCE.
 * A token without an `aud` never matches.
 */
export function audienceMatches(request: Request, claims: Claims): boolean {
  const raw = claims.aud;
  const first = Array.isArray(raw) ? raw[0] : raw;
  const fromToken = typeof first === "string" ? first : "";
  const admin = claims.role === "service_role" || claims.role === "supabase_admin";
  const requested = request.headers.get("x-jwt-aud") || (!admin && fromToken) || DEFAULT_AUDIENCE;
  return fromToken !== "" && fromToken === requested;
}

/** requireAdmin: a JWT whose role is service_role (or supabase_admin). */
export async function requireAdmin(ctx: AuthContext, request: Request): Promise<Claims> {
  const claims = await requireClaims(ctx, request);
  // an admin token of a user's session is only as good as the session: one signed out (or its
  // user gone) is refused though the JWT has not expired (upstream since v2.190); a token of no
  // session (the service_role key) is not looked up
  const sessionId = claims.session_id;
  if (typeof sessionId === "string" && sessionId !== "" && sessionId !== NIL_UUID) {
    const { session } = await loadCaller(ctx, claims);
    if (session && (await sessionExpiry(ctx.db, session, null, ctx.config.auth.sessions)))
      throw authError("sessionExpired", "Session is no longer valid").withStatus(403);
  }
  if (claims.role !== "service_role" && claims.role !== "supabase_admin")
    throw authError("notAdmin");
  return claims;
}

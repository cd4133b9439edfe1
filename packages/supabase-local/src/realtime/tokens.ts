// A channel's token, checked as upstream's confirm_token does at a join, at each access_token
// message and when the token's time is up: it must verify, carry `role` and an integer `exp`,
// and not have expired. Each failure has upstream's words (realtime_channel.ex, channels_authorization).
import { decodeJwt } from "jose";
import { type Claims, JwtRejected } from "../http/jwt.ts";

export type Verify = (token: string) => Promise<Claims>;

export type Confirmed =
  | { ok: true; claims: Claims /** ms until it must be confirmed again */; recheckIn: number }
  | {
      ok: false;
      /** the join's reason code ("InvalidJWTToken", …) */
      code: string;
      message: string;
    };

/** Upstream re-checks a channel's token every 5 minutes, or at its expiry if sooner
 * (@confirm_token_ms_interval). */
const MAX_RECHECK_MS = 5 * 60 * 1000;

export async function confirmToken(
  token: string,
  verify: Verify,
  now = Date.now(),
): Promise<Confirmed> {
  let claims: Claims;
  try {
    claims = await verify(token);
  } catch (error) {
    if (!(error instanceof JwtRejected)) throw error;
    if (error.rest.message === "JWT expired") {
      const exp = expOf(token);
      const ago = exp === undefined ? 0 : Math.max(0, Math.floor(now / 1000) - exp);
      return {
        ok: false,
        code: "InvalidJWTToken",
        message: `Token has expired ${ago} seconds ago`,
      };
    }
    if (/signature is invalid/.test(error.auth)) {
      return { ok: false, code: "JwtSignatureError", message: "Failed to validate JWT signature" };
    }
    return { ok: false, code: "MalformedJWT", message: "The token provided is not a valid JWT" };
  }
  const exp = claims.exp;
  if (typeof claims.role !== "string" || typeof exp !== "number" || !Number.isInteger(exp)) {
    return {
      ok: false,
      code: "InvalidJWTToken",
      message: "Fields `role` and `exp` are required in JWT",
    };
  }
  const left = exp - Math.floor(now / 1000);
  if (left <= 0) {
    return { ok: false, code: "InvalidJWTToken", message: "Token expiration time is invalid" };
  }
  return { ok: true, claims, recheckIn: Math.min(MAX_RECHECK_MS, left * 1000) };
}

function expOf(token: string): number | undefined {
  try {
    const exp = decodeJwt(token).exp;
    return typeof exp === "number" ? exp : undefined;
  } catch {
    return undefined;
  }
}

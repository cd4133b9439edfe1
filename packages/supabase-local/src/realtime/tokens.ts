// A channel's token, checked as upstream's confirm_token does at a join, at each access_token
// message and when the token's time is up: it must verify as upstream's JwtVerification verifies
// (channelTokenVerifier), carry `role` and `exp`, and not have expired. Each failure has upstream's
// words (realtime_channel.ex, channels_authorization.ex, jwt_verification.ex).
import { compactVerify, decodeJwt, decodeProtectedHeader, importJWK, type JWTPayload } from "jose";
import type { Claims } from "../http/jwt.ts";
import type { SigningKeys } from "../project/keys.ts";

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

/** A token channelTokenVerifier refused: the join's reason code and upstream's message. */
export class TokenRefused extends Error {
  readonly code: string;
  /** An expired token's `exp`, for "Token has expired n seconds ago". */
  readonly expiredAt: number | undefined;
  constructor(code: string, message: string, expiredAt?: number) {
    super(message);
    this.code = code;
    this.expiredAt = expiredAt;
  }
}

const malformed = () => new TokenRefused("MalformedJWT", "The token provided is not a valid JWT");
const noSigner = (kid?: string) =>
  new TokenRefused(
    "JwtSignerError",
    kid === undefined
      ? "Failed to generate JWT signer, check your JWT secret or JWKS configuration"
      : `Failed to generate JWT signer for key ID (kid) ${JSON.stringify(kid)}, check your JWT secret or JWKS configuration`,
  );

/** The algorithms upstream's JwtVerification signs with, by the JWK key type each needs. */
const KEY_TYPES: Record<string, "oct" | "RSA" | "EC" | "OKP"> = {
  HS256: "oct",
  HS384: "oct",
  HS512: "oct",
  RS256: "RSA",
  RS384: "RSA",
  RS512: "RSA",
  ES256: "EC",
  ES384: "EC",
  ES512: "EC",
  Ed25519: "OKP",
  Ed448: "OKP",
  EdDSA: "OKP",
};

/**
 * Verifies a channel's token as Realtime does (the CLI gives it the JWT secret and the project's
 * JWKS), which differs from Auth's and the data API's rules (http/jwt.ts):
 * - HS256, HS384 and HS512 verify with the JWT secret (upstream would take an `oct` key of the
 *   JWKS that the `kid` names first: the project's JWKS has none); RS*, ES* and EdDSA need a `kid`
 *   of a JWKS key of their type, else JwtSignerError;
 * - of the claims only `exp` (a number, in the future) and `iat` (a number) are checked, if
 *   present: a future `nbf` does not matter; a fractional `exp` or `iat` is rounded;
 * - whitespace in the token, and percent-escapes, are taken out first (clean_token).
 */
export function channelTokenVerifier(jwtSecret: string, signingKeys: SigningKeys): Verify {
  const secret = new TextEncoder().encode(jwtSecret);
  const keys = new Map<string, Promise<CryptoKey | Uint8Array>>();
  const keyFor = (alg: string, kid: string | undefined): Promise<CryptoKey | Uint8Array> => {
    const type = Object.hasOwn(KEY_TYPES, alg) ? KEY_TYPES[alg] : undefined;
    if (type === "oct") return Promise.resolve(secret);
    const jwk = signingKeys.all.find((k) => k.kid === kid && k.publicJwk.kty === type)?.publicJwk;
    if (!type || kid === undefined || !jwk) throw noSigner(type ? kid : undefined);
    const id = `${alg} ${kid}`;
    let key = keys.get(id);
    if (!key) {
      key = importJWK({ ...jwk, alg }, alg) as Promise<CryptoKey | Uint8Array>;
      keys.set(id, key);
    }
    return key;
  };
  return async (raw) => {
    let token: string;
    let header: Record<string, unknown>;
    let claims: JWTPayload;
    try {
      token = decodeURIComponent(raw).replace(/\s/g, "");
      header = decodeProtectedHeader(token);
      claims = decodeJwt(token);
    } catch {
      throw malformed();
    }
    const alg = String(header.alg);
    const kid = typeof header.kid === "string" ? header.kid : undefined;
    try {
      // a key of the right type that cannot take this algorithm (a P-256 key for ES384) fails
      // as upstream's signer does: at the signature
      await compactVerify(token, await keyFor(alg, kid), { algorithms: [alg] });
    } catch (error) {
      if (error instanceof TokenRefused) throw error;
      throw new TokenRefused("JwtSignatureError", "Failed to validate JWT signature");
    }
    const { exp, iat } = claims;
    if (
      (exp !== undefined && typeof exp !== "number") ||
      (iat !== undefined && typeof iat !== "number")
    )
      throw malformed();
    const now = Math.floor(Date.now() / 1000);
    if (exp !== undefined && exp <= now)
      throw new TokenRefused("InvalidJWTToken", "Token has expired", Math.round(exp));
    const rounded: Record<string, unknown> = { ...claims };
    if (exp !== undefined) rounded.exp = Math.round(exp);
    if (iat !== undefined) rounded.iat = Math.round(iat);
    return rounded as Claims;
  };
}

export async function confirmToken(
  token: string,
  verify: Verify,
  now = Date.now(),
): Promise<Confirmed> {
  let claims: Claims;
  try {
    claims = await verify(token);
  } catch (error) {
    if (!(error instanceof TokenRefused)) throw error;
    if (error.expiredAt !== undefined) {
      const ago = Math.max(0, Math.floor(now / 1000) - error.expiredAt);
      return { ok: false, code: error.code, message: `Token has expired ${ago} seconds ago` };
    }
    return { ok: false, code: error.code, message: error.message };
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

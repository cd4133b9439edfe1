// Verifying a JWT as the hosted stack does, for both of its readers: Auth and the data API.
import { decodeProtectedHeader, jwtVerify, type ProtectedHeaderParameters } from "jose";
import type { Keys, SigningKeys } from "../project/keys.ts";

export type Claims = Record<string, unknown> & { role: string };

/** Why a JWT was refused, in the words of each reader: Auth (golang-jwt) and the data API (PostgREST). */
export class JwtRejected extends Error {
  /** GoTrue's text after "invalid JWT: unable to parse or verify signature, ". */
  readonly auth: string;
  /** PostgREST's PGRST301/PGRST303 message and details. */
  readonly rest: { message: string; details?: string };
  constructor(auth: string, rest: { message: string; details?: string }) {
    super(auth);
    this.auth = auth;
    this.rest = rest;
  }
}

const VALID_METHODS = ["HS256", "RS256", "ES256"];
const VERIFICATION_ERROR: Record<string, string> = {
  HS256: "signature is invalid",
  ES256: "crypto/ecdsa: verification error",
  RS256: "crypto/rsa: verification error",
};

/**
 * Verifies a JWT as the stack does (the CLI gives both readers HS256, RS256 and ES256): a `kid`
 * of a signing key selects that key; otherwise HS256 is checked against the JWT secret (the
 * legacy anon/service_role keys). Anything else is a JwtRejected with each reader's words.
 */
export async function verifyJwt(
  token: string,
  keys: Keys,
  signingKeys: SigningKeys,
): Promise<Claims> {
  const parts = token.split(".");
  let header: ProtectedHeaderParameters;
  try {
    if (parts.length !== 3) throw new Error("segments");
    header = decodeProtectedHeader(token);
  } catch {
    throw new JwtRejected(
      parts.length !== 3
        ? "token is malformed: token contains an invalid number of segments"
        : "token is malformed: could not parse the token",
      {
        message:
          parts.length !== 3
            ? `Expected 3 parts in JWT; got ${parts.length}`
            : "JWT cryptographic operation failed",
      },
    );
  }
  const alg = String(header.alg);
  if (!VALID_METHODS.includes(alg)) {
    throw new JwtRejected(`token signature is invalid: signing method ${alg} is invalid`, {
      message: "Wrong or unsupported encoding algorithm",
    });
  }
  const kid = typeof header.kid === "string" ? header.kid : undefined;
  const byKid = kid === undefined ? undefined : signingKeys.all.find((k) => k.kid === kid);
  let key: CryptoKey | Uint8Array;
  if (byKid && byKid.alg === alg) key = byKid.publicKey;
  else if (alg === "HS256") key = new TextEncoder().encode(keys.jwtSecret);
  else {
    throw new JwtRejected(
      `token is unverifiable: error while executing keyfunc: unrecognized JWT kid ${kid ?? "<nil>"} for algorithm ${alg}`,
      {
        message: "No suitable key or wrong key type",
        details: "No suitable key was found to decode the JWT",
      },
    );
  }
  try {
    const { payload } = await jwtVerify(token, key, { algorithms: [alg] });
    return payload as Claims;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ERR_JWT_EXPIRED") {
      throw new JwtRejected("token has invalid claims: token is expired", {
        message: "JWT expired",
      });
    }
    if (code === "ERR_JWS_SIGNATURE_VERIFICATION_FAILED") {
      throw new JwtRejected(`token signature is invalid: ${VERIFICATION_ERROR[alg]}`, {
        message: "JWT cryptographic operation failed",
      });
    }
    throw new JwtRejected("token is malformed: could not parse the token", {
      message: "JWT cryptographic operation failed",
    });
  }
}

/** An HS256 JWT: the only HS256 key the stack verifies with is the CLI's public JWT secret. */
export function isHs256(token: string | undefined): boolean {
  if (!token || token.split(".").length !== 3) return false;
  try {
    return decodeProtectedHeader(token).alg === "HS256";
  } catch {
    return false;
  }
}

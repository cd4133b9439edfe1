import { decodeProtectedHeader, jwtVerify, type ProtectedHeaderParameters } from "jose";
import type { Keys, SigningKeys } from "./keys.ts";
import type { Authenticate } from "./rest/index.ts";

export const API_ROLES = ["anon", "authenticated", "service_role"] as const;

/** What the API gateway decides from the `apikey` header and `Authorization` before a request
 * reaches Auth or the data API: the bearer JWT to pass on, or an answer of its own (401). */
export type GatewayResult = { bearer?: string } | { reject: Response };

/**
 * The Supabase CLI's gateway rule (start.go BearerToken): a self-minted `Authorization: Bearer`
 * JWT passes through; otherwise the secret key becomes the service_role JWT and the publishable key
 * the anon JWT; a legacy JWT apikey is used as is. Unlike the CLI (which forwards anything), an
 * unknown `sb_` key is refused with the hosted gateway's 401, so a wrong key shows up early, and
 * the secret key sent by a browser gets the hosted gateway's 401 too.
 */
export function gateway(request: Request, keys: Keys): GatewayResult {
  const authorization = request.headers.get("authorization");
  const apikey = request.headers.get("apikey") ?? new URL(request.url).searchParams.get("apikey");
  if (authorization && !authorization.startsWith("Bearer sb_")) {
    const match = /^Bearer\s+(.+)$/i.exec(authorization);
    return { bearer: match?.[1]?.trim() };
  }
  const key = apikey ?? authorization?.slice("Bearer ".length);
  if (!key) return {};
  if (key === keys.secret) {
    if (fromBrowser(request)) return { reject: secretKeyInBrowser() };
    return { bearer: keys.serviceRole };
  }
  if (key === keys.publishable) return { bearer: keys.anon };
  if (key.startsWith("sb_")) return { reject: invalidApiKey() };
  return { bearer: key };
}

/**
 * The hosted gateway refuses secret keys from browsers, telling them by the User-Agent (a browser's
 * starts with Mozilla/). Here an Origin header counts too: only browsers send one, and some let a
 * page set its own User-Agent, while the local secret key is public. The legacy service_role JWT
 * is not refused, as on the hosted service.
 */
function fromBrowser(request: Request): boolean {
  return (
    /\bMozilla\//.test(request.headers.get("user-agent") ?? "") || request.headers.has("origin")
  );
}

function secretKeyInBrowser(): Response {
  return Response.json(
    {
      message: "Forbidden use of secret API key in browser",
      hint: "Secret API keys can only be used in a protected environment and should never be used in a browser. Delete this secret API key immediately!",
    },
    { status: 401 },
  );
}

function invalidApiKey(): Response {
  return Response.json(
    {
      message: "Invalid API key",
      hint: "Double check your Supabase `anon` or `service_role` API key.",
    },
    { status: 401 },
  );
}

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

/** The data API's view of the caller (PostgREST: no token = anon; a bad token = 401). */
export function createAuthenticate(keys: Keys, signingKeys: SigningKeys): Authenticate {
  return async (request) => {
    const result = gateway(request, keys);
    if ("reject" in result) return { error: "Invalid API key" };
    if (!result.bearer) return { claims: { role: "anon" } };
    try {
      const claims = await verifyJwt(result.bearer, keys, signingKeys);
      if (!API_ROLES.includes(claims.role as (typeof API_ROLES)[number])) {
        return { error: `role "${String(claims.role)}" does not exist` };
      }
      return { claims };
    } catch (error) {
      if (!(error instanceof JwtRejected)) throw error;
      return { error: error.rest.message, details: error.rest.details };
    }
  };
}

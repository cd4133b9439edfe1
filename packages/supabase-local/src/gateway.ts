import { decodeProtectedHeader, jwtVerify, type ProtectedHeaderParameters } from "jose";
import type { Keys, SigningKeys } from "./keys.ts";
import type { Authenticate } from "./rest/index.ts";

export const API_ROLES = ["anon", "authenticated", "service_role"] as const;

/** What the API gateway decides from the `apikey` header and `Authorization` before a request
 * reaches Auth or the data API: the bearer JWT to pass on, or an answer of its own (401). */
export type GatewayResult = { bearer?: string } | { reject: Response };

/**
 * The hosted gateway's rule (Kong `key-auth`, then its request transformer; self-hosted Supabase's
 * kong.yml has the same): every request under /auth/v1 and /rest/v1 carries one of the project's
 * API keys in the `apikey` header or query parameter (or, an `sb_` key, as the bearer), or gets a
 * 401 before Auth or the data API sees it (api.ts exempts openGatewayRoute's routes). The bearer
 * passed on is the caller's own `Authorization: Bearer` JWT, or else the key's: the secret key
 * becomes the service_role JWT, the publishable key the anon JWT, a legacy JWT key itself. The
 * Supabase CLI's gateway checks nothing and forwards every request, so what it lets through here
 * the hosted service refuses; this follows the hosted one.
 */
export function gateway(request: Request, keys: Keys): Promise<GatewayResult> {
  let result = decided.get(request);
  if (!result) {
    result = decide(request, keys);
    decided.set(request, result);
  }
  return result;
}

/** Each request's decision, made once: api.ts's check asks first, then Auth or the data API for
 * the bearer (a signed key's verification is not repeated). */
const decided = new WeakMap<Request, Promise<GatewayResult>>();

async function decide(request: Request, keys: Keys): Promise<GatewayResult> {
  const authorization = request.headers.get("authorization");
  const keyAsBearer = authorization?.startsWith("Bearer sb_")
    ? authorization.slice("Bearer ".length)
    : undefined;
  const apikey =
    request.headers.get("apikey") ?? new URL(request.url).searchParams.get("apikey") ?? keyAsBearer;
  if (!apikey) return { reject: noApiKey() };
  const bearer = await apiKeyBearer(apikey, keys);
  if (!bearer) return { reject: invalidApiKey() };
  if (apikey === keys.secret && fromBrowser(request)) return { reject: secretKeyInBrowser() };
  if (authorization && keyAsBearer === undefined) {
    const match = /^Bearer\s+(.+)$/i.exec(authorization);
    return { bearer: match?.[1]?.trim() };
  }
  return { bearer };
}

/** The JWT an API key stands for, or undefined when it is not one of the project's keys. */
async function apiKeyBearer(apikey: string, keys: Keys): Promise<string | undefined> {
  if (apikey === keys.secret) return keys.serviceRole;
  if (apikey === keys.publishable) return keys.anon;
  if (apikey === keys.anon || apikey === keys.serviceRole) return apikey;
  return (await signedBySigner(apikey, keys)) ? apikey : undefined;
}

/** An anon or service_role key the file's key signed, as `supabase-local status` prints them. */
async function signedBySigner(jwt: string, keys: Keys): Promise<boolean> {
  const signer = keys.signer;
  if (!signer || jwt.split(".").length !== 3) return false;
  try {
    if (decodeProtectedHeader(jwt).kid !== signer.kid) return false;
    const { payload } = await jwtVerify(jwt, signer.publicKey, { algorithms: [signer.alg] });
    return (
      (payload.role === "anon" || payload.role === "service_role") && payload.sub === undefined
    );
  } catch {
    return false;
  }
}

/**
 * The Auth routes the hosted gateway serves without an API key: the ones a browser is sent to by a
 * link or a redirect (an email's /verify link, a provider's /callback, /authorize), what a SAML
 * identity provider posts to or reads (/sso/saml/acs, /sso/saml/metadata), and the discovery
 * documents other services read (the JWKS among them).
 */
const OPEN_ROUTE =
  /^\/auth\/v1\/(?:verify|callback|authorize|sso\/saml\/(?:acs|metadata)|\.well-known\/[^/]+)\/?$/;

export function openGatewayRoute(path: string): boolean {
  return OPEN_ROUTE.test(path);
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

function noApiKey(): Response {
  return Response.json(
    {
      message: "No API key found in request",
      hint: "No `apikey` request header or url param was found.",
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
    const result = await gateway(request, keys);
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

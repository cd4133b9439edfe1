import { jwtVerify } from "jose";
import type { Keys, SigningKey } from "./keys.ts";
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

/** Verifies a JWT minted by this backend: HS256 (jwt_secret: anon/service_role keys) or ES256
 * (user access tokens). Throws jose errors (expired, bad signature, malformed). */
export async function verifyJwt(
  token: string,
  keys: Keys,
  signingKey: SigningKey,
): Promise<Claims> {
  const { payload } = await jwtVerify(token, async (header) => {
    if (header.alg === "HS256") return new TextEncoder().encode(keys.jwtSecret);
    if (header.alg === "ES256") return signingKey.publicKey;
    throw new Error(`unsupported alg ${header.alg}`);
  });
  return payload as Claims;
}

/** The data API's view of the caller (PostgREST: no token = anon; a bad token = 401). */
export function createAuthenticate(keys: Keys, signingKey: SigningKey): Authenticate {
  return async (request) => {
    const result = gateway(request, keys);
    if ("reject" in result) return { error: "Invalid API key" };
    if (!result.bearer) return { claims: { role: "anon" } };
    try {
      const claims = await verifyJwt(result.bearer, keys, signingKey);
      if (!API_ROLES.includes(claims.role as (typeof API_ROLES)[number])) {
        return { error: `role "${String(claims.role)}" does not exist` };
      }
      return { claims };
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === "ERR_JWT_EXPIRED") return { error: "JWT expired" };
      return { error: "JWSError JWSInvalidSignature" };
    }
  };
}

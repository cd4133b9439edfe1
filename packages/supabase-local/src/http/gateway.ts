import { decodeProtectedHeader, jwtVerify } from "jose";
import type { Keys, SigningKeys } from "../project/keys.ts";
import { sbForwardedFor } from "./client-address.ts";
import type { GatewayContext, KeyKind } from "./context.ts";
import { type Claims, isHs256, verifyJwt } from "./jwt.ts";

export interface GatewayOptions {
  keys: Keys;
  signingKeys: SigningKeys;
  /** local-backend.toml [auth] sb_forwarded_for. */
  sbForwardedFor: boolean;
}

/** What the HTTP app knows of the request before the gateway: see app.ts and local-only.ts. */
export interface GatewayCall {
  /** An openGatewayRoute: no key needed. */
  open: boolean;
  /** The socket's (or a trusted proxy header's) address. */
  peer: string;
  /** From another website's page (local-only.ts apiCaller). */
  foreign: boolean;
}

export type GatewayResult = { context: GatewayContext } | { reject: Response };

/**
 * The hosted gateway's rule (Kong `key-auth`, then its request transformer; self-hosted Supabase's
 * kong.yml has the same): every request under /auth/v1 and /rest/v1 carries one of the project's
 * API keys in the `apikey` header or query parameter (or, an `sb_` key, as the bearer), or gets a
 * 401 before Auth or the data API sees it (except openGatewayRoute's routes). The bearer
 * passed on is the caller's own `Authorization: Bearer` JWT, or else the key's: the secret key
 * becomes the service_role JWT, the publishable key the anon JWT, a legacy JWT key itself. The
 * Supabase CLI's gateway checks nothing and forwards every request, so what it lets through here
 * the hosted service refuses; this follows the hosted one.
 *
 * Two rules of the hosted gateway's secret keys: one from a browser is refused, and only one
 * (from a server) may carry `Sb-Forwarded-For`; with any other key the header is ignored. One rule
 * of this backend's own, as its service_role JWT and JWT secret are public: a service_role or
 * HS256 JWT from another website is refused (privilegedFromElsewhere).
 */
export async function gateway(
  request: Request,
  call: GatewayCall,
  options: GatewayOptions,
): Promise<GatewayResult> {
  const { keys, signingKeys } = options;
  const authorization = request.headers.get("authorization");
  const keyAsBearer = authorization?.startsWith("Bearer sb_")
    ? authorization.slice("Bearer ".length)
    : undefined;
  const inQuery = new URL(request.url).searchParams.get("apikey");
  const apikey = request.headers.get("apikey") ?? inQuery ?? keyAsBearer;
  const key = apikey ? await keyKind(apikey, keys) : undefined;
  if (!call.open) {
    if (!apikey) return { reject: noApiKey() };
    if (!key) return { reject: invalidApiKey() };
    if (key === "secret" && fromBrowser(request)) return { reject: secretKeyInBrowser() };
  }
  const ownBearer =
    authorization && keyAsBearer === undefined
      ? /^Bearer\s+(.+)$/i.exec(authorization)?.[1]?.trim()
      : undefined;
  const bearer =
    authorization && keyAsBearer === undefined ? ownBearer : key && keyBearer(key, apikey, keys);
  let verified: Promise<Claims> | undefined;
  const claims = () => {
    if (!bearer) return Promise.reject(new Error("no bearer to verify"));
    verified ??= verifyJwt(bearer, keys, signingKeys);
    return verified;
  };

  // A page of another site, or a browser's request with the key in its URL that says nothing of
  // where it comes from (a link or a form another site made, in a browser without Sec-Fetch-*).
  const elsewhere =
    call.foreign ||
    (inQuery !== null &&
      apikey === inQuery &&
      isBrowserAgent(request) &&
      !request.headers.has("origin") &&
      !request.headers.has("sec-fetch-site"));
  if (elsewhere) {
    const carried = [apikey, ownBearer];
    const serviceRole =
      key === "legacy_service_role" ||
      carried.some(isHs256) ||
      (ownBearer !== undefined &&
        (await claims().then(
          (c) => c.role,
          () => undefined,
        )) === "service_role");
    if (serviceRole) return { reject: privilegedFromElsewhere() };
  }

  const forwardedFor =
    options.sbForwardedFor && key === "secret" && !fromBrowser(request)
      ? sbForwardedFor(request.headers.get("sb-forwarded-for"))
      : undefined;
  return {
    context: {
      key,
      bearer,
      keyJwt: key && keyBearer(key, apikey, keys),
      claims,
      clientAddress: forwardedFor ?? call.peer,
      forwarded: forwardedFor !== undefined,
      elsewhere,
    },
  };
}

/** Which key `apikey` is, or undefined when it is not one of the project's keys. */
async function keyKind(apikey: string, keys: Keys): Promise<KeyKind | undefined> {
  if (apikey === keys.secret) return "secret";
  if (apikey === keys.publishable) return "publishable";
  if (apikey === keys.anon) return "legacy_anon";
  if (apikey === keys.serviceRole) return "legacy_service_role";
  const role = await signedBySigner(apikey, keys);
  return role === "anon"
    ? "legacy_anon"
    : role === "service_role"
      ? "legacy_service_role"
      : undefined;
}

/** The JWT a key stands for: the secret key the service_role JWT, the publishable key the anon
 * JWT, a legacy JWT key itself. */
function keyBearer(key: KeyKind, apikey: string | undefined, keys: Keys): string | undefined {
  if (key === "secret") return keys.serviceRole;
  if (key === "publishable") return keys.anon;
  return apikey;
}

/** The role of an anon or service_role key the file's key signed, as `supabase-local status`
 * prints them; undefined for anything else. */
async function signedBySigner(jwt: string, keys: Keys): Promise<string | undefined> {
  const signer = keys.signer;
  if (!signer || jwt.split(".").length !== 3) return undefined;
  try {
    if (decodeProtectedHeader(jwt).kid !== signer.kid) return undefined;
    const { payload } = await jwtVerify(jwt, signer.publicKey, { algorithms: [signer.alg] });
    const role = payload.role;
    return (role === "anon" || role === "service_role") && payload.sub === undefined
      ? role
      : undefined;
  } catch {
    return undefined;
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

/**
 * Storage's routes a browser loads without a key, as on the hosted service: public objects and
 * their info, signed URLs (download, upload, resumable upload, transformed images) and public
 * transformed images; and its S3 endpoint, whose requests are signed with SigV4 instead (the
 * CLI's gateway forwards them untouched).
 */
const OPEN_STORAGE_ROUTE =
  /^\/storage\/v1\/(?:s3(?:\/|$)|object\/(?:public|sign|upload\/sign|info\/public)\/|render\/image\/(?:public|sign)\/|upload\/resumable\/sign(?:\/|$))/;

export function openGatewayRoute(path: string): boolean {
  return OPEN_ROUTE.test(path) || OPEN_STORAGE_ROUTE.test(path);
}

/** A browser's User-Agent, as the hosted gateway tells them (they start with Mozilla/). */
function isBrowserAgent(request: Request): boolean {
  return /\bMozilla\//.test(request.headers.get("user-agent") ?? "");
}

/**
 * The hosted gateway refuses secret keys from browsers, telling them by the User-Agent. Here an
 * Origin header counts too: only browsers send one, and some let a page set its own User-Agent,
 * while the local secret key is public.
 */
function fromBrowser(request: Request): boolean {
  return isBrowserAgent(request) || request.headers.has("origin");
}

/**
 * The local stack's own refusal, worded as the hosted gateway words its secret-key one (401,
 * message and hint): the legacy service_role JWT and any HS256 JWT (the CLI's JWT secret is
 * public, so anyone can sign one, as any user) from another website's page. Leaving out the CORS
 * headers alone would not do: a form post or an image needs none, and the request would be served.
 */
function privilegedFromElsewhere(): Response {
  return Response.json(
    {
      message: "Forbidden use of a service_role or HS256 JWT from another origin",
      hint: "The local backend accepts the service_role key and tokens signed with its public JWT secret only from servers and from the project's own pages (the origins of auth.site_url and auth.additional_redirect_urls, and [api] cors_origins in supabase/local-backend.toml).",
    },
    { status: 401 },
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

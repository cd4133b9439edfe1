/**
 * The backend's local pages are for the developer's own browser tab and tools, never for other
 * websites: the mail inbox (magic links and codes), the OAuth provider page (recent accounts) and
 * the Auth admin API (the CLI's secret key is public). A page from anywhere else that the
 * developer has open could otherwise read or drive them, since the backend answers on localhost.
 *
 * They send no CORS headers, and a request to them is refused (403) when
 *  - its Host is a domain name other than localhost (a DNS-rebinding page sees itself as
 *    same-origin: http://attacker.example:54321 resolving to 127.0.0.1),
 *  - it carries an Origin other than the backend's own (a fetch, a form post or a preflight from
 *    another page; "null" included), or
 *  - the browser marks it Sec-Fetch-Site: cross-site (a script, image or frame another site
 *    embeds), except a top-level navigation to one of the HTML pages: following a link (or an
 *    OAuth redirect, from an app on localhost to 127.0.0.1) opens the page in the developer's tab,
 *    where no other site can read it.
 * The APIs the browser clients call (/auth/v1 except admin, /rest/v1) answer the project's own
 * pages (apiCaller below): a loopback Host, and CORS only for the origins of site_url and the
 * redirect URLs.
 */
import { globToRegExp } from "../auth/http/redirect.ts";
import type { Config } from "../project/config.ts";

const LOCAL_ONLY = [
  /^\/inbox(?:\/|$)/i,
  /^\/provider(?:\/|$)/i,
  /^\/auth\/v1\/admin(?:\/|$)/i,
  // auth.admin.inviteUserByEmail: an admin endpoint outside /admin
  /^\/auth\/v1\/invite\/?$/i,
];

/** Whether `path` (as the router sees it: percent-decoded) is one of the local-only endpoints. */
export function isLocalOnly(path: string): boolean {
  return LOCAL_ONLY.some((pattern) => pattern.test(path));
}

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

function isLoopback(hostname: string): boolean {
  return LOOPBACK.has(hostname) || hostname.endsWith(".localhost") || /^127\./.test(hostname);
}

/** Host names that cannot be rebound: localhost names and IP addresses (a LAN address included). */
function isTrustedHost(hostname: string): boolean {
  return (
    isLoopback(hostname) ||
    /^\d{1,3}(?:\.\d{1,3}){3}$/.test(hostname) ||
    /^\[[0-9a-f:.]+\]$/i.test(hostname)
  );
}

function isOwnOrigin(origin: string, own: URL): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // "null" and anything unparsable
  }
  if (url.protocol !== own.protocol) return false;
  if (url.host === own.host) return true;
  // the same server under another loopback name (http://localhost:54321 vs 127.0.0.1:54321)
  return isLoopback(url.hostname) && isLoopback(own.hostname) && url.port === own.port;
}

/**
 * The 403 for a request whose Host is a name that could be rebound to this machine (a DNS-rebinding
 * page, http://attacker.example:54321 resolving to 127.0.0.1, is same-origin to itself: its
 * requests carry its own name, and its GETs no Origin). Every endpoint asks it first: the local
 * pages (refuseForeign) and every API (apiCaller: /auth/v1, /rest/v1, and /storage/v1 and the
 * Realtime socket as they come).
 */
export function refuseUntrustedHost(request: Request, path: string): Response | undefined {
  const { hostname } = new URL(request.url);
  if (isTrustedHost(hostname)) return undefined;
  return forbidden(
    path,
    `Forbidden: the local backend does not answer to the host name "${hostname}"`,
    "Open it as http://127.0.0.1 or http://localhost (another name resolving here could be a DNS-rebinding page).",
  );
}

/** The 403 for a local-only endpoint asked by someone other than the developer's own tab, if so. */
export function refuseForeign(request: Request, path: string): Response | undefined {
  const own = new URL(request.url);
  const untrusted = refuseUntrustedHost(request, path);
  if (untrusted) return untrusted;
  const origin = request.headers.get("origin");
  const site = request.headers.get("sec-fetch-site");
  const navigation =
    !isApi(path) &&
    (request.method === "GET" || request.method === "HEAD") &&
    request.headers.get("sec-fetch-mode") === "navigate" &&
    request.headers.get("sec-fetch-dest") === "document";
  const foreignOrigin = origin !== null && !isOwnOrigin(origin, own);
  if (foreignOrigin || (site === "cross-site" && !navigation)) {
    return forbidden(
      path,
      "Forbidden: this local endpoint is not available to other websites",
      "It is for the developer's own browser tab (open it directly), tests and servers; it sends no CORS headers.",
    );
  }
  return undefined;
}

/**
 * Who is calling an API, as far as a browser tells: `cors` when the Origin is one of the
 * project's (CORS headers are sent for it, and only for it); `foreign` when the request comes from
 * another page, a site not the project's: an Origin that is not allowed ("null" included), or,
 * without one, a browser marking it cross-site or same-site (an image, a link or a form from
 * another site, or from another server on localhost). Servers (the Worker, Node, curl) send
 * neither header and are neither. Or a refusal, when the Host is not a loopback name or address.
 */
export type ApiCaller = { refused: Response } | { cors: boolean; foreign: boolean };

export function apiCaller(request: Request, path: string, origins: ProjectOrigins): ApiCaller {
  const refused = refuseUntrustedHost(request, path);
  if (refused) return { refused };
  const origin = request.headers.get("origin");
  if (origin !== null) {
    const allowed = origins.allows(origin) || isOwnOrigin(origin, new URL(request.url));
    if (!allowed) origins.warnOnce(origin);
    return { cors: allowed, foreign: !allowed };
  }
  const site = request.headers.get("sec-fetch-site");
  return { cors: false, foreign: site === "cross-site" || site === "same-site" };
}

/**
 * The origins of the project's own pages: site_url's, each additional_redirect_urls entry's, and
 * local-backend.toml's [api] cors_origins. Auth already trusts these pages with its redirects;
 * the APIs grant them CORS and nobody else.
 *
 * From a redirect URL: an exact URL gives its origin (http://localhost:5173/** gives
 * http://localhost:5173). A glob in the scheme-and-host part is matched as Auth matches the whole
 * URL (gobwas/glob, `.` and `/` separators: `*` and `?` stop at them, `**` does not), against the
 * Origin: https://*.example.com/** allows https://app.example.com, not https://a.b.example.com nor
 * https://example.com. So an origin is allowed when Auth would redirect to a page of it. Only
 * http(s) entries count (an app's custom scheme has no web origin). site_url gives its own origin
 * only: Auth also redirects to any port of a loopback site_url (native apps), which would let
 * every other server on localhost in.
 */
export class ProjectOrigins {
  readonly #exact = new Set<string>();
  readonly #globs: RegExp[] = [];
  readonly #warned = new Set<string>();

  constructor(config: Pick<Config, "auth" | "local">) {
    this.#add(config.auth.siteUrl, false);
    for (const url of config.auth.additionalRedirectUrls) this.#add(url, true);
    for (const origin of config.local.corsOrigins) this.#add(origin, true);
  }

  allows(origin: string): boolean {
    return this.#exact.has(origin) || this.#globs.some((glob) => glob.test(origin));
  }

  /** A page on this machine was refused CORS: likely the project's own on another port, so say
   * once how to allow it (another site's is no news). */
  warnOnce(origin: string): void {
    if (this.#warned.has(origin) || this.#warned.size > 100) return;
    if (!URL.canParse(origin) || !isLoopback(new URL(origin).hostname)) return;
    this.#warned.add(origin);
    console.warn(
      `[supabase-local] no CORS for ${origin}: not one of the project's origins (auth.site_url, auth.additional_redirect_urls in supabase/config.toml; [api] cors_origins in supabase/local-backend.toml)`,
    );
  }

  #add(url: string, globs: boolean): void {
    const match = /^(https?):\/\/([^/]*)/i.exec(url);
    if (!match) return;
    const [, scheme, authority] = match as unknown as [string, string, string];
    if (globs && /[*?]/.test(authority)) {
      this.#globs.push(globToRegExp(`${scheme.toLowerCase()}://${authority.toLowerCase()}`));
    } else if (URL.canParse(url)) {
      this.#exact.add(new URL(url).origin);
    }
  }
}

/** Headers that keep other pages from framing the local pages (and clicking "Continue as …"). */
export function noFraming(): Array<[string, string]> {
  return [
    ["X-Frame-Options", "DENY"],
    ["Content-Security-Policy", "frame-ancestors 'none'"],
  ];
}

/** The JSON endpoints (the inbox's API and every local API), as opposed to the HTML pages. */
function isApi(path: string): boolean {
  return /^\/(?:inbox\/api\/|(?:auth|rest|storage|realtime)\/v1(?:\/|$))/i.test(path);
}

function forbidden(path: string, message: string, hint: string): Response {
  const json = isApi(path);
  const headers = new Headers([
    ["Cache-Control", "no-store"],
    ["X-Content-Type-Options", "nosniff"],
    ...noFraming(),
  ]);
  if (json) return Response.json({ message, hint }, { status: 403, headers });
  headers.set("Content-Type", "text/plain; charset=utf-8");
  return new Response(`${message}.\n${hint}\n`, { status: 403, headers });
}

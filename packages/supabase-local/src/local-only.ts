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
 * The APIs the browser clients call (/auth/v1 except admin, /rest/v1) keep their CORS.
 */

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

/** The 403 for a local-only endpoint asked by someone other than the developer's own tab, if so. */
export function refuseForeign(request: Request, path: string): Response | undefined {
  const own = new URL(request.url);
  if (!isTrustedHost(own.hostname)) {
    return forbidden(
      path,
      `Forbidden: the local backend does not answer to the host name "${own.hostname}"`,
      "Open it as http://127.0.0.1 or http://localhost (another name resolving here could be a DNS-rebinding page).",
    );
  }
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

/** Headers that keep other pages from framing the local pages (and clicking "Continue as …"). */
export function noFraming(): Array<[string, string]> {
  return [
    ["X-Frame-Options", "DENY"],
    ["Content-Security-Policy", "frame-ancestors 'none'"],
  ];
}

/** The JSON endpoints (the inbox's API, the admin API), as opposed to the HTML pages. */
function isApi(path: string): boolean {
  return /^\/(?:inbox\/api|auth\/v1)\//i.test(path);
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

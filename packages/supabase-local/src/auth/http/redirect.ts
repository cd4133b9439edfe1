import { BlockList, isIP } from "node:net";
import type { Config } from "../../project/config.ts";
import { parseGoUrl } from "./go-url.ts";

/**
 * The redirect target of a request (utilities.GetReferrer): the `redirect_to` header, query
 * parameter or body field when it is allowed, else the Referer when allowed, else site_url.
 * A target that is not allowed is ignored, never an error.
 */
export function redirectTarget(config: Config, request: Request, fromBody?: string): string {
  const url = new URL(request.url);
  const candidate =
    request.headers.get("redirect_to") || url.searchParams.get("redirect_to") || fromBody || "";
  if (isRedirectAllowed(config, candidate)) return candidate;
  const referer = request.headers.get("referer") ?? "";
  if (isRedirectAllowed(config, referer)) return referer;
  return config.auth.siteUrl;
}

/**
 * utilities.IsRedirectURLValid, on Go's reading of both URLs:
 * - never a control character or a space anywhere (browsers strip some, so what is checked would
 *   not be what is followed), never a URL Go cannot parse;
 * - the site itself: same scheme, host (as written) and port; a loopback host may use any port
 *   (RFC 8252 §7.3, native apps);
 * - never a decimal-number host; a literal IP only if it is a loopback address; an http(s) host
 *   only of letters, digits, dots and dashes;
 * - otherwise a match of an additional_redirect_urls glob, without the fragment.
 * Locally the target must also be a URL for the WHATWG parser, which builds the redirect.
 */
export function isRedirectAllowed(config: Config, target: string): boolean {
  if (target === "" || /[\u0000-\u0020\u007f]/.test(target)) return false;
  const site = parseGoUrl(config.auth.siteUrl);
  const ref = parseGoUrl(target);
  if (!site || !ref || !URL.canParse(target)) return false;

  if (
    site.hostname === ref.hostname &&
    site.scheme === ref.scheme &&
    (site.port === ref.port || isLocalhost(ref.hostname))
  ) {
    return true;
  }
  if (/^[0-9]+$/.test(ref.hostname)) return false;
  const ipVersion = ref.hostname.includes("%") ? 0 : isIP(ref.hostname);
  if (ipVersion !== 0) return LOOPBACK.check(ref.hostname, ipVersion === 4 ? "ipv4" : "ipv6");
  const isHttp = ref.scheme === "http" || ref.scheme === "https";
  if (isHttp && !/^[a-zA-Z0-9]([a-zA-Z0-9.-]*[a-zA-Z0-9])?$/.test(ref.hostname)) return false;

  const withoutFragment = target.split("#")[0] as string;
  return config.auth.additionalRedirectUrls.some((pattern) =>
    globToRegExp(pattern).test(withoutFragment),
  );
}

/** 127.0.0.0/8 and ::1 (net.IP.IsLoopback; IPv4-mapped IPv6 addresses count as IPv4). */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

/** The names the real service treats as this machine (utilities.isLocalhost). */
function isLocalhost(hostname: string): boolean {
  const name = hostname.toLowerCase();
  return (
    ["localhost", "127.0.0.1", "::1", "0.0.0.0", "::"].includes(name) || name.endsWith(".localhost")
  );
}

/** gobwas/glob with '.' and '/' as separators: '*' and '?' stop at them, '**' does not. */
export function globToRegExp(pattern: string): RegExp {
  let source = "";
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i] as string;
    if (ch === "*" && pattern[i + 1] === "*") {
      source += ".*";
      i++;
    } else if (ch === "*") source += "[^./]*";
    else if (ch === "?") source += "[^./]";
    else source += ch.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${source}$`);
}

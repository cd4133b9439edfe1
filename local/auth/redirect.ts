import type { Config } from "../config.ts";

/**
 * The redirect target of a request (utilities.GetReferrer): `redirect_to` (query or body) when it
 * is allowed, else the Referer when allowed, else site_url.
 */
export function redirectTarget(config: Config, request: Request, fromBody?: string): string {
  const url = new URL(request.url);
  const candidate = url.searchParams.get("redirect_to") ?? fromBody ?? "";
  if (candidate && isRedirectAllowed(config, candidate)) return candidate;
  const referer = request.headers.get("referer");
  if (referer && isRedirectAllowed(config, referer)) return referer;
  return config.auth.siteUrl;
}

/** Same host as site_url, or a match of an additional_redirect_urls glob ('*' stops at . and /). */
export function isRedirectAllowed(config: Config, target: string): boolean {
  let parsed: URL;
  let site: URL;
  try {
    parsed = new URL(target);
    site = new URL(config.auth.siteUrl);
  } catch {
    return false;
  }
  if (parsed.hostname === site.hostname) return true;
  const normalized = target.replace(/\/$/, "");
  return config.auth.additionalRedirectUrls.some(
    (pattern) => globToRegExp(pattern).test(normalized) || globToRegExp(pattern).test(target),
  );
}

function globToRegExp(pattern: string): RegExp {
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

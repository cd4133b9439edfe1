import {
  type CookieOptions,
  DEFAULT_COOKIE_OPTIONS,
  parseCookieHeader,
  serializeCookieHeader,
} from "@supabase/ssr";
import { NO_STORE } from "./http.server";

/**
 * Auth cookie options from the product spec: path /, SameSite Lax, readable by the browser
 * client (not httpOnly), 400 days; Secure whenever the site is served over https.
 */
export function authCookieOptions(secure: boolean): CookieOptions {
  return { ...DEFAULT_COOKIE_OPTIONS, path: "/", sameSite: "lax", httpOnly: false, secure };
}

type RequestCookie = { name: string; value: string };

/** Each request's Cookie header, parsed once (see readRequestCookies). */
const parsedCookies = new WeakMap<Request, readonly RequestCookie[]>();

/**
 * The request's cookies in the shape @supabase/ssr's `getAll` returns, parsed once per request:
 * @supabase/ssr asks for them each time auth-js reads the session (the session check, the
 * assurance level, every data request's token), and the middleware asks whether there is one.
 */
export function readRequestCookies(request: Request): RequestCookie[] {
  let cookies = parsedCookies.get(request);
  if (!cookies) {
    const header = request.headers.get("Cookie");
    cookies = header
      ? parseCookieHeader(header).map(({ name, value }) => ({ name, value: value ?? "" }))
      : [];
    parsedCookies.set(request, cookies);
  }
  // a copy: the caller may change its array, never the next caller's
  return [...cookies];
}

/**
 * Whether the request carries a session cookie for this project: the one supabase-js names after
 * the project URL's first host label (`sb-<ref>-auth-token`), whole or in chunks (`….0`, `….1`).
 * Without one there is no session to read, verify or refresh.
 */
export function hasSessionCookie(request: Request, supabaseUrl: string): boolean {
  if (!request.headers.has("Cookie")) return false;
  return sessionCookieNames(request, supabaseUrl).length > 0;
}

/** The names of the request's session cookies (whole or chunks), as hasSessionCookie finds them. */
export function sessionCookieNames(request: Request, supabaseUrl: string): string[] {
  const name = `sb-${new URL(supabaseUrl).hostname.split(".")[0]}-auth-token`;
  return readRequestCookies(request)
    .map((cookie) => cookie.name)
    .filter((cookie) => cookie === name || cookie.startsWith(`${name}.`));
}

/**
 * Collects what @supabase/ssr's `setAll` hands over during a request (cookies plus the cache
 * headers it requires) so the middleware can put them on whatever response the route produces.
 */
export class AuthCookieJar {
  readonly #cookies = new Map<string, string>();
  readonly #headers = new Map<string, string>();

  /** Matches @supabase/ssr's SetAllCookies signature. */
  setAll = (
    cookies: { name: string; value: string; options: CookieOptions }[],
    headers: Record<string, string> = {},
  ): void => {
    for (const { name, value, options } of cookies) {
      this.#cookies.set(name, serializeCookieHeader(name, value, options));
    }
    for (const [key, value] of Object.entries(headers)) this.#headers.set(key, value);
  };

  get hasCookies(): boolean {
    return this.#cookies.size > 0;
  }

  /** Set-Cookie lines collected so far (last write per cookie name wins). */
  get setCookies(): string[] {
    return [...this.#cookies.values()];
  }

  /** Appends the cookies and cache headers; any response carrying auth cookies is private, no-store. */
  applyTo(headers: Headers): void {
    if (!this.hasCookies) return;
    for (const line of this.#cookies.values()) headers.append("Set-Cookie", line);
    for (const [key, value] of this.#headers) headers.set(key, value);
    const cacheControl = headers.get("Cache-Control") ?? "";
    if (!/\bno-store\b/.test(cacheControl) || !/\bprivate\b/.test(cacheControl)) {
      headers.set("Cache-Control", NO_STORE);
    }
  }
}

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

/** Each request's cookies as the server client reads them, decoded once (readStorageCookies). */
const storageCookies = new WeakMap<Request, readonly RequestCookie[]>();

/** What @supabase/ssr writes before a value it encoded: `base64-<base64url of the JSON>`. */
const BASE64_PREFIX = "base64-";
const BASE64URL = /^[A-Za-z0-9_-]*$/;
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The request's cookies for the server client's `getAll`, with the session cookie's value, when
 * whole (not in chunks) and `base64-` encoded, already decoded to the JSON @supabase/ssr would make
 * of it. @supabase/ssr decodes base64url in JavaScript, a code point at a time, each time auth-js
 * reads the session: three times in a signed-in request (the session check, the assurance level,
 * the data request's token), about 70 µs each for a session cookie in workerd. A value without the
 * prefix is the form it reads as it is (its "raw" cookie encoding), so the work is done here once,
 * with atob(), in about 15 µs. What it writes is unchanged. A value this does not decode cleanly
 * (a character outside base64url, bytes that are not UTF-8, text that is not JSON) is passed on as
 * it came, for @supabase/ssr to judge as before.
 */
export function readStorageCookies(request: Request, supabaseUrl: string): RequestCookie[] {
  let cookies = storageCookies.get(request);
  if (!cookies) {
    const session = sessionCookieName(supabaseUrl);
    cookies = withinSessionLimits(readRequestCookies(request), session).map((cookie) => {
      const decoded = cookie.name === session ? decodedValue(cookie.value) : null;
      return decoded === null ? cookie : { name: cookie.name, value: decoded };
    });
    storageCookies.set(request, cookies);
  }
  return [...cookies];
}

/** The most chunks, and characters in all, of a session cookie @supabase/ssr would write here. */
const SESSION_CHUNKS_MAX = 12;
const SESSION_CHARS_MAX = SESSION_CHUNKS_MAX * 3180; // @supabase/ssr's MAX_CHUNK_SIZE

/**
 * The cookies without the session's when it is larger than @supabase/ssr ever writes one (more
 * than SESSION_CHUNKS_MAX chunks, or SESSION_CHARS_MAX characters whole or joined): no session,
 * never read. @supabase/ssr finds each chunk by scanning every cookie, and a Cookie header of
 * thousands of tiny chunks (anyone can send one, on any page) cost the Worker time quadratic in
 * its length: 390 ms of CPU for 120 KB in workerd.
 */
function withinSessionLimits(cookies: RequestCookie[], session: string): RequestCookie[] {
  const isSession = (name: string) => name === session || name.startsWith(`${session}.`);
  let chunks = 0;
  let chars = 0;
  for (const cookie of cookies) {
    if (!isSession(cookie.name)) continue;
    if (cookie.name !== session) chunks++;
    chars += cookie.value.length;
  }
  if (chunks <= SESSION_CHUNKS_MAX && chars <= SESSION_CHARS_MAX) return cookies;
  return cookies.filter((cookie) => !isSession(cookie.name));
}

function decodedValue(value: string): string | null {
  if (!value.startsWith(BASE64_PREFIX)) return null;
  const encoded = value.slice(BASE64_PREFIX.length);
  if (!BASE64URL.test(encoded)) return null;
  try {
    // (a plain loop: Uint8Array.from(binary, mapFn) is ten times slower in workerd)
    const binary = atob(encoded.replaceAll("-", "+").replaceAll("_", "/"));
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    const text = UTF8.decode(bytes);
    JSON.parse(text);
    return text;
  } catch {
    return null;
  }
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
  const name = sessionCookieName(supabaseUrl);
  return readRequestCookies(request)
    .map((cookie) => cookie.name)
    .filter((cookie) => cookie === name || cookie.startsWith(`${name}.`));
}

/** The session cookie supabase-js names after the project URL's first host label. */
function sessionCookieName(supabaseUrl: string): string {
  return `sb-${new URL(supabaseUrl).hostname.split(".")[0]}-auth-token`;
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

/**
 * The one sanitiser for redirect targets that come from a user (`?next=`, a form's `next`, the
 * page a guard sends someone back to, a notes form's `returnTo`). It runs once, where the value
 * enters the app; what it returns is typed `SafePath`, and the code downstream (withNext,
 * redirectToNext, afterSignIn, callbackUrl) only takes that type, so a raw string cannot reach a
 * redirect without passing through here.
 *
 * A safe path is one that a browser, resolving it against our origin, keeps on our origin, and
 * that stays the same when sanitised again. The WHATWG URL parser (the one browsers use) does the
 * normalising; the checks around it cover what it leaves for the browser to misread:
 *  - it must start with one "/" and not "//" or "/\" (protocol-relative: another host), and that
 *    is checked again on the *normalised* path, since `/.//evil`, `/..//evil` and `/./\evil`
 *    normalise to `//evil`;
 *  - no control characters at all: browsers drop tabs and newlines from URLs (`/\t/evil` is
 *    `//evil` to them) and CR/LF would split headers;
 *  - the path decoded (up to three times, for double encoding) and Unicode-folded (NFKC: `／` is
 *    `/`), before and after dot segments are resolved, must not start like an authority either,
 *    for servers and proxies that decode before they redirect.
 */

declare const safePathBrand: unique symbol;

/** A same-origin path (with query and fragment) that came out of `safeRedirectPath`. */
export type SafePath = string & { readonly [safePathBrand]: true };

/** The home page, the default fallback. */
export const HOME = "/" as SafePath;

/** Longer targets are not worth keeping (a URL that long is not one of our pages). */
const MAX_LENGTH = 2048;

/** Resolved against this; anything that ends up on another origin is refused. */
const BASE = "https://same-origin.invalid";

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** `//host` or `/\host` (and `\\`, `\/`): what a browser reads as another origin's authority. */
const AUTHORITY = /^[/\\]{2}/;

/** How many rounds of percent-decoding are checked (single, double and triple encoding). */
const DECODE_ROUNDS = 3;

/**
 * `target` as a safe same-origin path (normalised: `/a/../b` is `/b`), or `fallback` when it is
 * missing, not a string, too long, or would lead anywhere else.
 */
export function safeRedirectPath(target: unknown, fallback: SafePath = HOME): SafePath {
  const once = normalise(target);
  if (once === null) return fallback;
  // What the browser receives is parsed again: only a fixed point is certain to mean the same.
  return normalise(once) === once ? (once as SafePath) : fallback;
}

/**
 * A user-supplied `next`, made safe: the path, or undefined when there is none worth keeping
 * (missing, refused, or just the home page). The edge helper loaders and form schemas use.
 */
export function safeNext(target: unknown): SafePath | undefined {
  const path = safeRedirectPath(target, HOME);
  return path === HOME ? undefined : path;
}

/**
 * One of the app's own paths, written in the code (never a value from a request), as a
 * `SafePath`. Throws when the literal itself is not one, which is a programming error.
 */
export function appPath(path: `/${string}`): SafePath {
  if (normalise(path) !== path) throw new Error(`not a safe app path: ${path}`);
  return path as SafePath;
}

function normalise(target: unknown): string | null {
  if (typeof target !== "string" || target.length > MAX_LENGTH) return null;
  if (!target.startsWith("/") || AUTHORITY.test(target) || CONTROL.test(target)) return null;
  let url: URL;
  try {
    url = new URL(target, BASE);
  } catch {
    return null;
  }
  if (url.origin !== BASE || url.username || url.password) return null;
  if (!pathStaysLocal(url.pathname)) return null;
  return `${url.pathname}${url.search}${url.hash}`;
}

/** The normalised path, and what decoding and Unicode folding could turn it into, stay paths. */
function pathStaysLocal(pathname: string): boolean {
  let current = pathname;
  for (let round = 0; round <= DECODE_ROUNDS; round++) {
    const folded = current.normalize("NFKC");
    if (!folded.startsWith("/") || AUTHORITY.test(folded) || CONTROL.test(folded)) return false;
    // ...and again once dot segments are resolved (`/%2E%2E//evil` decodes to `/..//evil`).
    if (AUTHORITY.test(new URL(folded, BASE).pathname)) return false;
    let decoded: string;
    try {
      decoded = decodeURIComponent(folded);
    } catch {
      return false; // a malformed escape: decoders disagree on what it means
    }
    if (decoded === current) return true;
    current = decoded;
  }
  return false; // still decoding to something new: more layers than any real path has
}

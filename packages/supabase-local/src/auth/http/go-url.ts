/**
 * The parts of Go's net/url.Parse the redirect check depends on, with Go's rules rather than the
 * WHATWG URL parser's: the real service decides on what Go makes of a URL, and the two differ
 * exactly where attacks live (WHATWG drops tabs and newlines, reads `\` as `/`, lowercases hosts;
 * Go refuses control characters, odd userinfo and bad ports, and keeps a host as written).
 *
 * Returns null where url.Parse returns an error.
 */
export interface GoUrl {
  /** Lowercased, without the colon ("" when there is none). */
  scheme: string;
  /** Set when the URL has an authority (`//...`). */
  host: string;
  /** The host without brackets and port, unescaped (url.URL.Hostname). */
  hostname: string;
  /** The port digits, "" without one (url.URL.Port). */
  port: string;
}

export function parseGoUrl(raw: string): GoUrl | null {
  const hashAt = raw.indexOf("#");
  const beforeFragment = hashAt < 0 ? raw : raw.slice(0, hashAt);
  if (hashAt >= 0 && unescape(raw.slice(hashAt + 1), "fragment") === null) return null;
  if (hasControlByte(beforeFragment)) return null;
  if (beforeFragment === "*") return { scheme: "", host: "", hostname: "", port: "" };

  const split = splitScheme(beforeFragment);
  if (!split) return null;
  const scheme = split.scheme.toLowerCase();
  let rest = split.rest;
  if (rest.endsWith("?") && rest.split("?").length === 2) {
    rest = rest.slice(0, -1);
  } else {
    const q = rest.indexOf("?");
    if (q >= 0) rest = rest.slice(0, q);
  }

  if (!rest.startsWith("/")) {
    // An opaque URL (javascript:alert(1), mailto:...) has no host.
    if (scheme !== "") return { scheme, host: "", hostname: "", port: "" };
    const slash = rest.indexOf("/");
    const firstSegment = slash < 0 ? rest : rest.slice(0, slash);
    if (firstSegment.includes(":")) return null;
  }

  let host = "";
  let hostname = "";
  let port = "";
  if ((scheme !== "" || !rest.startsWith("///")) && rest.startsWith("//")) {
    const afterSlashes = rest.slice(2);
    const slash = afterSlashes.indexOf("/");
    const authority = slash < 0 ? afterSlashes : afterSlashes.slice(0, slash);
    rest = slash < 0 ? "" : afterSlashes.slice(slash);
    const parsed = parseAuthority(authority);
    if (!parsed) return null;
    host = parsed;
    ({ hostname, port } = splitHostPort(host));
  }
  if (unescape(rest, "path") === null) return null;
  return { scheme, host, hostname, port };
}

/** stringContainsCTLByte: any byte below 0x20, or 0x7f. */
function hasControlByte(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/** getScheme: letters, then letters, digits, '+', '-', '.'; up to the first ':'. */
function splitScheme(raw: string): { scheme: string; rest: string } | null {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i] as string;
    if (/[A-Za-z]/.test(c)) continue;
    if (/[0-9+\-.]/.test(c)) {
      if (i === 0) return { scheme: "", rest: raw };
      continue;
    }
    if (c === ":") {
      if (i === 0) return null; // missing protocol scheme
      return { scheme: raw.slice(0, i), rest: raw.slice(i + 1) };
    }
    return { scheme: "", rest: raw };
  }
  return { scheme: "", rest: raw };
}

/** parseAuthority: `userinfo@host`; the userinfo must use its allowed characters only. */
function parseAuthority(authority: string): string | null {
  const at = authority.lastIndexOf("@");
  const host = parseHost(at < 0 ? authority : authority.slice(at + 1));
  if (host === null) return null;
  if (at >= 0) {
    const userinfo = authority.slice(0, at);
    if (!/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(userinfo)) return null;
    if (unescape(userinfo, "userinfo") === null) return null;
  }
  return host;
}

/** parseHost: a bracketed IPv6 literal or a name, then an optional all-digit port. */
function parseHost(host: string): string | null {
  if (host.startsWith("[")) {
    const close = host.lastIndexOf("]");
    if (close < 0) return null;
    if (!validOptionalPort(host.slice(close + 1))) return null;
  } else {
    const colon = host.lastIndexOf(":");
    if (colon >= 0 && !validOptionalPort(host.slice(colon))) return null;
  }
  return unescape(host, "host");
}

function validOptionalPort(port: string): boolean {
  return port === "" || /^:[0-9]*$/.test(port);
}

function splitHostPort(host: string): { hostname: string; port: string } {
  let hostname = host;
  let port = "";
  const colon = host.lastIndexOf(":");
  if (colon >= 0 && validOptionalPort(host.slice(colon))) {
    hostname = host.slice(0, colon);
    port = host.slice(colon + 1);
  }
  if (hostname.startsWith("[") && hostname.endsWith("]")) hostname = hostname.slice(1, -1);
  return { hostname, port };
}

/** Characters a host may hold unescaped (shouldEscape in encodeHost mode says no). */
const HOST_CHARS = /^[A-Za-z0-9\-._~!$&'()*+,;=:[\]<>"]$/;

/**
 * unescape: every '%' starts two hex digits; in a host, escapes of ASCII other than %25 and
 * characters Go would have escaped are errors. Returns the unescaped text, or null.
 */
function unescape(s: string, mode: "path" | "host" | "userinfo" | "fragment"): string | null {
  const chars = Array.from(s);
  const bytes: number[] = [];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] as string;
    if (c === "%") {
      const hex = (chars[i + 1] ?? "") + (chars[i + 2] ?? "");
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return null;
      const value = Number.parseInt(hex, 16);
      if (mode === "host" && value < 0x80 && hex !== "25") return null;
      bytes.push(value);
      i += 2;
      continue;
    }
    if (mode === "host" && c.charCodeAt(0) < 0x80 && !HOST_CHARS.test(c)) return null;
    bytes.push(...Buffer.from(c));
  }
  return Buffer.from(bytes).toString("utf8");
}

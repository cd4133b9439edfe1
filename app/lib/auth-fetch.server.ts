import type { SupabaseEnv } from "./env.server";

/**
 * The fetch under every Auth client the Worker builds. Auth limits its costly endpoints per client
 * address (token buckets of 30 in supabase/auth's internal/api/apilimiter), and every call the
 * Worker makes comes from the Worker's address: one bucket for all visitors. So the rate-limited
 * calls carry the visitor's address in `Sb-Forwarded-For`, which Supabase Auth honours only when
 * the project's "IP Address Forwarding" switch is on and the hosted gateway only with a secret
 * key, never from a browser's User-Agent. Those calls alone swap in the secret key; every other
 * request (data API, Storage, Realtime, the rest of Auth) leaves as it came, with the publishable
 * key and the user's token (docs/decisions/022-rate-limits-count-people.md).
 */
export function createAuthFetch(
  base: typeof fetch,
  env: SupabaseEnv,
  request: Request,
): typeof fetch {
  const { secretKey } = env;
  if (!secretKey) {
    warnOnce();
    return base;
  }
  const address = forwardedFor(request);
  return (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const method = (
      init?.method ?? (input instanceof Request ? input.method : "GET")
    ).toUpperCase();
    if (!isRateLimited(method, url, env.url)) return base(input, init);
    const headers = new Headers(input instanceof Request ? input.headers : undefined);
    new Headers(init?.headers).forEach((value, name) => headers.set(name, value));
    headers.set("apikey", secretKey);
    // The key as bearer (auth-js sends it when there is no session) becomes the secret key too; a
    // user's JWT (PUT /user, MFA) stays: the call is still made as that user.
    const bearer = headers.get("Authorization");
    if (bearer && isKeyAsBearer(bearer, env.publishableKey)) {
      headers.set("Authorization", `Bearer ${secretKey}`);
    }
    // The gateway refuses a secret key with a browser's User-Agent; none is sent, not even ours.
    headers.delete("User-Agent");
    // Only Cloudflare's own CF-Connecting-IP names the visitor: anything else is theirs to write.
    for (const name of ["Sb-Forwarded-For", "X-Forwarded-For", "X-Real-IP", "Forwarded"]) {
      headers.delete(name);
    }
    if (address) headers.set("Sb-Forwarded-For", address);
    return base(input, { ...init, method, headers });
  };
}

/**
 * The rate-limited Auth endpoints the Worker calls (paths relative to /auth/v1), as apilimiter
 * limits them upstream: /token (every grant), the sign-up and email family, /verify, PUT /user,
 * MFA challenge and verify, passkey sign-in options; and the local backend's recovery-code
 * verification, which uses the MFA verify limiter.
 */
const RATE_LIMITED: [method: string, path: RegExp][] = [
  ["POST", /^\/token$/],
  ["POST", /^\/(?:signup|otp|magiclink|recover|resend)$/],
  ["*", /^\/verify$/],
  ["PUT", /^\/user$/],
  ["POST", /^\/factors\/[^/]+\/(?:challenge|verify)$/],
  ["POST", /^\/factors\/recovery-codes\/verify$/],
  ["POST", /^\/passkeys\/authentication\/options$/],
];

/** Whether `method url` is one of those calls to the project at `projectUrl`. */
export function isRateLimited(method: string, url: string, projectUrl: string): boolean {
  const target = new URL(url);
  const project = new URL(projectUrl);
  const prefix = `${project.pathname.replace(/\/+$/, "")}/auth/v1`;
  if (target.origin !== project.origin || !target.pathname.startsWith(`${prefix}/`)) return false;
  const path = target.pathname.slice(prefix.length);
  return RATE_LIMITED.some(([m, pattern]) => (m === "*" || m === method) && pattern.test(path));
}

function isKeyAsBearer(authorization: string, publishableKey: string): boolean {
  const token = authorization.replace(/^Bearer\s+/i, "");
  return token === publishableKey || token.startsWith("sb_publishable_");
}

/**
 * The visitor's address as Sb-Forwarded-For carries it: Cloudflare's CF-Connecting-IP (there is
 * no other trustworthy source; X-Forwarded-For is whatever the client wrote), or nothing when it
 * is absent or not an IP address. An IPv6 address becomes its /64: upstream counts each address,
 * and one IPv6 subscriber is handed a whole /64 to pick addresses from (decision 022).
 */
export function forwardedFor(request: Request): string | undefined {
  const raw = request.headers.get("CF-Connecting-IP")?.trim();
  if (!raw) return undefined;
  return raw.includes(":") ? ipv6Network(raw) : ipv4(raw);
}

/** The URL parser validates and canonicalises addresses (WHATWG host parsing). */
function hostOf(candidate: string): string | undefined {
  try {
    return new URL(`http://${candidate}/`).hostname;
  } catch {
    return undefined;
  }
}

function ipv4(raw: string): string | undefined {
  if (!/^\d{1,3}(?:\.\d{1,3}){3}$/.test(raw)) return undefined;
  return hostOf(raw) === raw ? raw : undefined;
}

function ipv6Network(raw: string): string | undefined {
  const host = hostOf(`[${raw}]`);
  if (!host?.startsWith("[")) return undefined;
  // The canonical form: lowercase hex groups, at most one "::", no embedded IPv4.
  const [head = "", tail] = host.slice(1, -1).split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = [...left, ...Array(8 - left.length - right.length).fill("0"), ...right].map(
    (group) => Number.parseInt(group, 16),
  );
  if (groups.length !== 8 || groups.some(Number.isNaN)) return undefined;
  // The loopback address (a local dev server's visitor) is one machine, not a subscriber's /64.
  if (groups.every((group, i) => group === (i === 7 ? 1 : 0))) return "::1";
  // An IPv4-mapped address (::ffff:a.b.c.d) is that IPv4 address.
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    const [high = 0, low = 0] = groups.slice(6);
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join(".");
  }
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(":")}::`;
}

let warned = false;

function warnOnce() {
  if (warned) return;
  warned = true;
  console.warn(
    "SUPABASE_SECRET_KEY is not set: Auth's rate limits count this Worker's address, shared by " +
      "every visitor, instead of each visitor's (wrangler secret put SUPABASE_SECRET_KEY).",
  );
}

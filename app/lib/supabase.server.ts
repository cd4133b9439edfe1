import { createServerClient } from "@supabase/ssr";
import type { SupabaseClient } from "@supabase/supabase-js";
import { AuthCookieJar, authCookieOptions, readStorageCookies } from "./auth-cookies.server";
import { createAuthFetch } from "./auth-fetch.server";
import { type BackendFetch, createBackendFetch } from "./backend-fetch.server";
import type { Database } from "./database.types";
import type { SupabaseEnv } from "./env.server";

export interface ServerSupabase {
  /** The request's client: reads the session from the Cookie header, writes into `cookies`. */
  supabase: SupabaseClient<Database>;
  /** Cookies and cache headers the client asked to set; the middleware applies them. */
  cookies: AuthCookieJar;
  /** Round trips this client made to the backend (for Server-Timing and tests). */
  backend: BackendFetch;
}

export interface ServerSupabaseOptions {
  /** The fetch under the timeout and Auth wrappers (tests pass a counting or failing one). */
  fetch?: typeof fetch;
  timeoutMs?: number;
}

/**
 * One @supabase/ssr server client per request. Never share it across requests: the cookie jar
 * and the cache headers @supabase/ssr hands over (only on its first write) belong to one response.
 *
 * The JWKS that getClaims() verifies tokens with is cached by auth-js at module level, keyed by
 * the client's storage key (derived from the project URL), so per-request clients in one isolate
 * share it: a warm signed-in request verifies locally with no round trip.
 */
export function createSupabaseServerClient(
  request: Request,
  env: SupabaseEnv,
  options: ServerSupabaseOptions = {},
): ServerSupabase {
  const cookies = new AuthCookieJar();
  // Under the timeout, the rate-limited Auth calls swap in the secret key and the visitor's address
  // (auth-fetch.server.ts); the client itself is built with the publishable key, so data, Storage
  // and Realtime calls never carry the secret key.
  const backend = createBackendFetch({
    timeoutMs: options.timeoutMs ?? env.timeoutMs,
    fetch: createAuthFetch(options.fetch ?? globalThis.fetch, env, request),
  });
  const secure = new URL(request.url).protocol === "https:";
  const supabase = createServerClient<Database>(env.url, env.publishableKey, {
    cookieOptions: authCookieOptions(secure),
    cookies: {
      getAll: () => readStorageCookies(request, env.url),
      setAll: cookies.setAll,
    },
    // The browser's User-Agent travels on the calls that are not rate-limited (the rate-limited
    // ones carry the secret key, which the gateway refuses from a browser's User-Agent).
    global: { fetch: backend.fetch, headers: browserAgent(request) },
    // Each PKCE flow (sign-up, magic link, recovery, OAuth) keeps its own verifier cookie and its
    // redirect carries `sb_flow_id`, so /auth/callback exchanges with that flow's verifier: a
    // resend or a second request in the same browser no longer breaks the earlier link.
    // Recovery codes (mfa.recoveryCodes) are still marked experimental in auth-js.
    auth: { experimental: { appendPkceFlowIdToRedirects: true, recoveryCodes: true } },
    // Fail fast: a page must say "backend unreachable" within a second or two, not retry.
    db: { retry: false },
  });
  return { supabase, cookies, backend };
}

function browserAgent(request: Request): Record<string, string> {
  const agent = request.headers.get("User-Agent");
  return agent ? { "User-Agent": agent.slice(0, 512) } : {};
}

import { createServerClient } from "@supabase/ssr";
import type { SupabaseClient } from "@supabase/supabase-js";
import { AuthCookieJar, authCookieOptions, readRequestCookies } from "./auth-cookies.server";
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
  /** The fetch under the timeout wrapper (tests pass a counting or failing one). */
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
  const backend = createBackendFetch(options);
  const secure = new URL(request.url).protocol === "https:";
  const supabase = createServerClient<Database>(env.url, env.publishableKey, {
    cookieOptions: authCookieOptions(secure),
    cookies: {
      getAll: () => readRequestCookies(request),
      setAll: cookies.setAll,
    },
    // The browser's User-Agent travels on, so the session the auth server records names the
    // device (auth.sessions.user_agent, shown on /account/sessions), not the Worker.
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

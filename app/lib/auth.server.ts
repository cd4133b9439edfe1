import {
  isAuthRetryableFetchError,
  type JwtPayload,
  type SupabaseClient,
} from "@supabase/supabase-js";
import { createContext, type MiddlewareFunction, type RouterContextProvider } from "react-router";
import { authCookieOptions, hasSessionCookie, sessionCookieNames } from "./auth-cookies.server";
import { BACKEND_TIMEOUT_MS, type BackendFetch } from "./backend-fetch.server";
import type { Database } from "./database.types";
import { NO_STORE, redirectNoStore } from "./http.server";
import { pagePath } from "./next-path";
import { recordSessionDevice } from "./session-devices.server";
import { signInAgainLocation, watchForEndedSession } from "./session-ended.server";
import {
  createSupabaseServerClient,
  type ServerSupabase,
  type ServerSupabaseOptions,
} from "./supabase.server";
import { getSupabaseEnv } from "./worker-context.server";

/** The verified access-token claims (sub, email, role, aal, session_id, exp, …). */
export type Claims = JwtPayload;

/** What loaders and actions get from `getAuth(context)`. */
export interface Auth {
  /** This request's Supabase client; queries run as the signed-in user (RLS applies). */
  supabase: SupabaseClient<Database>;
  /** Verified claims, or null when signed out (no, expired-and-unrefreshable, or broken session). */
  claims: Claims | null;
  /** True when a session cookie was present but the backend could not be reached to check it. */
  backendUnreachable: boolean;
  /**
   * The assurance level this session should reach: "aal2" once the user has a verified second
   * factor (read from the session's user without a round trip), else the level it has.
   */
  nextLevel?: "aal1" | "aal2" | null;
  /**
   * The fetch under this request's client (its timeout, and its count of round trips in
   * Server-Timing), for the backend calls the client does not make itself: the Worker's Storage
   * calls that a page waits for (app/lib/storage.server.ts).
   */
  backendFetch?: typeof fetch;
}

export const authContext = createContext<Auth>();

/** Test seam: lets unit tests hand the middleware a fetch that counts or fails. */
export const authOptionsContext = createContext<ServerSupabaseOptions>({});

/**
 * Root middleware: `getClaims()` exactly once, before any loader runs, and one server client per
 * request, made when first needed: a request without a session cookie (most signed-out pages) has
 * nothing to verify, and making the client was a tenth of such a page's CPU in the Worker. Cookies
 * (and the no-store headers @supabase/ssr requires) written during the request, by the refresh
 * here or by an action signing in or out, go onto the final response.
 *
 * A session that ended elsewhere still verifies here until its token expires; the database refuses
 * it at the first data request (session-ended.server.ts). Whatever the loader or action made of
 * that, the answer is then a redirect to sign in, with the session's cookies cleared.
 */
export const authMiddleware: MiddlewareFunction<Response> = async ({ request, context }, next) => {
  const started = performance.now();
  const env = getSupabaseEnv(context);
  let server: ServerSupabase | undefined;
  let watch: ReturnType<typeof watchForEndedSession> | undefined;
  const client = () => {
    if (!server) {
      const options = context.get(authOptionsContext);
      watch = watchForEndedSession(options.fetch ?? globalThis.fetch);
      server = createSupabaseServerClient(request, env, { ...options, fetch: watch.fetch });
    }
    return server.supabase;
  };
  const verified = hasSessionCookie(request, env.url)
    ? await verifyClaims(client(), env.timeoutMs ?? BACKEND_TIMEOUT_MS)
    : { claims: null, backendUnreachable: false };
  const nextLevel = verified.claims ? await assuranceTarget(client()) : null;
  const authMs = performance.now() - started;
  // Round trips the session check made (none when the token is fresh and the JWKS cached).
  const checkCalls = server?.backend.calls.length ?? 0;
  context.set(authContext, {
    get supabase() {
      return client();
    },
    get backendFetch() {
      client();
      return server?.backend.fetch;
    },
    ...verified,
    nextLevel,
  });

  let response = await next();
  // A response that signed a session in (or raised it to aal2) states the session's device.
  if (server?.cookies.hasCookies) {
    await recordSessionDevice(server.supabase, request, verified.claims);
  }
  if (server && watch?.ended) {
    // The session's cookies go here, with no round trip: signOut() would ask Auth first, and a
    // failure there would leave them, sending the visitor between /sign-in and the page for good.
    const secure = new URL(request.url).protocol === "https:";
    server.cookies.setAll(
      sessionCookieNames(request, env.url).map((name) => ({
        name,
        value: "",
        options: { ...authCookieOptions(secure), maxAge: 0 },
      })),
    );
    const method = request.method;
    response = redirectNoStore(
      signInAgainLocation(pagePath(request)),
      method === "GET" || method === "HEAD" ? 302 : 303,
    );
  }
  const headers = mutableHeaders(response);
  server?.cookies.applyTo(headers.headers);
  if (verified.claims && !headers.headers.has("Cache-Control")) {
    headers.headers.set("Cache-Control", NO_STORE);
  }
  headers.headers.append("Server-Timing", serverTiming(authMs, checkCalls, server?.backend));
  return headers.response;
};

/** The request's Supabase client and claims. Call from any loader or action. */
export function getAuth(context: Readonly<RouterContextProvider>): Auth {
  return context.get(authContext);
}

/**
 * getClaims() may refresh the session, and auth-js retries that for up to 30 s: the wait is capped
 * at one backend call's (`deadlineMs`: SUPABASE_TIMEOUT_MS, BACKEND_TIMEOUT_MS when unset).
 */
async function verifyClaims(
  supabase: SupabaseClient<Database>,
  deadlineMs: number,
): Promise<{ claims: Claims | null; backendUnreachable: boolean }> {
  try {
    const result = await withDeadline(supabase.auth.getClaims(), deadlineMs);
    if (result === "timeout") return { claims: null, backendUnreachable: true };
    const { data, error } = result;
    if (error) return { claims: null, backendUnreachable: isAuthRetryableFetchError(error) };
    return { claims: data?.claims ?? null, backendUnreachable: false };
  } catch {
    // A cookie auth-js cannot even parse is a broken session: signed out, never a 500.
    return { claims: null, backendUnreachable: false };
  }
}

/**
 * getAuthenticatorAssuranceLevel() reads the stored session (already verified or refreshed by
 * getClaims) and its user's factors: no round trip. The user object comes from the cookie, so it
 * is a routing hint only; the auth server and the aal2 RLS policies enforce the rule for real.
 */
async function assuranceTarget(supabase: SupabaseClient): Promise<"aal1" | "aal2" | null> {
  // auth-js warns on the server whenever the stored user is read, unless getUser() ran. Here the
  // read is deliberate (a hint, see above), so the once-per-request warning is switched off.
  (supabase.auth as unknown as { suppressGetSessionWarning: boolean }).suppressGetSessionWarning =
    true;
  try {
    const { data } = await supabase.auth.mfa.getAuthenticatorAssuranceLevel();
    const level: string | null | undefined = data?.nextLevel;
    return level === "aal1" || level === "aal2" ? level : null;
  } catch {
    return null;
  }
}

async function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T | "timeout"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `auth;dur=<session check ms>, supabase;desc="auth=A rest=R storage=T check=C seq=S"`: the Auth,
 * data API and Storage requests this request made, how many of them the session check made, and the longest chain
 * of them one after another (backend-fetch.server.ts), what a visitor far from the backend waits
 * for. `npm run bench` holds every signed-in page to its budget of these.
 */
function serverTiming(authMs: number, checkCalls: number, backend?: BackendFetch): string {
  const calls = backend?.calls ?? [];
  const auth = calls.filter((path) => path.includes("/auth/v1/")).length;
  const rest = calls.filter((path) => path.includes("/rest/v1/")).length;
  const storage = calls.filter((path) => path.includes("/storage/v1/")).length;
  const trips = `auth=${auth} rest=${rest} storage=${storage} check=${checkCalls} seq=${backend?.sequential ?? 0}`;
  return `auth;dur=${authMs.toFixed(1)}, supabase;desc="${trips}"`;
}

/** Responses from redirect helpers can have immutable headers; copy them when needed. */
function mutableHeaders(response: Response): { response: Response; headers: Headers } {
  try {
    response.headers.append("Vary", "Cookie");
    return { response, headers: response.headers };
  } catch {
    const copy = new Response(response.body, response);
    copy.headers.append("Vary", "Cookie");
    return { response: copy, headers: copy.headers };
  }
}

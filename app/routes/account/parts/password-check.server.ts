import { type AuthError, createClient } from "@supabase/supabase-js";
import type { RouterContextProvider } from "react-router";
import { createAuthFetch } from "../../../lib/auth-fetch.server";
import { createBackendFetch } from "../../../lib/backend-fetch.server";
import { getSupabaseEnv } from "../../../lib/worker-context.server";

/**
 * Checks a signed-in user's current password the only way the auth API offers: a password grant
 * on a throwaway client (no cookies, nothing stored), whose session is signed out again at once.
 * The request's own session is untouched. Returns null when the password is right. The grant is
 * rate-limited, so it goes through the Auth fetch with the visitor's address, as the request's own
 * client's calls do.
 */
export async function checkCurrentPassword(
  context: Readonly<RouterContextProvider>,
  request: Request,
  email: string,
  password: string,
): Promise<AuthError | null> {
  const env = getSupabaseEnv(context);
  const probe = createClient(env.url, env.publishableKey, {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
    global: {
      fetch: createBackendFetch({
        timeoutMs: env.timeoutMs,
        fetch: createAuthFetch(fetch, env, request),
      }).fetch,
    },
  });
  const { data, error } = await probe.auth.signInWithPassword({ email, password });
  if (error) return error;
  if (data.session) await probe.auth.signOut({ scope: "local" });
  return null;
}

import { createBrowserClient } from "@supabase/ssr";
import type { SupabaseClient } from "@supabase/supabase-js";
import type { PublicEnv } from "./public-env";

let client: SupabaseClient | undefined;

/**
 * The browser's Supabase client, created once and only when first asked for (never during the
 * first paint). PKCE flow, session in the same cookies the server reads (document.cookie),
 * tokens refreshed automatically before they expire. Code exchange for PKCE links happens on the
 * server (routes), so the client does not consume ?code= from the URL itself.
 */
export function getBrowserSupabase(env: PublicEnv): SupabaseClient {
  client ??= createBrowserClient(env.SUPABASE_URL, env.SUPABASE_PUBLISHABLE_KEY, {
    cookieOptions: {
      path: "/",
      sameSite: "lax",
      secure: window.location.protocol === "https:",
    },
    auth: {
      flowType: "pkce",
      autoRefreshToken: true,
      persistSession: true,
      detectSessionInUrl: false,
    },
  });
  return client;
}

// Bench-only (bench/get-user/vite.config.ts puts it under the app's middleware; never in the
// app's build): the app's server client, whose getClaims() asks the auth server every time, the
// way the Supabase UI library's React Router blocks check the session (`getUser()` in every
// loader). Everything else about the request (cookies, refresh, Server-Timing) is the app's.
import type { JwtHeader, JwtPayload } from "@supabase/supabase-js";
import {
  createSupabaseServerClient as createAppClient,
  type ServerSupabase,
} from "../../app/lib/supabase.server";
import { BENCH_ONLY_MARKER } from "./marker";

export type { ServerSupabase, ServerSupabaseOptions } from "../../app/lib/supabase.server";

export function createSupabaseServerClient(
  ...args: Parameters<typeof createAppClient>
): ServerSupabase {
  const server = createAppClient(...args);
  const auth = server.supabase.auth;
  const getClaims: typeof auth.getClaims = async () => {
    // Loads the session from the cookies (refreshing it first when expired), then GET /user.
    const { data, error } = await auth.getUser();
    if (error) return { data: null, error };
    if (!data.user) return { data: null, error: null };
    // The access token the server just accepted: its claims can be trusted without a signature
    // check (auth-js's own getClaims() does the same when it has no key to verify with).
    const { data: current } = await auth.getSession();
    const token = current.session?.access_token ?? "..";
    return {
      data: {
        claims: decodePart<JwtPayload>(token, 1),
        header: decodePart<JwtHeader>(token, 0),
        signature: new Uint8Array(),
      },
      error: null,
    };
  };
  Object.defineProperty(auth, "getClaims", { value: getClaims });
  Object.defineProperty(auth, "benchOnly", { value: BENCH_ONLY_MARKER });
  return server;
}

function decodePart<T>(token: string, index: number): T {
  const base64 = (token.split(".")[index] ?? "").replace(/-/g, "+").replace(/_/g, "/");
  const bytes = Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
  return JSON.parse(new TextDecoder().decode(bytes)) as T;
}

import { useEffect } from "react";
import { useRevalidator } from "react-router";
import type { PublicEnv } from "./public-env";

/**
 * Starts the browser Supabase client after the page is idle, so it can refresh tokens in the
 * background, and re-runs loaders when the session changes elsewhere (another tab signed in or
 * out) so the page never shows a stale user. The server stays the source of truth.
 */
export function useBrowserSession(env: PublicEnv | undefined, serverUserId: string | null) {
  const { revalidate } = useRevalidator();
  const url = env?.SUPABASE_URL;
  const key = env?.SUPABASE_PUBLISHABLE_KEY;
  useEffect(() => {
    if (!url || !key) return;
    let unsubscribe: (() => void) | undefined;
    let cancelled = false;
    const start = async () => {
      const { getBrowserSupabase } = await import("./supabase.client");
      if (cancelled) return;
      const { data } = getBrowserSupabase({
        SUPABASE_URL: url,
        SUPABASE_PUBLISHABLE_KEY: key,
      }).auth.onAuthStateChange((event, session) => {
        if (event === "TOKEN_REFRESHED") return;
        const browserUserId = session?.user.id ?? null;
        if (browserUserId !== serverUserId) void revalidate();
      });
      unsubscribe = () => data.subscription.unsubscribe();
    };
    const idle = window.requestIdleCallback ?? ((cb: () => void) => window.setTimeout(cb, 1));
    const cancelIdle = window.cancelIdleCallback ?? window.clearTimeout;
    const handle = idle(() => void start());
    return () => {
      cancelled = true;
      cancelIdle(handle);
      unsubscribe?.();
    };
  }, [url, key, serverUserId, revalidate]);
}

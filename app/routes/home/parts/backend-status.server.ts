import type { SupabaseEnv } from "../../../lib/env.server";

export type BackendStatus = "reachable" | "unreachable";

/** How long a probe result is trusted within one isolate. Failures are re-checked sooner. */
const TRUST_MS = { reachable: 30_000, unreachable: 3_000 } as const;
export const PROBE_TIMEOUT_MS = 1000;

const cache = new Map<string, { status: BackendStatus; at: number }>();

/**
 * Is the Supabase backend answering? Asks GET /auth/v1/health (any HTTP answer counts) with a
 * 1 s timeout (SUPABASE_TIMEOUT_MS when set), and remembers the answer per isolate so most pages
 * make no extra round trip.
 */
export async function getBackendStatus(
  env: SupabaseEnv,
  fetcher: typeof fetch = fetch,
): Promise<BackendStatus> {
  const cached = cache.get(env.url);
  const now = Date.now();
  if (cached && now - cached.at < TRUST_MS[cached.status]) return cached.status;
  const status = await probe(env, fetcher);
  cache.set(env.url, { status, at: Date.now() });
  return status;
}

async function probe(env: SupabaseEnv, fetcher: typeof fetch): Promise<BackendStatus> {
  try {
    const response = await fetcher(`${env.url}/auth/v1/health`, {
      headers: { apikey: env.publishableKey },
      signal: AbortSignal.timeout(env.timeoutMs ?? PROBE_TIMEOUT_MS),
    });
    await response.body?.cancel();
    return "reachable";
  } catch {
    return "unreachable";
  }
}

/** Tests only: forget cached probe results. */
export function resetBackendStatusCache(): void {
  cache.clear();
}

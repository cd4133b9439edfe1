/**
 * The fetch every server-side Supabase client uses: a hard timeout per request (postgrest-js and
 * auth-js would otherwise wait or retry for many seconds when the backend is down) and a count of
 * round trips, reported in the Server-Timing header so tests and operators can see them.
 */
export const BACKEND_TIMEOUT_MS = 1500;

export interface BackendFetch {
  fetch: typeof fetch;
  /** Requests started through this fetch, by URL path (e.g. "/auth/v1/token"). */
  readonly calls: string[];
}

export function createBackendFetch(
  options: { timeoutMs?: number; fetch?: typeof fetch } = {},
): BackendFetch {
  const timeoutMs = options.timeoutMs ?? BACKEND_TIMEOUT_MS;
  const base = options.fetch ?? globalThis.fetch;
  const calls: string[] = [];
  const timedFetch: typeof fetch = (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    calls.push(new URL(url).pathname);
    const timeout = AbortSignal.timeout(timeoutMs);
    const callerSignal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
    const signal = callerSignal ? AbortSignal.any([callerSignal, timeout]) : timeout;
    return base(input, { ...init, signal });
  };
  return { fetch: timedFetch, calls };
}

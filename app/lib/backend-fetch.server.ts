/**
 * The fetch every server-side Supabase client uses: a hard timeout per request (postgrest-js and
 * auth-js would otherwise wait or retry for many seconds when the backend is down), a count of
 * round trips and the length of their longest chain, reported in the Server-Timing header so
 * tests, the bench and operators can see them.
 */
export const BACKEND_TIMEOUT_MS = 1500;

export interface BackendFetch {
  fetch: typeof fetch;
  /** Requests started through this fetch, by URL path (e.g. "/auth/v1/token"). */
  readonly calls: string[];
  /**
   * Sequential round trips so far: the longest chain of requests each started after the one
   * before it had answered. Requests in flight together add one trip, not one each; from the
   * edge, each trip of the chain is a round trip to the Supabase region the visitor waits for.
   */
  readonly sequential: number;
}

export function createBackendFetch(
  options: { timeoutMs?: number; fetch?: typeof fetch } = {},
): BackendFetch {
  const timeoutMs = options.timeoutMs ?? BACKEND_TIMEOUT_MS;
  const base = options.fetch ?? globalThis.fetch;
  const calls: string[] = [];
  // A request's place in the chain is one past the deepest request that had answered when it
  // started (a request cannot depend on an answer it has not seen).
  let answeredDepth = 0;
  let deepest = 0;
  const timedFetch: typeof fetch = (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    calls.push(new URL(url).pathname);
    const depth = answeredDepth + 1;
    deepest = Math.max(deepest, depth);
    const timeout = AbortSignal.timeout(timeoutMs);
    const callerSignal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
    const signal = callerSignal ? AbortSignal.any([callerSignal, timeout]) : timeout;
    const answered = () => {
      answeredDepth = Math.max(answeredDepth, depth);
    };
    const response = base(input, { ...init, signal });
    response.then(answered, answered);
    return response;
  };
  return {
    fetch: timedFetch,
    calls,
    get sequential() {
      return deepest;
    },
  };
}

/**
 * The fetch every server-side Supabase client uses: a hard timeout per request (postgrest-js and
 * auth-js would otherwise wait or retry for many seconds when the backend is down), a count of
 * round trips and the length of their longest chain, reported in the Server-Timing header so
 * tests, the bench and operators can see them; and one more try for a read whose connection
 * failed before any answer (retriedOnce).
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
    const path = new URL(url).pathname;
    calls.push(path);
    const depth = answeredDepth + 1;
    deepest = Math.max(deepest, depth);
    const timeout = AbortSignal.timeout(timeoutMs);
    const callerSignal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
    const signal = callerSignal ? AbortSignal.any([callerSignal, timeout]) : timeout;
    const answered = () => {
      answeredDepth = Math.max(answeredDepth, depth);
    };
    const send = () => base(input, { ...init, signal });
    const response = isRead(input, init)
      ? retriedOnce(send, signal, () => calls.push(path))
      : send();
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

/** GET and HEAD: safe to send again (every write is sent once, whatever happens to it). */
function isRead(input: RequestInfo | URL, init: RequestInit | undefined): boolean {
  const method = (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
  return method === "GET" || method === "HEAD";
}

/**
 * A read whose fetch failed without an answer, and not for its deadline or its caller's abort, is
 * sent once more at once, under the same deadline. The Worker keeps connections to the backend
 * open between requests, and one the backend closes as it sits idle can fail the next request
 * sent on it before a byte comes back ("Network connection lost" in workerd); the second try goes
 * out on a fresh connection. A backend that is down refuses the second try at once too.
 */
async function retriedOnce(
  send: () => Promise<Response>,
  signal: AbortSignal,
  counted: () => void,
): Promise<Response> {
  try {
    return await send();
  } catch (error) {
    if (signal.aborted) throw error;
    counted();
    return send();
  }
}

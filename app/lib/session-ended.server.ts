import type { SafePath } from "./safe-redirect";

/**
 * A session ended elsewhere (this device signed out, another device signed out the others or
 * everyone, a password change) still has an unexpired access token, which pages verify locally
 * (getClaims, no round trip). The database is where it shows: the data API's pre-request function
 * refuses every request of a session that no longer exists with this one fixed error
 * (supabase/migrations/20261127000400_ended_sessions_signed_out_at_once.sql), where the restrictive
 * policies alone would answer a read with an empty list.
 */
export const SESSION_ENDED = {
  status: 401,
  code: "PT401",
  message: "Session from session_id claim in JWT does not exist",
} as const;

/** Where a visitor whose session ended goes: sign in, with the message, then back to `next`. */
export function signInAgainLocation(next: SafePath | undefined): string {
  const params = new URLSearchParams(next ? { next, ended: "1" } : { ended: "1" });
  return `/sign-in?${params}`;
}

/**
 * Wraps the fetch a request's Supabase client uses and notes whether any data API answer was the
 * ended-session refusal, whatever the loader or action then made of the error: the root
 * middleware asks afterwards, and answers the request with the sign-in redirect instead.
 */
export function watchForEndedSession(base: typeof fetch): {
  fetch: typeof fetch;
  readonly ended: boolean;
} {
  let ended = false;
  const watched: typeof fetch = async (input, init) => {
    const response = await base(input, init);
    if (response.status === SESSION_ENDED.status && !ended) {
      const url = input instanceof Request ? input.url : String(input);
      if (new URL(url).pathname.includes("/rest/v1/")) ended = await isEndedSession(response);
    }
    return response;
  };
  return {
    fetch: watched,
    get ended() {
      return ended;
    },
  };
}

async function isEndedSession(response: Response): Promise<boolean> {
  try {
    const body = (await response.clone().json()) as { code?: unknown; message?: unknown };
    return body.code === SESSION_ENDED.code && body.message === SESSION_ENDED.message;
  } catch {
    return false;
  }
}

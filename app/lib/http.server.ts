import type { PostgrestError } from "@supabase/supabase-js";
import { data, redirect } from "react-router";
import { MFA_PATH } from "./next-path";
import { SESSION_ENDED } from "./session-ended.server";

/**
 * The one home for the HTTP answers routes give besides their pages: never-cached answers,
 * redirects, 404 and 503.
 *
 * `Cache-Control: private, no-store` goes on every response that sets or clears auth cookies, on
 * every page that names the signed-in person, and on every answer to a form post: no shared
 * cache may keep them, and no browser may show them again from its cache.
 */
export const NO_STORE = "private, no-store";

/** Headers that say "never cached"; also a route's `headers` export as it is. */
export function noStoreHeaders(): { "Cache-Control": string } {
  return { "Cache-Control": NO_STORE };
}

/** `init` (status, statusText, headers) plus `Cache-Control: private, no-store`. */
export function noStore(
  init: Omit<ResponseInit, "headers"> & { headers?: Record<string, string> } = {},
): ResponseInit & { headers: Record<string, string> } {
  return { ...init, headers: { ...init.headers, ...noStoreHeaders() } };
}

/** Loader or action data that is never cached. */
export function dataNoStore<T>(value: T, init?: Omit<ResponseInit, "headers">) {
  return data(value, noStore(init));
}

/** A JSON answer for the browser's own scripts (the passkey ceremonies), never cached. */
export function jsonNoStore(value: unknown, status = 200): Response {
  return Response.json(value, noStore({ status }));
}

/**
 * A redirect that is never cached (the middleware adds the auth cookies it carries). 303 after a
 * form post unless told otherwise; the notes pages and the guards answer 302, as they always have.
 */
export function redirectNoStore(location: string, status = 303): Response {
  return redirect(location, noStore({ status }));
}

/** The 404 page (the root error boundary draws it); thrown, so nothing after it runs. */
export function notFound(): never {
  throw data(null, { status: 404, statusText: "Not Found" });
}

/** What a request refused for want of the second factor carries to the error page. */
export interface AalRequired {
  code: "insufficient_aal";
  message: string;
  next: string;
}

/**
 * The 403 page of a session that still owes its second factor (the root error boundary draws it,
 * with a link to `next`, the challenge); thrown, so nothing after it runs.
 */
export function aalRequired(next: string): never {
  throw data<AalRequired>(
    {
      code: "insufficient_aal",
      message:
        "This needs your second factor. Enter the code from your authenticator app, then try again.",
      next,
    },
    noStore({ status: 403 }),
  );
}

/** The database's refusal of an aal1 session of a user with a second factor (private.require_aal). */
const AAL_REFUSED = /aal2 session is required/;

/**
 * The data API failed in a way the person cannot fix: a 503 page (never a 500). Unless the
 * database refused this session (42501), which the guards normally catch first (a cookie whose
 * copy of the user lost its factors fools them, not the database): a 403, the page that sends
 * them to /mfa when it was for want of the second factor.
 */
export function backendFailure(error: PostgrestError | null): never {
  if (error?.code === "42501") {
    if (AAL_REFUSED.test(error.message)) aalRequired(MFA_PATH);
    throw data(null, noStore({ status: 403, statusText: "Forbidden" }));
  }
  // (A session ended elsewhere is no failure: the root middleware answers it with the sign-in page.)
  if (error?.code !== SESSION_ENDED.code) console.error("notes: data API error", error);
  throw data(
    { code: error?.code ?? "unexpected" },
    { status: 503, statusText: "Your notes could not be loaded right now" },
  );
}

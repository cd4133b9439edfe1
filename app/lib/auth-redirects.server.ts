import { redirect } from "react-router";
import { NO_STORE } from "./auth-cookies.server";
import { withNext } from "./next-path";
import { safeRedirectPath } from "./safe-redirect";

export { withNext };

/** A redirect that is never cached (the middleware adds the auth cookies it carries). */
export function redirectNoStore(location: string, status = 303): Response {
  return redirect(location, { status, headers: { "Cache-Control": NO_STORE } });
}

/** Redirect to the user-supplied `next`, reduced to a same-origin path. */
export function redirectToNext(next: unknown, fallback = "/"): Response {
  return redirectNoStore(safeRedirectPath(next, fallback));
}

/** `next` from the query string, safe, or undefined when there is none worth keeping. */
export function nextFromUrl(request: Request): string | undefined {
  const next = new URL(request.url).searchParams.get("next");
  const safe = safeRedirectPath(next, "");
  return safe && safe !== "/" ? safe : undefined;
}

/** Where email links and OAuth come back to: this origin's /auth/callback with the safe next. */
export function callbackUrl(request: Request, next: string | undefined): string {
  return `${new URL(request.url).origin}${withNext("/auth/callback", next)}`;
}

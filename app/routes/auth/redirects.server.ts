import { redirect } from "react-router";
import { NO_STORE } from "../../lib/auth-cookies.server";
import { withNext } from "../../lib/next-path";
import { HOME, type SafePath, safeNext } from "../../lib/safe-redirect";

export { withNext };

/** A redirect that is never cached (the middleware adds the auth cookies it carries). */
export function redirectNoStore(location: string, status = 303): Response {
  return redirect(location, { status, headers: { "Cache-Control": NO_STORE } });
}

/** Redirect to `next` (made safe where it entered), or to `fallback` when there is none. */
export function redirectToNext(next: SafePath | undefined, fallback: SafePath = HOME): Response {
  return redirectNoStore(next ?? fallback);
}

/** `next` from the query string, made safe, or undefined when there is none worth keeping. */
export function nextFromUrl(request: Request): SafePath | undefined {
  return safeNext(new URL(request.url).searchParams.get("next"));
}

/** Where email links and OAuth come back to: this origin's /auth/callback with the safe next. */
export function callbackUrl(request: Request, next: SafePath | undefined): string {
  return `${new URL(request.url).origin}${withNext("/auth/callback", next)}`;
}

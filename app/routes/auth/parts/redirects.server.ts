import { type RouterContextProvider } from "react-router";
import { getAuth } from "../../../lib/auth.server";
import { redirectNoStore } from "../../../lib/http.server";
import { withNext } from "../../../lib/next-path";
import { appPath, type SafePath, safeNext } from "../../../lib/safe-redirect";

/** Where a signed-in visitor lands when there is no `next`: their notes. */
export const SIGNED_IN_HOME = appPath("/notes");

/**
 * For the pages a signed-in visitor has no use for (sign-in, sign-up and their next steps): the
 * safe `next` from the URL; a visitor who is already signed in is sent straight there.
 */
export function requireSignedOut(
  request: Request,
  context: Readonly<RouterContextProvider>,
): SafePath | undefined {
  const next = nextFromUrl(request);
  if (getAuth(context).claims) throw redirectToNext(next);
  return next;
}

/** Redirect to `next` (made safe where it entered), or to `fallback` (the notes) when there is none. */
export function redirectToNext(
  next: SafePath | undefined,
  fallback: SafePath = SIGNED_IN_HOME,
): Response {
  return redirectNoStore(next ?? fallback);
}

/** `next` from the query string, made safe, or undefined when there is none worth keeping. */
export function nextFromUrl(request: Request): SafePath | undefined {
  return safeNext(new URL(request.url).searchParams.get("next"));
}

/**
 * Where email links and OAuth come back to: this origin's /auth/callback with the safe next
 * (and `extra` params such as the account pages' `flow`).
 */
export function callbackUrl(
  request: Request,
  next: SafePath | undefined,
  extra: Record<string, string> = {},
): string {
  return `${new URL(request.url).origin}${withNext("/auth/callback", next, extra)}`;
}

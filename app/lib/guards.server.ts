import { type RouterContextProvider, redirect } from "react-router";
import { type Auth, type Claims, getAuth } from "./auth.server";

/** Where signed-out visitors are sent; the page they wanted travels along as `?next=`. */
export const SIGN_IN_PATH = "/sign-in";

/**
 * For loaders and actions that need a signed-in user: returns the client and the (non-null)
 * claims, or throws a redirect to the sign-in page that comes back here afterwards.
 */
export function requireUser(
  request: Request,
  context: Readonly<RouterContextProvider>,
): Auth & { claims: Claims } {
  const auth = getAuth(context);
  if (auth.claims) return { ...auth, claims: auth.claims };
  const url = new URL(request.url);
  const next = `${url.pathname}${url.search}`;
  throw redirect(`${SIGN_IN_PATH}?${new URLSearchParams({ next })}`, {
    headers: { "Cache-Control": "private, no-store" },
  });
}

import { isAuthRetryableFetchError } from "@supabase/supabase-js";
import { data, type RouterContextProvider } from "react-router";
import { type Auth, type Claims, getAuth } from "./auth.server";
import { noStore, redirectNoStore } from "./http.server";
import { pagePath, withNext } from "./next-path";
import { signInAgainLocation } from "./session-ended.server";

/** Where signed-out visitors are sent; the page they wanted travels along as `?next=`. */
export const SIGN_IN_PATH = "/sign-in";

/** Where a signed-in user with a second factor proves it (exempt from the aal2 rule). */
export const MFA_PATH = "/mfa";

/** What a refused POST from an aal1 session carries to the error page. */
export interface AalRequired {
  code: "insufficient_aal";
  message: string;
  next: string;
}

/** Does this session still owe its second factor (verified factor, but an aal1 session)? */
export function needsSecondFactor(auth: Pick<Auth, "claims" | "nextLevel">): boolean {
  return !!auth.claims && auth.nextLevel === "aal2" && auth.claims.aal !== "aal2";
}

/**
 * For loaders and actions that need a signed-in user: returns the client and the (non-null)
 * claims, or throws a redirect to the sign-in page that comes back here afterwards.
 *
 * Once the user has a verified second factor the session must be aal2: a page request is sent to
 * the challenge (`/mfa?next=…`); a form post (or any non-GET) is refused with a 403 and nothing
 * runs, so an aal1 session cannot reach an action by posting to it directly.
 */
export function requireUser(
  request: Request,
  context: Readonly<RouterContextProvider>,
): Auth & { claims: Claims } {
  const auth = getAuth(context);
  const next = pagePath(request);
  if (!auth.claims) {
    throw redirectNoStore(withNext(SIGN_IN_PATH, next), 302);
  }
  if (needsSecondFactor(auth)) {
    const target = withNext(MFA_PATH, next);
    if (request.method === "GET" || request.method === "HEAD") {
      throw redirectNoStore(target, 302);
    }
    throw data<AalRequired>(
      {
        code: "insufficient_aal",
        message:
          "This needs your second factor. Enter the code from your authenticator app, then try again.",
        next: target,
      },
      noStore({ status: 403 }),
    );
  }
  return { ...auth, claims: auth.claims };
}

/**
 * requireUser plus a check with the auth server (`getUser`, one round trip): the fresh user
 * (pending email, factors, identities) for account pages, and a session revoked elsewhere ("sign
 * out other devices") is refused here at once, its cookies cleared, instead of at its next refresh.
 */
export async function requireFreshUser(request: Request, context: Readonly<RouterContextProvider>) {
  const auth = requireUser(request, context);
  const { data, error } = await auth.supabase.auth.getUser();
  if (data.user) return { ...auth, user: data.user };
  const unreachable = !error || isAuthRetryableFetchError(error) || (error.status ?? 0) >= 500;
  if (!unreachable) throw redirectNoStore(signInAgainLocation(pagePath(request)), 302);
  throw data503();
}

function data503() {
  return data(
    {
      code: "backend_unreachable",
      message: "The sign-in service can't be reached right now. Try again in a moment.",
    },
    noStore({ status: 503 }),
  );
}

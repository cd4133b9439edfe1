import { isAuthRetryableFetchError } from "@supabase/supabase-js";
import { data, type RouterContextProvider } from "react-router";
import { type Auth, type Claims, getAuth } from "./auth.server";
import { aalRequired, noStore, redirectNoStore } from "./http.server";
import { MFA_PATH, pagePath, withNext } from "./next-path";
import { signInAgainLocation } from "./session-ended.server";

/** Where signed-out visitors are sent; the page they wanted travels along as `?next=`. */
export const SIGN_IN_PATH = "/sign-in";

/** Does this session still owe its second factor (verified factor, but an aal1 session)? */
export function needsSecondFactor(auth: Pick<Auth, "claims" | "nextLevel">): boolean {
  return !!auth.claims && auth.nextLevel === "aal2" && auth.claims.aal !== "aal2";
}

/**
 * needsSecondFactor, asking the auth server when the cookie's copy of the user says no factor is
 * owed to an aal1 session (its holder can edit that copy): for /mfa, which must not send such a
 * session back to the page that sent it there (requireFreshUser asks the same way).
 */
export async function owesSecondFactor(auth: Auth): Promise<boolean> {
  if (needsSecondFactor(auth)) return true;
  if (!auth.claims || auth.claims.aal === "aal2") return false;
  const { data } = await auth.supabase.auth.getUser();
  return !!data.user?.factors?.some((factor) => factor.status === "verified");
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
  if (needsSecondFactor(auth)) secondFactorFirst(request);
  return { ...auth, claims: auth.claims };
}

/** A page request goes to the challenge (and comes back); anything else is the 403 page. */
function secondFactorFirst(request: Request): never {
  const target = withNext(MFA_PATH, pagePath(request));
  if (request.method === "GET" || request.method === "HEAD") {
    throw redirectNoStore(target, 302);
  }
  aalRequired(target);
}

/**
 * requireUser plus a check with the auth server (`getUser`, one round trip): the fresh user
 * (pending email, factors, identities) for account pages, and a session revoked elsewhere ("sign
 * out other devices") is refused here at once, its cookies cleared, instead of at its next refresh.
 */
export async function requireFreshUser(request: Request, context: Readonly<RouterContextProvider>) {
  const auth = requireUser(request, context);
  const { data, error } = await auth.supabase.auth.getUser();
  if (data.user) {
    // requireUser read the factors from the cookie's copy of the user, which its holder can edit:
    // the auth server's says whether this session still owes a second factor. The session's own
    // level, not the request's claims: an action of this request may have just verified one.
    if (data.user.factors?.some((factor) => factor.status === "verified")) {
      const { data: level } = await auth.supabase.auth.mfa.getAuthenticatorAssuranceLevel();
      if (level?.currentLevel !== "aal2") secondFactorFirst(request);
    }
    return { ...auth, user: data.user };
  }
  const unreachable = !error || isAuthRetryableFetchError(error) || (error.status ?? 0) >= 500;
  if (!unreachable) throw redirectNoStore(signInAgainLocation(pagePath(request)), 302);
  console.error("auth: the user could not be read", error ?? "(no user and no error)");
  throw data503();
}

function data503() {
  return data(
    {
      code: "backend_unreachable",
      message: "The sign-in service can't be reached right now. Try again in a moment.",
    },
    noStore({ status: 503, statusText: "Sign-in service unavailable" }),
  );
}

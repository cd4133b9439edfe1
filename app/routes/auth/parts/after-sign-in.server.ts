import type { SupabaseClient } from "@supabase/supabase-js";
import { redirectNoStore } from "../../../lib/http.server";
import { MFA_PATH, withNext } from "../../../lib/next-path";
import type { SafePath } from "../../../lib/safe-redirect";
import { SIGNED_IN_HOME } from "./redirects.server";

/**
 * Where a fresh session goes: to `next` (or the notes, when there is none), or first to the
 * second-factor challenge when the user has a verified factor and the new session is only aal1.
 * The sign-in itself is in the user's activity already: the database writes it when Auth creates
 * the session (supabase/migrations/20261127000600_security_events_from_auth.sql).
 */
export async function afterSignIn(
  supabase: SupabaseClient,
  options: { next: SafePath | undefined; fallback?: SafePath },
): Promise<Response> {
  const { data } = await supabase.auth.mfa.getAuthenticatorAssuranceLevel();
  const owesSecondFactor = data?.nextLevel === "aal2" && data.currentLevel !== "aal2";
  const next = options.next ?? options.fallback ?? SIGNED_IN_HOME;
  if (owesSecondFactor) {
    return redirectNoStore(withNext(MFA_PATH, next));
  }
  return redirectNoStore(next);
}

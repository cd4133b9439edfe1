import type { SupabaseClient } from "@supabase/supabase-js";
import { MFA_PATH } from "../../lib/guards.server";
import { redirectNoStore } from "../../lib/http.server";
import { withNext } from "../../lib/next-path";
import type { SafePath } from "../../lib/safe-redirect";
import { recordSecurityEvent } from "../../lib/security-events.server";
import { SIGNED_IN_HOME } from "./redirects.server";

/**
 * Where a fresh session goes: to `next` (or the notes, when there is none), or first to the second-factor challenge when the user
 * has a verified factor and the new session is only aal1. Unless told otherwise, the sign-in is
 * written to the user's security activity on the way (stamped by the new session's own token),
 * with how it happened (the access token's most recent `amr` method when not given). A session
 * that still owes its second factor records nothing: the database refuses writes from it (the
 * /mfa challenge records `mfa_verified` once it is aal2).
 */
export async function afterSignIn(
  supabase: SupabaseClient,
  request: Request,
  options: { next: SafePath | undefined; method?: string; fallback?: SafePath; record?: boolean },
): Promise<Response> {
  const { data } = await supabase.auth.mfa.getAuthenticatorAssuranceLevel();
  const owesSecondFactor = data?.nextLevel === "aal2" && data.currentLevel !== "aal2";
  if (options.record !== false && !owesSecondFactor) {
    const latest = data?.currentAuthenticationMethods[0];
    const method =
      options.method ?? (typeof latest === "string" ? latest : latest?.method) ?? "unknown";
    await recordSecurityEvent(supabase, request, "signed_in", { method });
  }
  const next = options.next ?? options.fallback ?? SIGNED_IN_HOME;
  if (owesSecondFactor) {
    return redirectNoStore(withNext(MFA_PATH, next));
  }
  return redirectNoStore(next);
}

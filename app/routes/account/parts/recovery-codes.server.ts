import type { SupabaseClient, User } from "@supabase/supabase-js";
import type { RecoveryCodesStatus } from "./recovery-codes";

/**
 * MFA recovery codes (supabase.auth.mfa.recoveryCodes, experimental in auth-js): a set of
 * single-use codes that stand in for the authenticator app at /mfa. The server shows a set once
 * (generate, regenerate) and afterwards only counts (getStatus); it needs an aal2 session and
 * another verified factor.
 */

/** Whether the user has a set (from the user object: no round trip). */
export function hasRecoveryCodes(user: Pick<User, "factors">): boolean {
  return (user.factors ?? []).some(
    (f) => (f.factor_type as string) === "recovery_code" && f.status === "verified",
  );
}

/**
 * The set's count, or null when there is none (or it can't be read right now). Asked without the
 * user object, so a page can ask beside getUser(); hasRecoveryCodes() on that user then decides.
 */
export async function recoveryCodesStatus(
  supabase: SupabaseClient,
): Promise<RecoveryCodesStatus | null> {
  const { data, error } = await supabase.auth.mfa.recoveryCodes.getStatus();
  if (error || !data) return null;
  return { total: data.total, remaining: data.remaining };
}

/** A new set (replacing the old one when there is one): the codes, shown once. */
export async function generateRecoveryCodes(supabase: SupabaseClient, replace: boolean) {
  const codes = supabase.auth.mfa.recoveryCodes;
  return replace ? codes.regenerate() : codes.generate();
}

import type { SupabaseClient } from "@supabase/supabase-js";

/**
 * Features not every Supabase project has, asked of the backend once and remembered for the
 * isolate's life, per backend URL: true (it has it), false (it has not), or null when the backend
 * could not tell right now. Pages offer a feature only on true: never a panel or a link that would
 * fail. Form posts are refused only on false: on null they go ahead, and the backend's own answer
 * is what the visitor sees.
 *
 * MFA recovery codes (auth-js `mfa.recoveryCodes`, experimental) are a preview of Supabase Auth:
 * hosted projects do not have them, and the local backend has them only when
 * supabase/local-backend.toml turns them on. The question is the status call itself (a user's
 * token is needed: every /factors route wants one):
 * - with them, `GET /factors/recovery-codes` answers the user's count, or 404
 *   `mfa_factor_not_found` for a user without codes;
 * - without them (hosted Auth v2.189.0, or the local backend with them off), "recovery-codes" is
 *   taken for the id of /factors/{factor_id}: 404 `validation_failed`, "factor_id must be an UUID".
 * Any other answer (the backend unreachable, a session that ended) decides nothing and is not
 * remembered: null, and the next request asks again.
 */
const recoveryCodes = new Map<string, boolean>();

export async function offersRecoveryCodes(
  supabase: SupabaseClient,
  backendUrl: string,
): Promise<boolean | null> {
  const known = recoveryCodes.get(backendUrl);
  if (known !== undefined) return known;
  const { data, error } = await supabase.auth.mfa.recoveryCodes.getStatus();
  const offered =
    data || error?.code === "mfa_factor_not_found"
      ? true
      : error?.status === 404 && error.code === "validation_failed"
        ? false
        : undefined;
  if (offered === undefined) return null;
  recoveryCodes.set(backendUrl, offered);
  return offered;
}

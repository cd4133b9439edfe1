import type { AuthError, SupabaseClient } from "@supabase/supabase-js";
import {
  authFailure,
  formFailure,
  formNotice,
  formRefusal,
} from "../../../lib/form-results.server";
import { validateForm } from "../../../lib/forms.server";
import { removePasskeySchema, renamePasskeySchema } from "./schemas.server";

/**
 * The user's passkeys through the auth server (supabase.auth.passkey: GET /passkeys, PATCH and
 * DELETE /passkeys/{id}); the server refuses someone else's id (404) and, once the user has a
 * second factor, changes from an aal1 session.
 */

export interface PasskeyRow {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
}

export async function listPasskeys(supabase: SupabaseClient) {
  const { data, error } = await supabase.auth.passkey.list();
  const passkeys: PasskeyRow[] = (data ?? []).map((p) => ({
    id: p.id,
    name: p.friendly_name || "Passkey",
    createdAt: p.created_at,
    lastUsedAt: p.last_used_at ?? null,
  }));
  return { passkeys, failed: error ? (error.code ?? "unexpected") : null };
}

function notFound(error: AuthError | null): boolean {
  return error?.status === 404 && error.code !== "passkey_disabled";
}

const NOT_FOUND = "That passkey doesn't exist (it may have been removed already).";

/** The "rename-passkey" form of /account/security. */
export async function renamePasskey(supabase: SupabaseClient, form: Record<string, string>) {
  const parsed = validateForm(form, renamePasskeySchema);
  if (!parsed.ok) return formFailure(parsed, 400);
  const { passkeyId, name } = parsed.data;
  const { error } = await supabase.auth.passkey.update({ passkeyId, friendlyName: name });
  if (notFound(error)) return formRefusal(NOT_FOUND, 404, "passkey_not_found");
  if (error) return authFailure(error, {});
  return formNotice(`The passkey is now called “${name}”.`);
}

/** The "remove-passkey" form of /account/security. */
export async function removePasskey(supabase: SupabaseClient, form: Record<string, string>) {
  const parsed = validateForm(form, removePasskeySchema);
  if (!parsed.ok) return formFailure(parsed, 400);
  const { passkeyId } = parsed.data;
  const { passkeys } = await listPasskeys(supabase);
  const passkey = passkeys.find((p) => p.id === passkeyId);
  if (!passkey) return formRefusal(NOT_FOUND, 404, "passkey_not_found");
  const { error } = await supabase.auth.passkey.delete({ passkeyId });
  if (notFound(error)) return formRefusal(NOT_FOUND, 404, "passkey_not_found");
  if (error) return authFailure(error, {});
  return formNotice(`“${passkey.name}” was removed. It can no longer sign you in.`);
}

import type { SupabaseClient } from "@supabase/supabase-js";

/**
 * The kinds of security event (the same list as the database check in
 * supabase/migrations/20261122000700_my_sessions.sql). The database writes them, from triggers
 * on Auth's tables, never the app nor the browser
 * (supabase/migrations/20261127000600_security_events_from_auth.sql).
 */
export const SECURITY_EVENT_KINDS = [
  "signed_in",
  "mfa_verified",
  "signed_out",
  "signed_out_others",
  "signed_out_everywhere",
  "password_changed",
  "email_change_requested",
  "email_changed",
  "mfa_factor_added",
  "mfa_factor_removed",
  "identity_linked",
  "identity_unlinked",
  "session_ended",
  "passkey_added",
  "passkey_renamed",
  "passkey_removed",
  "recovery_codes_generated",
  "recovery_code_used",
] as const;

export type SecurityEventKind = (typeof SECURITY_EVENT_KINDS)[number];

/** An entry; `detail` holds what the database knew: method, name, provider, user_agent, ip… */
export interface SecurityEvent {
  id: number;
  kind: SecurityEventKind;
  detail: Record<string, unknown>;
  aal: string | null;
  created_at: string;
}

/** The signed-in user's latest events, newest first (RLS limits the rows to their own). */
export async function listSecurityEvents(supabase: SupabaseClient, limit = 50) {
  return supabase
    .from("security_events")
    .select("id, kind, detail, aal, created_at")
    .order("created_at", { ascending: false })
    .order("id", { ascending: false })
    .limit(limit)
    .returns<SecurityEvent[]>();
}

import type { SupabaseClient } from "@supabase/supabase-js";

/**
 * The kinds of security event the app records (the same list as the database check in
 * supabase/migrations/20261122000700_my_sessions.sql).
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

export interface SecurityEvent {
  id: number;
  kind: SecurityEventKind;
  detail: Record<string, unknown>;
  aal: string | null;
  created_at: string;
}

/**
 * Records an event for the signed-in user through the `record_security_event` function, which
 * stamps the user and session from the JWT. Best effort: an account action that succeeded is not
 * undone because its log line could not be written (the failure is logged instead).
 */
export async function recordSecurityEvent(
  supabase: SupabaseClient,
  request: Request,
  kind: SecurityEventKind,
  detail: Record<string, string | number | boolean | null | undefined> = {},
): Promise<void> {
  const clean: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(detail)) {
    if (value === null || value === undefined) continue;
    clean[key] = typeof value === "string" ? value.slice(0, 200) : value;
  }
  const agent = request.headers.get("User-Agent");
  if (agent) clean.user_agent = agent.slice(0, 300);
  try {
    const { error } = await supabase.rpc("record_security_event", {
      event_kind: kind,
      event_detail: clean,
    });
    if (error) console.warn(`security event ${kind} not recorded: ${error.code} ${error.message}`);
  } catch (error) {
    console.warn(`security event ${kind} not recorded:`, error);
  }
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

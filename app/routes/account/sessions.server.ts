import type { PostgrestError, SupabaseClient } from "@supabase/supabase-js";
import type { Database } from "../../lib/database.types";
import { deviceName } from "./device-name";

/**
 * Every session of the signed-in user, through the database functions list_my_sessions() and
 * end_my_session() (supabase/migrations/20261122000700_my_sessions.sql): they read and delete
 * auth.sessions rows of auth.uid() only, so they work on a hosted project as locally.
 */

type Client = SupabaseClient<Database>;

export interface DeviceSession {
  id: string;
  device: string;
  ip: string | null;
  signedInAt: string;
  lastActiveAt: string;
  aal: string;
  current: boolean;
}

export async function listMySessions(
  supabase: Client,
): Promise<{ sessions: DeviceSession[]; error: PostgrestError | null }> {
  const { data, error } = await supabase.rpc("list_my_sessions");
  const sessions = (data ?? []).map((row) => ({
    id: row.id,
    device: deviceName(row.user_agent),
    ip: row.ip ?? null,
    signedInAt: row.created_at,
    lastActiveAt: row.last_active_at,
    aal: row.aal ?? "aal1",
    current: row.is_current,
  }));
  return { sessions, error };
}

export type EndSession =
  | { ok: true; device: string }
  | { ok: false; reason: "not_found" | "insufficient_aal" | "unavailable"; code: string };

/** Ends one of the user's sessions (someone else's id is "not found", and nothing changes). */
export async function endMySession(supabase: Client, sessionId: string): Promise<EndSession> {
  const { data, error } = await supabase.rpc("end_my_session", { session_id: sessionId });
  if (!error) return { ok: true, device: deviceName(data) };
  if (error.code === "PT404" || error.code === "22P02") {
    return { ok: false, reason: "not_found", code: "session_not_found" };
  }
  if (error.code === "42501") return { ok: false, reason: "insufficient_aal", code: error.code };
  return { ok: false, reason: "unavailable", code: error.code ?? "unexpected" };
}

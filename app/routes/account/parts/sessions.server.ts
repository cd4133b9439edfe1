import type { PostgrestError, SupabaseClient } from "@supabase/supabase-js";
import type { Database } from "../../../lib/database.types";
import { deviceName } from "./device-name";

/**
 * Every session of the signed-in user, through the database functions list_my_sessions() and
 * end_my_session() (supabase/migrations/20261122000700_my_sessions.sql): they read and delete
 * auth.sessions rows of auth.uid() only, so they work on a hosted project as locally. Each is
 * named by the device it stated at sign-in (statedDevices).
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
  const [{ data, error }, devices] = await Promise.all([
    supabase.rpc("list_my_sessions"),
    statedDevices(supabase),
  ]);
  const sessions = (data ?? []).map((row) => ({
    id: row.id,
    device: deviceName(devices.get(row.id) ?? row.user_agent),
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
  // (read first: the device goes with the session)
  const stated = await statedDevices(supabase, sessionId);
  const { data, error } = await supabase.rpc("end_my_session", { session_id: sessionId });
  if (!error) return { ok: true, device: deviceName(stated.get(sessionId) ?? data) };
  if (error.code === "PT404" || error.code === "22P02") {
    return { ok: false, reason: "not_found", code: "session_not_found" };
  }
  if (error.code === "42501") return { ok: false, reason: "insufficient_aal", code: error.code };
  return { ok: false, reason: "unavailable", code: error.code ?? "unexpected" };
}

/**
 * The devices the user's sessions stated when they signed in (public.session_devices,
 * supabase/migrations/20261127000900_session_devices.sql), by session id. Auth's own
 * auth.sessions.user_agent is the Worker's since its sign-in calls stopped carrying the browser's
 * User-Agent (docs/decisions/022); it is only the fallback for sessions from before. Best effort:
 * without them the page still lists every session.
 */
async function statedDevices(supabase: Client, sessionId?: string): Promise<Map<string, string>> {
  const query = supabase.from("session_devices").select("session_id, user_agent");
  const { data } = await (sessionId ? query.eq("session_id", sessionId) : query);
  return new Map((data ?? []).map((row) => [row.session_id, row.user_agent]));
}

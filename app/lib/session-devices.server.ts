import type { SupabaseClient } from "@supabase/supabase-js";
import type { Claims } from "./auth.server";
import type { Database } from "./database.types";

/**
 * The device a session signed in from, kept by the app (public.session_devices,
 * supabase/migrations/20261127000900_session_devices.sql): the Worker's sign-in and refresh calls
 * carry the secret key and no browser User-Agent (auth-fetch.server.ts), so Auth's
 * auth.sessions.user_agent no longer names the device on /account/sessions.
 *
 * Called by the auth middleware after a request whose client wrote auth cookies. When that request
 * made a new session (its session_id differs from the one the request came with) or raised it to
 * aal2, the session states the browser's User-Agent, once, with its own token; the database
 * accepts that only for the token's own session, at the level every app table asks for. Best
 * effort: a sign-in never fails because its device could not be written.
 */
export async function recordSessionDevice(
  supabase: SupabaseClient<Database>,
  request: Request,
  before: Claims | null,
): Promise<void> {
  const agent = request.headers.get("User-Agent")?.trim().slice(0, 512);
  if (!agent) return;
  // (the stored session here is the one the auth server just answered, not the visitor's cookie:
  // reading its user is deliberate, so auth-js's server-side warning is switched off)
  (supabase.auth as unknown as { suppressGetSessionWarning: boolean }).suppressGetSessionWarning =
    true;
  const { data } = await supabase.auth.getSession();
  const session = data.session;
  if (!session) return;
  const claims = payload(session.access_token);
  const sessionId = typeof claims?.session_id === "string" ? claims.session_id : undefined;
  if (!sessionId) return;
  const raised = claims?.aal === "aal2" && before?.aal !== "aal2";
  if (sessionId === before?.session_id && !raised) return;
  // A session that still owes its second factor may write nothing; it states its device once it
  // has the factor (the /mfa response, `raised` above).
  const factors = (session.user as { factors?: { status?: string }[] } | undefined)?.factors ?? [];
  if (claims?.aal !== "aal2" && factors.some((factor) => factor.status === "verified")) return;
  try {
    const { error } = await supabase
      .from("session_devices")
      .insert({ session_id: sessionId, user_agent: agent });
    // 23505: this session stated its device already (first write wins).
    if (error && error.code !== "23505") {
      console.warn(`session device not recorded: ${error.code} ${error.message}`);
    }
  } catch (error) {
    console.warn("session device not recorded:", error);
  }
}

/**
 * The claims of a token the auth server has just handed this Worker (not one from the visitor's
 * cookie): a hint for what to write, which the database checks against the verified token anyway.
 */
function payload(token: string): Record<string, unknown> | undefined {
  try {
    const part = token.split(".")[1] ?? "";
    const json = atob(part.replaceAll("-", "+").replaceAll("_", "/"));
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(json, (c) => c.charCodeAt(0))));
  } catch {
    return undefined;
  }
}

import { APP_URL } from "../../setup/app.ts";

export { APP_URL };

/** The test backend the app under test is pointed at (tests/setup/app.ts). */
import { BACKEND_URL } from "../../support/backend.ts";

export { BACKEND_URL };
/** The Supabase CLI's well-known local keys; the local backend accepts the same ones. */
export const PUBLISHABLE_KEY = "sb_publishable_ACJWlzQHlZjBrEguHvfOxg_3BJgxAaH";
export const SECRET_KEY = "sb_secret_N7UND0UgjKTVK-Uodkm0Hg_xSvEMPvz";
export const STORAGE_KEY = "sb-127-auth-token";

export async function get(path: string, cookie?: string) {
  const started = performance.now();
  const response = await fetch(`${APP_URL}${path}`, {
    headers: cookie ? { Cookie: cookie } : {},
    redirect: "manual",
  });
  const body = await response.text();
  return { response, body, ms: performance.now() - started };
}

/** "auth=N rest=M": the backend round trips the Worker's Supabase client made for this request. */
export function backendCalls(response: { headers: Headers }): { auth: number; rest: number } {
  const match = /supabase;desc="auth=(\d+) rest=(\d+)\b/.exec(
    response.headers.get("Server-Timing") ?? "",
  );
  if (!match) throw new Error("no Server-Timing supabase entry");
  return { auth: Number(match[1]), rest: Number(match[2]) };
}

/**
 * "check=C seq=S": the round trips the session check made, and the longest chain of round trips
 * one after another (app/lib/backend-fetch.server.ts), what a visitor far from the backend waits.
 */
export function backendTrips(response: { headers: Headers }): { check: number; seq: number } {
  const desc = /supabase;desc="[^"]*\bcheck=(\d+) seq=(\d+)"/.exec(
    response.headers.get("Server-Timing") ?? "",
  );
  if (!desc) throw new Error("no Server-Timing supabase entry with check= and seq=");
  return { check: Number(desc[1]), seq: Number(desc[2]) };
}

export async function backendIsUp(): Promise<boolean> {
  try {
    const response = await fetch(`${BACKEND_URL}/auth/v1/health`, {
      headers: { apikey: PUBLISHABLE_KEY },
      signal: AbortSignal.timeout(1000),
    });
    return response.ok;
  } catch {
    return false;
  }
}

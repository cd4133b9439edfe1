// list_my_sessions() and end_my_session() (supabase/migrations/20261122000700_my_sessions.sql)
// through the real supabase-js: each user sees only their own sessions, the calling one marked;
// ending one refuses its refresh and its access token at the auth server, while someone else's or
// a malformed id is refused and changes nothing. (The aal1 / anonymous / anon refusals of both
// functions are proved for every exposed function by exposed-functions.test.ts.)
import type { SupabaseClient } from "@supabase/supabase-js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { PASSWORD, PUBLISHABLE_KEY } from "../support/backend.ts";
import { type MemoryBackend, memoryBackend } from "../support/memory-backend.ts";
import { enrollVerifiedTotp } from "../support/mfa.ts";

interface MySession {
  id: string;
  user_agent: string | null;
  ip: string | null;
  created_at: string;
  last_active_at: string;
  aal: string;
  not_after: string | null;
  is_current: boolean;
}

let local: MemoryBackend;

beforeAll(async () => {
  local = await memoryBackend({});
}, 60_000);

afterAll(() => local?.close());

async function sessionIdOf(client: SupabaseClient): Promise<string> {
  const token = (await client.auth.getSession()).data.session?.access_token ?? "";
  return JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString()).session_id;
}

/** The same user signed in again on a new client with another user agent. */
async function anotherDevice(email: string, agent: string) {
  const client = local.client({ headers: { "User-Agent": agent } });
  const { error } = await client.auth.signInWithPassword({ email, password: PASSWORD });
  if (error) throw error;
  return client;
}

async function sessionRows(userId: string) {
  const { rows } = await local.backend.db.query<{ id: string; tokens: number }>(
    `select s.id, (select count(*)::int from auth.refresh_tokens t where t.session_id = s.id) as tokens
     from auth.sessions s where s.user_id = $1 order by s.id`,
    [userId],
  );
  return rows;
}

const MAC_CHROME =
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

describe("list_my_sessions()", () => {
  test("lists the caller's sessions only, the calling one first and marked", async () => {
    const me = await local.signedIn();
    const laptop = await anotherDevice(me.email, MAC_CHROME);
    const stranger = await local.signedIn();

    const { data, error } = await laptop.rpc("list_my_sessions");
    expect(error).toBeNull();
    const rows = (data ?? []) as MySession[];
    expect(rows.map((r) => r.id).sort()).toEqual(
      [await sessionIdOf(me.client), await sessionIdOf(laptop)].sort(),
    );
    expect(rows.map((r) => r.id)).not.toContain(await sessionIdOf(stranger.client));
    expect(rows[0]).toMatchObject({
      id: await sessionIdOf(laptop),
      is_current: true,
      user_agent: MAC_CHROME,
      ip: "127.0.0.1",
      aal: "aal1",
      not_after: null,
    });
    expect(rows[1]?.is_current).toBe(false);
    for (const row of rows) {
      expect(Date.parse(row.last_active_at)).toBeGreaterThanOrEqual(Date.parse(row.created_at));
    }
  });

  test("an aal2 session says so", async () => {
    const me = await local.signedIn();
    await enrollVerifiedTotp(me.client);
    const { data } = await me.client.rpc("list_my_sessions");
    expect((data as MySession[])[0]).toMatchObject({ is_current: true, aal: "aal2" });
  });
});

describe("end_my_session(session_id)", () => {
  test("ends one of the caller's other sessions: its refresh and its access token are refused", async () => {
    const me = await local.signedIn();
    const phone = await anotherDevice(me.email, "phone");
    const phoneSession = await sessionIdOf(phone);
    const { access_token, refresh_token } = (await phone.auth.getSession()).data.session ?? {};

    const ended = await me.client.rpc("end_my_session", { session_id: phoneSession });
    expect(ended.error).toBeNull();
    expect(ended.data).toBe("phone");

    expect((await sessionRows(me.user.id)).map((r) => r.id)).toEqual([
      await sessionIdOf(me.client),
    ]);
    // The access token still verifies, but the auth server knows its session is gone.
    const user = await local.fetch(`${local.backend.url}/auth/v1/user`, {
      headers: { apikey: PUBLISHABLE_KEY, Authorization: `Bearer ${access_token}` },
    });
    expect(user.status).toBe(403);
    expect(await user.json()).toMatchObject({ error_code: "session_not_found" });
    const refreshed = await local
      .client()
      .auth.refreshSession({ refresh_token: refresh_token ?? "" });
    expect(refreshed.error).toMatchObject({ status: 400, code: "refresh_token_not_found" });
    // The caller carries on.
    expect((await me.client.auth.getUser()).error).toBeNull();
  });

  test("someone else's session id: 404 'Session not found', nothing changes", async () => {
    const me = await local.signedIn();
    const victim = await local.signedIn();
    const before = await sessionRows(victim.user.id);

    const { error, status } = await me.client.rpc("end_my_session", {
      session_id: await sessionIdOf(victim.client),
    });
    expect(status).toBe(404);
    expect(error).toMatchObject({ code: "PT404", message: "Session not found" });
    expect(await sessionRows(victim.user.id)).toEqual(before);
    expect((await victim.client.auth.getUser()).error).toBeNull();
  });

  test("a missing or malformed id is refused with a 4xx", async () => {
    const me = await local.signedIn();
    const before = await sessionRows(me.user.id);
    const missing = await me.client.rpc("end_my_session", { session_id: crypto.randomUUID() });
    expect(missing.status).toBe(404);
    const malformed = await me.client.rpc("end_my_session", { session_id: "not-a-uuid" });
    expect(malformed.status).toBe(400);
    expect(malformed.error?.code).toBe("22P02");
    expect(await sessionRows(me.user.id)).toEqual(before);
  });
});

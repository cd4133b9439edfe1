// An ended session is signed out in the database at once, not when its access token expires.
//
// Every way a session ends (this device signing out, another device signing out the others or
// everyone, a password change, end_my_session()) deletes its auth.sessions row, but the access
// token it had issued stays valid for up to an hour (jwt_expiry). Through the real supabase-js,
// the ended browser's token is replayed as an attacker would: every data API request with it is
// refused with one fixed answer (db_pre_request: 401 PT401, Auth's own session_not_found message),
// which a client can tell apart from an empty list; nothing is read or written; and the session
// that ended cannot end anyone else's. The same token without the pre-request (as Storage,
// Realtime or a project that lost the setting would run it) is held by the restrictive policies
// and the function guard: see notes-rls-matrix.test.ts and exposed-functions.test.ts.
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { PASSWORD, PUBLISHABLE_KEY, SECRET_KEY } from "../support/backend.ts";
import { type MemoryBackend, memoryBackend } from "../support/memory-backend.ts";

/** What the data API answers a token whose session has ended (the migration's fixed error). */
const SESSION_ENDED = {
  status: 401,
  code: "PT401",
  message: "Session from session_id claim in JWT does not exist",
};

let local: MemoryBackend;

beforeAll(async () => {
  local = await memoryBackend({});
}, 60_000);

afterAll(() => local?.close());

/** A client that sends `token` on every data API request, as a replaying attacker would. */
function withToken(token: string): SupabaseClient {
  return createClient(local.backend.url, PUBLISHABLE_KEY, {
    auth: { persistSession: false, autoRefreshToken: false },
    global: { fetch: local.fetch, headers: { Authorization: `Bearer ${token}` } },
  });
}

async function tokenOf(client: SupabaseClient): Promise<string> {
  const token = (await client.auth.getSession()).data.session?.access_token;
  if (!token) throw new Error("no session");
  return token;
}

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString());
}

/** The same user on a second device. */
async function secondDevice(email: string): Promise<SupabaseClient> {
  const client = local.client();
  const { error } = await client.auth.signInWithPassword({ email, password: PASSWORD });
  if (error) throw error;
  return client;
}

/** A user with a note, signed in on two devices. */
async function userOnTwoDevices() {
  const me = await local.signedIn();
  const note = await me.client.from("notes").insert({ title: "Mine" }).select("id").single();
  if (note.error) throw note.error;
  const other = await secondDevice(me.email);
  return { ...me, noteId: note.data.id as string, other };
}

async function sessionExists(id: unknown): Promise<boolean> {
  const { rows } = await local.backend.db.query("select 1 from auth.sessions where id = $1", [id]);
  return rows.length === 1;
}

/** Every read and write the ended token tries is refused with the fixed answer; nothing changes. */
async function expectSignedOutEverywhere(token: string, noteId: string) {
  expect(await sessionExists(claimsOf(token).session_id)).toBe(false);
  const ended = withToken(token);
  const refused = (r: { status: number; error: { code?: string; message?: string } | null }) => {
    expect(r.status).toBe(SESSION_ENDED.status);
    expect(r.error).toMatchObject({ code: SESSION_ENDED.code, message: SESSION_ENDED.message });
  };
  refused(await ended.from("notes").select("id, title"));
  refused(await ended.from("profiles").select("id"));
  refused(await ended.from("notes").insert({ title: "Written after sign-out" }));
  refused(await ended.from("notes").update({ title: "Changed after sign-out" }).eq("id", noteId));
  refused(await ended.from("notes").delete().eq("id", noteId));
  refused(await ended.rpc("set_note_tags", { note_id: noteId, tag_names: ["late"] }));
  const truth = await local.backend.db.query<{ title: string }>(
    "select title from public.notes where owner_id = $1",
    [claimsOf(token).sub],
  );
  expect(truth.rows.map((r) => r.title)).toEqual(["Mine"]);
}

describe("an ended session's access token", () => {
  test("after 'sign out this device' (scope local): refused at once", async () => {
    const { client, noteId } = await userOnTwoDevices();
    const token = await tokenOf(client);
    expect((await withToken(token).from("notes").select("id")).data).toHaveLength(1);
    const { error } = await client.auth.signOut({ scope: "local" });
    expect(error).toBeNull();
    await expectSignedOutEverywhere(token, noteId);
  });

  test("after another device signs out the others: refused at once; that device carries on", async () => {
    const { client, other, noteId } = await userOnTwoDevices();
    const token = await tokenOf(other);
    const { error } = await client.auth.signOut({ scope: "others" });
    expect(error).toBeNull();
    await expectSignedOutEverywhere(token, noteId);
    expect((await client.from("notes").select("id")).data).toHaveLength(1);
  });

  test("after signing out everywhere: every device's token is refused", async () => {
    const { client, other, noteId } = await userOnTwoDevices();
    const tokens = [await tokenOf(client), await tokenOf(other)];
    const { error } = await client.auth.signOut({ scope: "global" });
    expect(error).toBeNull();
    for (const token of tokens) await expectSignedOutEverywhere(token, noteId);
  });

  test("after a password change on another device (Auth ends every other session): refused at once", async () => {
    const { client, other, noteId } = await userOnTwoDevices();
    const token = await tokenOf(other);
    const { error } = await client.auth.updateUser({ password: `${PASSWORD}-new` });
    expect(error).toBeNull();
    await expectSignedOutEverywhere(token, noteId);
    // The device that changed the password keeps its session.
    expect((await client.from("notes").select("id")).data).toHaveLength(1);
  });

  test("after end_my_session() from another device: refused at once", async () => {
    const { client, other, noteId } = await userOnTwoDevices();
    const token = await tokenOf(other);
    const ended = await client.rpc("end_my_session", { session_id: claimsOf(token).session_id });
    expect(ended.error).toBeNull();
    await expectSignedOutEverywhere(token, noteId);
  });

  test("cannot end the owner's other sessions with end_my_session()", async () => {
    const { client, other } = await userOnTwoDevices();
    const token = await tokenOf(other);
    const mine = claimsOf(await tokenOf(client)).session_id;
    expect((await other.auth.signOut({ scope: "local" })).error).toBeNull();

    const attempt = await withToken(token).rpc("end_my_session", { session_id: mine });
    expect(attempt.status).toBe(SESSION_ENDED.status);
    expect(attempt.error).toMatchObject({ code: SESSION_ENDED.code });
    expect(await sessionExists(mine)).toBe(true);
    expect((await client.rpc("list_my_sessions")).data).toHaveLength(1);
  });

  test("the answer is PostgREST's for a PTxxx error: 401, WWW-Authenticate: Bearer, JSON body", async () => {
    const { client } = await userOnTwoDevices();
    const token = await tokenOf(client);
    await client.auth.signOut({ scope: "local" });
    const response = await local.fetch(`${local.backend.url}/rest/v1/notes?select=id`, {
      headers: { apikey: PUBLISHABLE_KEY, Authorization: `Bearer ${token}` },
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("WWW-Authenticate")).toBe("Bearer");
    expect(await response.json()).toEqual({
      code: SESSION_ENDED.code,
      message: SESSION_ENDED.message,
      details: null,
      hint: "Sign in again: this session was signed out.",
    });
  });
});

describe("tokens the check leaves alone", () => {
  test("a live session, the secret key and the publishable key alone are answered as before", async () => {
    const { client } = await userOnTwoDevices();
    expect((await client.from("notes").select("id")).status).toBe(200);
    const admin = createClient(local.backend.url, SECRET_KEY, {
      auth: { persistSession: false, autoRefreshToken: false },
      global: { fetch: local.fetch },
    });
    expect((await admin.from("notes").select("id").limit(1)).status).toBe(200);
    // anon has no grant on notes: 401 42501, as before, not the ended-session answer
    const anon = await local.client().from("notes").select("id");
    expect(anon.status).toBe(401);
    expect(anon.error?.code).toBe("42501");
  });
});

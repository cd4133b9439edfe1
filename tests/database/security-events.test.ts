// The activity log (public.security_events) is written by the database from what Auth writes
// (supabase/migrations/20261127000600_security_events_from_auth.sql), never by a client.
//
// The attacks, through the real supabase-js as an attacker would make them: a signed-in user (or
// anyone holding their token) tries to write entries of their own choosing through the data API,
// and changes their account straight through the Auth API (/auth/v1, never through the app),
// which must leave the entries a change through the app leaves.
import type { SupabaseClient } from "@supabase/supabase-js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { PASSWORD } from "../support/backend.ts";
import { type MemoryBackend, memoryBackend } from "../support/memory-backend.ts";
import { enrollVerifiedTotp, totpCode } from "../support/mfa.ts";

interface Entry {
  kind: string;
  detail: Record<string, unknown>;
  session_id: string | null;
  aal: string | null;
}

let local: MemoryBackend;

beforeAll(async () => {
  local = await memoryBackend({});
}, 60_000);

afterAll(() => local?.close());

/** The user's entries, oldest first, as they read them through the data API. */
async function entries(client: SupabaseClient): Promise<Entry[]> {
  const { data, error } = await client
    .from("security_events")
    .select("kind, detail, session_id, aal")
    .order("id");
  if (error) throw error;
  return data as Entry[];
}

async function kinds(client: SupabaseClient): Promise<string[]> {
  return (await entries(client)).map((entry) => entry.kind);
}

async function sessionIdOf(client: SupabaseClient): Promise<string> {
  const token = (await client.auth.getSession()).data.session?.access_token ?? "";
  return JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString()).session_id;
}

/** The same user signed in again on a new client (another device). */
async function anotherDevice(email: string, agent: string) {
  const client = local.client({ headers: { "User-Agent": agent } });
  const { error } = await client.auth.signInWithPassword({ email, password: PASSWORD });
  if (error) throw error;
  return client;
}

const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0";

describe("nobody writes the activity log through the data API", () => {
  test("a signed-in session cannot forge an entry: record_security_event() is gone", async () => {
    const me = await local.signedIn();
    const forged = await me.client.rpc("record_security_event", {
      event_kind: "password_changed",
      event_detail: { via: "attacker" },
    });
    expect(forged.error?.code).toBe("PGRST202");
    const direct = await me.client
      .from("security_events")
      .insert({ user_id: me.user.id, kind: "signed_in", detail: { method: "forged" } });
    expect(direct.error?.code).toBe("42501");
    expect(await kinds(me.client)).toEqual(["signed_in"]);
  });

  test("nor can the secret key (service_role)", async () => {
    const me = await local.signedIn();
    const insert = await local
      .admin()
      .from("security_events")
      .insert({ user_id: me.user.id, kind: "password_changed" });
    expect(insert.error?.code).toBe("42501");
    const rpc = await local.admin().rpc("record_security_event", { event_kind: "signed_in" });
    expect(rpc.error?.code).toBe("PGRST202");
    expect(await kinds(me.client)).toEqual(["signed_in"]);
  });
});

describe("changes made straight through the Auth API are recorded", () => {
  test("sign-in: the method from the session's amr claim, the device and address Auth recorded", async () => {
    const me = await local.signedIn({ headers: { "User-Agent": FIREFOX } });
    const [signedIn] = await entries(me.client);
    expect(signedIn).toEqual({
      kind: "signed_in",
      detail: { method: "password", user_agent: FIREFOX, ip: "127.0.0.1" },
      session_id: await sessionIdOf(me.client),
      aal: "aal1",
    });
  });

  test("password change, email change request", async () => {
    const me = await local.signedIn();
    const password = await me.client.auth.updateUser({ password: `${PASSWORD}-new` });
    expect(password.error).toBeNull();
    const newEmail = `new-${me.email}`;
    const email = await me.client.auth.updateUser({ email: newEmail });
    expect(email.error).toBeNull();
    expect((await entries(me.client)).slice(1)).toEqual([
      expect.objectContaining({ kind: "password_changed", detail: {} }),
      expect.objectContaining({ kind: "email_change_requested", detail: { new_email: newEmail } }),
    ]);
  });

  test("a second factor enrolled, used by another device, and removed", async () => {
    const me = await local.signedIn();
    const { factorId, secret } = await enrollVerifiedTotp(me.client, "Work phone");
    const laptop = await anotherDevice(me.email, FIREFOX);
    // The next period's code: the one that verified the enrollment is refused while still valid.
    const code = totpCode(secret, 30);
    const verified = await laptop.auth.mfa.challengeAndVerify({ factorId, code });
    expect(verified.error).toBeNull();
    const removed = await me.client.auth.mfa.unenroll({ factorId });
    expect(removed.error).toBeNull();

    const log = await entries(me.client);
    expect(log.map((entry) => entry.kind)).toEqual([
      "signed_in",
      "mfa_factor_added",
      "signed_in",
      "mfa_verified",
      "mfa_factor_removed",
    ]);
    expect(log[1]?.detail).toMatchObject({ method: "totp", name: "Work phone" });
    expect(log[3]).toMatchObject({
      detail: { method: "totp", name: "Work phone" },
      session_id: await sessionIdOf(laptop),
      aal: "aal2",
    });
    expect(log[4]?.detail).toMatchObject({ name: "Work phone" });
  });

  test("an enrollment never verified is neither added nor removed", async () => {
    const me = await local.signedIn();
    const enrolled = await me.client.auth.mfa.enroll({ factorType: "totp" });
    expect(enrolled.error).toBeNull();
    await me.client.auth.mfa.unenroll({ factorId: enrolled.data?.id ?? "" });
    expect(await kinds(me.client)).toEqual(["signed_in"]);
  });

  test("signing out: this device, the others, everywhere", async () => {
    const me = await local.signedIn();
    await anotherDevice(me.email, FIREFOX);
    await anotherDevice(me.email, "curl/8.0");
    const third = await anotherDevice(me.email, "curl/8.1");
    expect((await third.auth.signOut({ scope: "local" })).error).toBeNull();
    expect((await me.client.auth.signOut({ scope: "others" })).error).toBeNull();
    const fresh = await anotherDevice(me.email, "curl/8.2");
    expect((await fresh.auth.signOut({ scope: "global" })).error).toBeNull();

    const reader = await anotherDevice(me.email, "curl/8.3");
    const log = await entries(reader);
    expect(log.map((entry) => entry.kind)).toEqual([
      "signed_in",
      "signed_in",
      "signed_in",
      "signed_in",
      "signed_out",
      "signed_out_others",
      "signed_in",
      "signed_out_everywhere",
      "signed_in",
    ]);
    expect(log[4]?.detail).toEqual({ user_agent: "curl/8.1", ip: "127.0.0.1" });
    expect(log[5]?.detail).toEqual({ sessions: 2 });
    expect(log[7]?.detail).toEqual({ sessions: 2 });
  });

  test("end_my_session() from another device is session_ended, with the ended device", async () => {
    const me = await local.signedIn();
    const laptop = await anotherDevice(me.email, FIREFOX);
    const ended = await me.client.rpc("end_my_session", { session_id: await sessionIdOf(laptop) });
    expect(ended.error).toBeNull();
    const log = await entries(me.client);
    expect(log.at(-1)).toMatchObject({
      kind: "session_ended",
      detail: { user_agent: FIREFOX },
      session_id: await sessionIdOf(laptop),
    });
  });

  test("a session signed in without a User-Agent takes the device it states (session_devices)", async () => {
    // As the Worker signs in: Auth records no browser, the session then states it itself.
    const me = await local.signedIn();
    const laptop = local.client();
    expect(
      (await laptop.auth.signInWithPassword({ email: me.email, password: PASSWORD })).error,
    ).toBeNull();
    const laptopSession = await sessionIdOf(laptop);
    const stated = await laptop
      .from("session_devices")
      .insert({ session_id: laptopSession, user_agent: FIREFOX });
    expect(stated.error).toBeNull();
    const ended = await me.client.rpc("end_my_session", { session_id: laptopSession });
    expect(ended.error).toBeNull();

    const log = (await entries(me.client)).filter((entry) => entry.session_id === laptopSession);
    expect(log).toEqual([
      expect.objectContaining({
        kind: "signed_in",
        detail: expect.objectContaining({ user_agent: FIREFOX }),
      }),
      expect.objectContaining({
        kind: "session_ended",
        detail: expect.objectContaining({ user_agent: FIREFOX }),
      }),
    ]);
    // Only the label came from the session; no entry of another session took it.
    const mine = (await entries(me.client)).find((entry) => entry.session_id !== laptopSession);
    expect(mine?.detail.user_agent).toBeUndefined();
  });

  test("identities: one linked (as Auth links it) and unlinked through the Auth API", async () => {
    const me = await local.signedIn();
    // Linking ends at a provider's page; the identity row is what Auth then writes.
    await local.backend.db.query(
      `insert into auth.identities (provider_id, user_id, identity_data, provider, created_at, updated_at)
       values ($1, $2, $3, 'github', now(), now())`,
      [
        `gh-${me.user.id}`,
        me.user.id,
        JSON.stringify({ sub: `gh-${me.user.id}`, email: me.email }),
      ],
    );
    const { data } = await me.client.auth.getUserIdentities();
    const github = data?.identities.find((identity) => identity.provider === "github");
    expect(github).toBeDefined();
    const unlinked = await me.client.auth.unlinkIdentity(github as NonNullable<typeof github>);
    expect(unlinked.error).toBeNull();
    expect((await entries(me.client)).slice(1)).toEqual([
      expect.objectContaining({ kind: "identity_linked", detail: { provider: "github" } }),
      expect.objectContaining({ kind: "identity_unlinked", detail: { provider: "github" } }),
    ]);
  });

  test("deleting an account with sessions, identities and entries still works", async () => {
    const me = await local.signedIn();
    await anotherDevice(me.email, FIREFOX);
    const deleted = await local.admin().auth.admin.deleteUser(me.user.id);
    expect(deleted.error).toBeNull();
    const { rows } = await local.backend.db.query(
      "select 1 from public.security_events where user_id = $1",
      [me.user.id],
    );
    expect(rows).toEqual([]);
  });
});

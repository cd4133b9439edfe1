// Live notes (supabase/migrations/20261128000100_live_notes.sql), through the real supabase-js
// Realtime client: who may join `user:<id>` and `note:<id>` (RLS on realtime.messages), that
// readers may share presence but not broadcast, that the aal2, anonymous and ended-session rules
// hold there as on every table, and what the database's triggers say when notes and shares change:
// ids only, on the right topics. A backend of its own with a socket (Realtime needs one) and
// anonymous sign-ins on (config.toml has them off; a hosted project may not), on this worker's
// database.
import { fileURLToPath } from "node:url";
import { createLocalBackend, type LocalBackend } from "@edge-notes/supabase-local";
import { createClient, type RealtimeChannel, type SupabaseClient } from "@supabase/supabase-js";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import {
  PASSWORD,
  PUBLISHABLE_KEY,
  QUICK_PASSWORD_HASH_COST,
  randomEmail,
  SECRET_KEY,
  TEST_RATE_LIMITS,
} from "../support/backend.ts";
import { workerDatabase } from "../support/memory-backend.ts";
import { enrollVerifiedTotp } from "../support/mfa.ts";

const noPersist = { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false };

let backend: LocalBackend;
const clients: SupabaseClient[] = [];

beforeAll(async () => {
  backend = await createLocalBackend({
    projectDir: fileURLToPath(new URL("../../", import.meta.url)),
    db: await workerDatabase(),
    seed: false,
    port: 0,
    host: "127.0.0.1",
    config: {
      auth: {
        passwordHashCost: QUICK_PASSWORD_HASH_COST,
        rateLimit: TEST_RATE_LIMITS,
        enableAnonymousSignIns: true,
      },
    },
  });
}, 60_000);

afterEach(async () => {
  for (const client of clients.splice(0)) await client.removeAllChannels();
});

afterAll(() => backend?.close());

function client(options: { accessToken?: () => Promise<string> } = {}): SupabaseClient {
  const made = createClient(backend.url, PUBLISHABLE_KEY, { auth: noPersist, ...options });
  clients.push(made);
  return made;
}

interface Person {
  id: string;
  email: string;
  client: SupabaseClient;
}

async function person(): Promise<Person> {
  const email = randomEmail("live");
  const admin = createClient(backend.url, SECRET_KEY, { auth: noPersist });
  const created = await admin.auth.admin.createUser({
    email,
    password: PASSWORD,
    email_confirm: true,
  });
  if (created.error) throw created.error;
  return { id: created.data.user.id, email, client: await signedIn(email) };
}

async function signedIn(email: string): Promise<SupabaseClient> {
  const made = client();
  const { error } = await made.auth.signInWithPassword({ email, password: PASSWORD });
  if (error) throw error;
  await made.realtime.setAuth();
  return made;
}

/** A note of `owner`'s, shared with `recipient` when one is given. */
async function noteOf(owner: Person, recipient?: Person): Promise<string> {
  const note = await owner.client
    .from("notes")
    .insert({ title: "Live", body: "secret body" })
    .select("id")
    .single();
  if (note.error) throw note.error;
  if (recipient) {
    const shared = await owner.client.rpc("share_note", {
      note_id: note.data.id,
      email: recipient.email,
    });
    expect(shared.data).toBe("shared");
  }
  return note.data.id;
}

const privately = (extra: Record<string, unknown> = {}) => ({
  config: { private: true, ...extra },
});

/** Whether the join is accepted: SUBSCRIBED, or the join's refusal. */
function joins(channel: RealtimeChannel): Promise<true | string> {
  return new Promise((resolve) => {
    channel.subscribe((status, error) => {
      if (status === "SUBSCRIBED") resolve(true);
      else if (status !== "CLOSED") resolve(error?.message ?? status);
    });
  });
}

async function joined(channel: RealtimeChannel): Promise<RealtimeChannel> {
  expect(await joins(channel)).toBe(true);
  return channel;
}

/** Every broadcast a channel hears, as `event payload`. */
function heard(channel: RealtimeChannel): { event: string; payload: Record<string, unknown> }[] {
  const got: { event: string; payload: Record<string, unknown> }[] = [];
  channel.on("broadcast", { event: "*" }, (message) =>
    got.push({ event: message.event, payload: message.payload }),
  );
  return got;
}

const unauthorized = (topic: string) =>
  `Unauthorized: You do not have permissions to read from this Channel topic: ${topic}`;

describe("who may join", () => {
  test("user:<id> is for that user alone", async () => {
    const [ada, grace] = await Promise.all([person(), person()]);
    const topic = `user:${ada.id}`;
    expect(await joins(ada.client.channel(topic, privately()))).toBe(true);
    expect(await joins(grace.client.channel(topic, privately()))).toBe(unauthorized(topic));
    expect(await joins(client().channel(topic, privately()))).toBe(unauthorized(topic));
  });

  test("note:<id> is for the owner and the people it is shared with", async () => {
    const [ada, grace, stranger] = await Promise.all([person(), person(), person()]);
    const noteId = await noteOf(ada, grace);
    const topic = `note:${noteId}`;
    expect(await joins(ada.client.channel(topic, privately()))).toBe(true);
    expect(await joins(grace.client.channel(topic, privately()))).toBe(true);
    expect(await joins(stranger.client.channel(topic, privately()))).toBe(unauthorized(topic));
    expect(await joins(client().channel(topic, privately()))).toBe(unauthorized(topic));
    // Not a note's topic at all, or upper-case: nothing (and no error from the policy).
    for (const other of [`note:${noteId.toUpperCase()}`, `note:${noteId}x`, "note:", "notes"]) {
      expect(await joins(ada.client.channel(other, privately()))).toBe(unauthorized(other));
    }
  });

  test("after an unshare the ex-recipient cannot join again", async () => {
    const [ada, grace] = await Promise.all([person(), person()]);
    const noteId = await noteOf(ada, grace);
    const topic = `note:${noteId}`;
    expect(await joins(grace.client.channel(topic, privately()))).toBe(true);
    await grace.client.removeAllChannels();
    const removed = await ada.client
      .from("note_shares")
      .delete({ count: "exact" })
      .match({ note_id: noteId, shared_with_email: grace.email });
    expect(removed.count).toBe(1);
    expect(await joins(grace.client.channel(topic, privately()))).toBe(unauthorized(topic));
  });

  test("an aal1 session of an account with a second factor, an anonymous user and an ended session: nothing", async () => {
    const ada = await person();
    const noteId = await noteOf(ada);
    await enrollVerifiedTotp(ada.client);
    await ada.client.realtime.setAuth();
    // aal2 (the session that verified the factor) joins; the password-only session does not
    const aal1 = await signedIn(ada.email);
    const topics = [`user:${ada.id}`, `note:${noteId}`];
    for (const topic of topics) {
      expect(await joins(ada.client.channel(topic, privately()))).toBe(true);
      expect(await joins(aal1.channel(topic, privately()))).toBe(unauthorized(topic));
    }

    const anonymous = client();
    const signIn = await anonymous.auth.signInAnonymously();
    expect(signIn.error).toBeNull();
    await anonymous.realtime.setAuth();
    const own = `user:${signIn.data.user?.id}`;
    expect(await joins(anonymous.channel(own, privately()))).toBe(unauthorized(own));

    const grace = await person();
    const device = await signedIn(grace.email);
    const token = (await device.auth.getSession()).data.session?.access_token ?? "";
    expect((await device.auth.signOut({ scope: "local" })).error).toBeNull();
    const ended = client({ accessToken: async () => token });
    const graceTopic = `user:${grace.id}`;
    expect(await joins(grace.client.channel(graceTopic, privately()))).toBe(true);
    expect(await joins(ended.channel(graceTopic, privately()))).toBe(unauthorized(graceTopic));
  });
});

describe("presence and broadcast on a note", () => {
  test("readers share presence; no one may broadcast, only the database does", async () => {
    const [ada, grace] = await Promise.all([person(), person()]);
    const noteId = await noteOf(ada, grace);
    const topic = `note:${noteId}`;
    const options = (key: string) => privately({ presence: { key }, broadcast: { ack: true } });
    const adaChannel = ada.client.channel(topic, options(ada.id));
    const adaHeard = heard(adaChannel);
    adaChannel.on("presence", { event: "sync" }, () => {});
    const graceChannel = grace.client.channel(topic, options(grace.id));
    const graceHeard = heard(graceChannel);
    await Promise.all([joined(adaChannel), joined(graceChannel)]);

    expect(await graceChannel.track({ name: "Grace" })).toBe("ok");
    await expect
      .poll(() => adaChannel.presenceState<{ name: string }>()[grace.id]?.map((p) => p.name))
      .toEqual(["Grace"]);

    // Dropped, and not acknowledged (upstream answers a private broadcast its write policy refuses
    // with no reply at all): neither reader may write a broadcast.
    const refused = { type: "broadcast" as const, event: "note", payload: { x: 1 } };
    expect(await graceChannel.send(refused, { timeout: 1000 })).toBe("timed out");
    expect(await adaChannel.send({ ...refused, payload: { x: 2 } }, { timeout: 1000 })).toBe(
      "timed out",
    );
    // What the database says arrives (so the silence above is not a deaf channel).
    await ada.client.from("notes").update({ pinned: true }).eq("id", noteId);
    await expect.poll(() => graceHeard.map((m) => m.event)).toEqual(["note"]);
    expect(adaHeard.map((m) => m.event)).toEqual(["note"]);
    expect(graceHeard[0]?.payload).not.toHaveProperty("x");
  });
});

describe("what the database says", () => {
  /** A person's `user:` channel and a `note:` channel, each with what it heard. */
  async function listen(who: Person, topic: string) {
    const channel = who.client.channel(topic, privately());
    const got = heard(channel);
    await joined(channel);
    return got;
  }

  test("an edit: the note's page, the owner's lists and the recipient's, with ids only", async () => {
    const [ada, grace] = await Promise.all([person(), person()]);
    const noteId = await noteOf(ada, grace);
    const [adaList, graceList, page] = await Promise.all([
      listen(ada, `user:${ada.id}`),
      listen(grace, `user:${grace.id}`),
      listen(grace, `note:${noteId}`),
    ]);
    const edit = await ada.client
      .from("notes")
      .update({ title: "Edited title", body: "a new secret" })
      .eq("id", noteId);
    expect(edit.error).toBeNull();
    await expect.poll(() => [adaList.length, graceList.length, page.length]).toEqual([1, 1, 1]);
    expect(adaList[0]?.event).toBe("list");
    expect(graceList[0]?.event).toBe("list");
    expect(page[0]?.event).toBe("note");
    for (const message of [adaList[0], graceList[0], page[0]]) {
      // the note's id and the message's own id (realtime.send adds it): never the content
      expect(Object.keys(message?.payload ?? {}).sort()).toEqual(["id", "note_id"]);
      expect(message?.payload.note_id).toBe(noteId);
      expect(JSON.stringify(message)).not.toMatch(/secret|Edited/);
    }
  });

  test("new, tagged, shared, unshared, deleted: who hears of it", async () => {
    const [ada, grace, stranger] = await Promise.all([person(), person(), person()]);
    const [adaList, graceList, strangerList] = await Promise.all([
      listen(ada, `user:${ada.id}`),
      listen(grace, `user:${grace.id}`),
      listen(stranger, `user:${stranger.id}`),
    ]);
    const count = () => [adaList.length, graceList.length];

    const noteId = await noteOf(ada);
    await expect.poll(count).toEqual([1, 0]);

    // set_note_tags replacing tags: one message a statement, for the owner only
    const tagged = await ada.client.rpc("set_note_tags", {
      note_id: noteId,
      tag_names: ["one", "two", "three"],
    });
    expect(tagged.error).toBeNull();
    await expect.poll(count).toEqual([2, 0]);

    const page = await listen(ada, `note:${noteId}`);
    expect((await ada.client.rpc("share_note", { note_id: noteId, email: grace.email })).data).toBe(
      "shared",
    );
    await expect.poll(count).toEqual([2, 1]);
    await expect.poll(() => page.length).toBe(1);

    const unshared = await ada.client
      .from("note_shares")
      .delete({ count: "exact" })
      .match({ note_id: noteId, shared_with_email: grace.email });
    expect(unshared.count).toBe(1);
    await expect.poll(count).toEqual([2, 2]);
    await expect.poll(() => page.length).toBe(2);

    expect((await ada.client.rpc("share_note", { note_id: noteId, email: grace.email })).data).toBe(
      "shared",
    );
    await expect.poll(count).toEqual([2, 3]);
    // Deleting the note: the owner's list and the page; the recipient through the share's cascade.
    expect((await ada.client.from("notes").delete().eq("id", noteId)).error).toBeNull();
    await expect.poll(count).toEqual([3, 4]);
    await expect
      .poll(() => page.map((m) => m.event))
      .toEqual(["note", "note", "note", "note", "note"]);
    for (const message of [...adaList, ...graceList, ...page]) {
      expect(message.payload.note_id).toBe(noteId);
    }
    expect(strangerList).toEqual([]);
  });

  test("a new display name or username: the person's own lists topic hears `profile`, with their id only, and so do their readers'", async () => {
    const [ada, grace, stranger] = await Promise.all([person(), person(), person()]);
    const noteId = await noteOf(ada, grace);
    // a second note shared with Grace: she still hears one `profile` per change
    await noteOf(ada, grace);
    const [adaList, graceList, page, strangerList] = await Promise.all([
      listen(ada, `user:${ada.id}`),
      listen(grace, `user:${grace.id}`),
      listen(grace, `note:${noteId}`),
      listen(stranger, `user:${stranger.id}`),
    ]);
    // the app's profile form: the display name goes into the profile through the data API
    const rename = () =>
      ada.client.from("profiles").update({ display_name: "Ada Lovelace" }).eq("id", ada.id);
    expect((await rename()).error).toBeNull();
    await expect.poll(() => adaList.map((m) => m.event)).toEqual(["profile"]);
    expect(Object.keys(adaList[0]?.payload ?? {}).sort()).toEqual(["id", "user_id"]);
    expect(adaList[0]?.payload.user_id).toBe(ada.id);
    const username = await ada.client
      .from("profiles")
      .update({ username: `ada_${ada.id.slice(0, 8)}` })
      .eq("id", ada.id);
    expect(username.error).toBeNull();
    await expect.poll(() => adaList.length).toBe(2);
    // the same name again says nothing, nor does the user's metadata (never copied any more)
    expect((await rename()).error).toBeNull();
    expect(
      (await ada.client.auth.updateUser({ data: { display_name: "Someone else" } })).error,
    ).toBeNull();
    await ada.client.from("notes").update({ title: "Later" }).eq("id", noteId);
    await expect.poll(() => adaList.map((m) => m.event)).toEqual(["profile", "profile", "list"]);
    // Grace reads Ada's notes, whose cards say "Shared by" Ada's name: her lists re-read too
    await expect.poll(() => graceList.map((m) => m.event)).toEqual(["profile", "profile", "list"]);
    expect(graceList[0]?.payload.user_id).toBe(ada.id);
    expect(page.map((m) => m.event)).toEqual(["note"]);
    // Grace's own rename is hers alone: the owner of the notes she reads hears nothing
    await grace.client.from("profiles").update({ display_name: "Grace Hopper" }).eq("id", grace.id);
    await expect.poll(() => graceList.length).toBe(4);
    expect(adaList).toHaveLength(3);
    expect(strangerList).toEqual([]);
  });
});

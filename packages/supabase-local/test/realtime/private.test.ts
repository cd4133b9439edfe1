// Private channels, authorized by the project's RLS on realtime.messages with realtime.topic(), per
// extension, read and write apart; and broadcasts from the database (realtime.send(),
// realtime.broadcast_changes()) reaching subscribers after commit. A backend of its own: the
// policies and the sends are this file's.
import { fileURLToPath } from "node:url";
import { createClient, type RealtimeChannel, type SupabaseClient } from "@supabase/supabase-js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { QUICK_PASSWORD_HASH_COST } from "../../../../tests/support/backend.ts";
import { createLocalBackend, type LocalBackend } from "../../src/backend.ts";
import { noPersist, subscribed } from "./support.ts";

let backend: LocalBackend;
const clients: SupabaseClient[] = [];

beforeAll(async () => {
  backend = await createLocalBackend({
    projectDir: fileURLToPath(new URL("../../../../", import.meta.url)),
    port: 0,
    host: "127.0.0.1",
    seed: false,
    config: { auth: { passwordHashCost: QUICK_PASSWORD_HASH_COST } },
  });
  await backend.db.exec(`
    create policy "read open and read-only topics, and your own" on realtime.messages
      for select to authenticated
      using (realtime.topic() like 'open:%' or realtime.topic() like 'readonly:%'
             or realtime.topic() = 'user:' || auth.uid()::text);
    create policy "write open topics, and your own" on realtime.messages
      for insert to authenticated
      with check (realtime.topic() like 'open:%' or realtime.topic() = 'user:' || auth.uid()::text);
  `);
}, 60_000);
afterEach(async () => {
  for (const client of clients.splice(0)) await client.removeAllChannels();
});
afterAll(() => backend?.close());

async function user(): Promise<{ client: SupabaseClient; id: string }> {
  const client = createClient(backend.url, backend.keys.publishable, { auth: noPersist });
  clients.push(client);
  const email = `rt-${crypto.randomUUID()}@example.com`;
  const admin = createClient(backend.url, backend.keys.secret, { auth: noPersist });
  const created = await admin.auth.admin.createUser({
    email,
    password: "correct-horse-battery",
    email_confirm: true,
  });
  if (created.error) throw created.error;
  const { error } = await client.auth.signInWithPassword({
    email,
    password: "correct-horse-battery",
  });
  if (error) throw error;
  await client.realtime.setAuth();
  return { client, id: created.data.user.id };
}

describe("private channels", () => {
  it("join only when RLS lets the caller read the topic", async () => {
    const anon = createClient(backend.url, backend.keys.publishable, { auth: noPersist });
    clients.push(anon);
    const name = `open:${crypto.randomUUID()}`;
    await expect(subscribed(anon.channel(name, { config: { private: true } }))).rejects.toThrow(
      `Unauthorized: You do not have permissions to read from this Channel topic: ${name}`,
    );
    const { client, id } = await user();
    await subscribed(client.channel(name, { config: { private: true } }));
    await subscribed(client.channel(`user:${id}`, { config: { private: true } }));
    const other = await user();
    await expect(
      subscribed(other.client.channel(`user:${id}`, { config: { private: true } })),
    ).rejects.toThrow(/^Unauthorized: /);
  });

  it("broadcasts only with the write policy, and never to the public channel of the same name", async () => {
    const a = await user();
    const b = await user();
    const name = `open:${crypto.randomUUID()}`;
    const readonly = `readonly:${crypto.randomUUID()}`;
    const got: string[] = [];
    const listen = (client: SupabaseClient, topic: string, isPrivate: boolean, tag: string) =>
      client
        .channel(topic, { config: { private: isPrivate, broadcast: { ack: true } } })
        .on("broadcast", { event: "m" }, ({ payload }) => got.push(`${tag}:${payload.n}`));
    const aOpen = listen(a.client, name, true, "a-open");
    const bOpen = listen(b.client, name, true, "b-open");
    const publicOne = listen(
      createClient(backend.url, backend.keys.publishable, { auth: noPersist }),
      name,
      false,
      "public",
    );
    const aRead = listen(a.client, readonly, true, "a-read");
    const bRead = listen(b.client, readonly, true, "b-read");
    await Promise.all([aOpen, bOpen, publicOne, aRead, bRead].map(subscribed));
    expect(await aOpen.send({ type: "broadcast", event: "m", payload: { n: 1 } })).toBe("ok");
    // readers without the insert policy: dropped, not even acknowledged (upstream's noreply)
    expect(
      await aRead.send({ type: "broadcast", event: "m", payload: { n: 2 } }, { timeout: 300 }),
    ).toBe("timed out");
    await expect.poll(() => got).toEqual(["b-open:1"]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(got).toEqual(["b-open:1"]);
    await publicOne.unsubscribe();
  });
});

describe("presence on private channels", () => {
  it("needs the write policy to track, and the read policy to see others", async () => {
    const a = await user();
    const b = await user();
    const open = `open:${crypto.randomUUID()}`;
    const readonly = `readonly:${crypto.randomUUID()}`;
    const config = (key: string) => ({ config: { private: true, presence: { key } } });
    const aOpen = a.client.channel(open, config("a"));
    const bOpen = b.client.channel(open, config("b")).on("presence", { event: "sync" }, () => {});
    const bRead = b.client.channel(readonly, config("b"));
    await Promise.all([aOpen, bOpen, bRead].map(subscribed));
    expect(await aOpen.track({ name: "A" })).toBe("ok");
    await expect.poll(() => Object.keys(bOpen.presenceState())).toEqual(["a"]);
    // the readonly topic: no insert policy, so no track
    expect(await bRead.track({ name: "B" })).toBe("error");
  });
});

describe("a new token on a private channel", () => {
  it("that may no longer read the topic closes it with upstream's system message", async () => {
    const a = await user();
    const b = await user();
    const aToken = (await a.client.auth.getSession()).data.session?.access_token as string;
    const bToken = (await b.client.auth.getSession()).data.session?.access_token as string;
    const ws = new WebSocket(
      `${backend.url.replace("http", "ws")}/realtime/v1/websocket?apikey=${backend.keys.publishable}&vsn=2.0.0`,
    );
    const frames: unknown[] = [];
    ws.on("message", (data) => frames.push(JSON.parse(String(data))));
    await new Promise((resolve) => ws.once("open", resolve));
    try {
      const topic = `realtime:user:${a.id}`;
      const config = { private: true, broadcast: {}, presence: { enabled: false } };
      ws.send(JSON.stringify(["1", "1", topic, "phx_join", { config, access_token: aToken }]));
      await expect.poll(() => frames).toHaveLength(1);
      expect(frames[0]).toMatchObject(["1", "1", topic, "phx_reply", { status: "ok" }]);
      // the same user's new token keeps it open; another user's closes it
      ws.send(JSON.stringify(["1", "2", topic, "access_token", { access_token: bToken }]));
      await expect.poll(() => frames).toHaveLength(3);
      expect(frames.slice(1)).toEqual([
        [
          "1",
          null,
          topic,
          "system",
          {
            extension: "system",
            status: "error",
            message: `You do not have permissions to read from this Channel topic: user:${a.id}`,
            channel: `user:${a.id}`,
          },
        ],
        ["1", "1", topic, "phx_close", {}],
      ]);
    } finally {
      ws.terminate();
    }
  });
});

describe("broadcasts from the database", () => {
  it("realtime.send() reaches the topic's readers after commit, none after a rollback", async () => {
    const { client, id } = await user();
    const got: unknown[] = [];
    const channel = client
      .channel(`user:${id}`, { config: { private: true } })
      .on("broadcast", { event: "*" }, (message) => got.push(message));
    await subscribed(channel);
    await backend.db
      .transaction(async (tx) => {
        await tx.query("select realtime.send('{\"a\": 1}', 'rolled-back', $1)", [`user:${id}`]);
        await tx.rollback();
      })
      .catch(() => {});
    await backend.db.query("select realtime.send('{\"a\": 2}', 'changed', $1)", [`user:${id}`]);
    // a public send does not reach the private channel
    await backend.db.query("select realtime.send('{\"a\": 3}', 'public', $1, false)", [
      `user:${id}`,
    ]);
    // a last one: messages reach the channel in commit order, so once it is here, nothing before
    // it is still on its way
    await backend.db.query("select realtime.send('{}', 'last', $1)", [`user:${id}`]);
    await expect.poll(() => got.length).toBe(2);
    // upstream's user broadcast: the message's id in the payload and as `meta`
    const first = got[0] as { payload: { id: string }; meta: { id: string } };
    expect(first).toMatchObject({ type: "broadcast", event: "changed", payload: { a: 2 } });
    expect(first.meta).toEqual({ id: first.payload.id });
    expect(got[1]).toMatchObject({ event: "last" });
  });
});

describe("broadcasts over HTTP", () => {
  it("httpSend() answers 202 and reaches subscribers; private ones only with the write policy", async () => {
    const { client, id } = await user();
    const got: string[] = [];
    const mine = client
      .channel(`user:${id}`, { config: { private: true } })
      .on("broadcast", { event: "e" }, ({ payload }) => got.push(`mine:${payload.n}`));
    const open = client
      .channel(`open:${id}`)
      .on("broadcast", { event: "e" }, ({ payload }) => got.push(`public:${payload.n}`));
    await Promise.all([mine, open].map(subscribed));
    expect(await mine.httpSend("e", { n: 1 })).toEqual({ success: true });
    expect(await open.httpSend("e", { n: 2 })).toEqual({ success: true });
    // another user may not write to this user's topic: upstream's 403, and nothing goes out
    const other = await user();
    const theirs = other.client.channel(`user:${id}`, { config: { private: true } });
    await expect(theirs.httpSend("e", { n: 3 })).rejects.toThrow("Unauthorized");
    // the older form, which send() falls back to before a join
    const old = await fetch(`${backend.url}/realtime/v1/api/broadcast`, {
      method: "POST",
      headers: { apikey: backend.keys.publishable, "Content-Type": "application/json" },
      body: JSON.stringify({ messages: [{ topic: `open:${id}`, event: "e", payload: { n: 4 } }] }),
    });
    expect(old.status).toBe(202);
    await expect.poll(() => [...got].sort()).toEqual(["mine:1", "public:2", "public:4"]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(got).toHaveLength(3);
    // bad input: 400, never a 500; no key: the gateway's 401
    const bad = await fetch(`${backend.url}/realtime/v1/api/broadcast`, {
      method: "POST",
      headers: { apikey: backend.keys.publishable, "Content-Type": "application/json" },
      body: "{not json",
    });
    expect(bad.status).toBe(400);
    const noKey = await fetch(`${backend.url}/realtime/v1/api/broadcast`, { method: "POST" });
    expect(noKey.status).toBe(401);
  });
});

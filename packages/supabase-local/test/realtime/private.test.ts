// Private channels, authorized by the project's RLS on realtime.messages with realtime.topic(), per
// extension, read and write apart; and broadcasts from the database (realtime.send(),
// realtime.broadcast_changes()) reaching subscribers after commit. A backend of its own: the
// policies and the sends are this file's.
import { fileURLToPath } from "node:url";
import { createClient, type RealtimeChannel, type SupabaseClient } from "@supabase/supabase-js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { QUICK_PASSWORD_HASH_COST } from "../../../../tests/support/backend.ts";
import { createLocalBackend, type LocalBackend } from "../../src/backend.ts";
import { noPersist, rawSocket, subscribed } from "./support.ts";

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
    create policy "read presence-only topics' presence, and all of your own" on realtime.messages
      for select to authenticated
      using (realtime.topic() like 'presence-only:%'
             and (extension = 'presence' or realtime.topic() = 'presence-only:' || auth.uid()::text));
    create policy "write your own presence-only topic" on realtime.messages
      for insert to authenticated
      with check (realtime.topic() = 'presence-only:' || auth.uid()::text);
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

describe("a join's config, read as upstream reads it", () => {
  /** The replies of raw 2.0.0 joins, in order, as the anon key's socket gets them. */
  async function joinReplies(joins: Array<[string, unknown]>): Promise<unknown[]> {
    const { ws, frames } = await rawSocket<unknown[]>(backend.url, backend.keys.publishable);
    try {
      for (const [i, [topic, payload]] of joins.entries()) {
        ws.send(JSON.stringify([`${i}`, `${i}`, `realtime:${topic}`, "phx_join", payload]));
      }
      const replies = () => frames.filter((f) => f[3] === "phx_reply");
      await expect.poll(() => replies()).toHaveLength(joins.length);
      return replies().map((f) => f[4]);
    } finally {
      ws.terminate();
    }
  }

  it("private is a flexible boolean (true, false, or either as a string in any case), checked by RLS; what upstream's Access raises on is refused", async () => {
    // anon may read no topic here: every private join is refused
    const name = `open:${crypto.randomUUID()}`;
    const refused = {
      status: "error",
      response: {
        reason: `Unauthorized: You do not have permissions to read from this Channel topic: ${name}`,
      },
    };
    const joined = { status: "ok", response: { postgres_changes: [] } };
    // upstream's FlexibleBoolean: anything else is dropped for the default, false (public)
    const privates = [true, "true", "TRUE", "True"];
    const publics = [false, "false", "FALSE", 1, 0, "", "yes", {}, [], null];
    const replies = await joinReplies([
      ...privates.map((value): [string, unknown] => [name, { config: { private: value } }]),
      ...publics.map((value, i): [string, unknown] => [
        `${name}-${i}`,
        { config: { private: value } },
      ]),
    ]);
    expect(replies).toEqual([...privates.map(() => refused), ...publics.map(() => joined)]);
    // supabase-js passes the value through as given
    const anon = createClient(backend.url, backend.keys.publishable, { auth: noPersist });
    clients.push(anon);
    const config = { private: "true" } as unknown as { private: boolean };
    await expect(subscribed(anon.channel(name, { config }))).rejects.toThrow(/^Unauthorized: /);
    // upstream reads `config.broadcast.replication_ready` with Access, which raises on a config
    // or broadcast that is neither a map nor null: the join's rescue answers with its message
    const clause = "UnknownErrorOnChannel: no function clause matching in Access.get/3";
    const keywords = (key: string) =>
      `UnknownErrorOnChannel: the Access module supports only keyword lists (with atom keys), got: "${key}"\n\nIf you want to search lists of tuples, use List.keyfind/3`;
    const odd = await joinReplies([
      ["odd-1", { config: "not-a-map" }],
      ["odd-2", { config: 1 }],
      ["odd-3", { config: true }],
      ["odd-4", { config: [] }],
      ["odd-5", { config: { broadcast: "x" } }],
      ["odd-6", { config: { broadcast: [] } }],
      ["odd-7", { config: { presence: "x" } }],
      ["odd-8", { config: { presence: [1] } }],
      ["odd-9", { config: null }],
    ]);
    expect(odd).toEqual([
      ...[clause, clause, clause, keywords("broadcast"), clause, keywords("replication_ready")].map(
        (reason) => ({ status: "error", response: { reason } }),
      ),
      // presence is only read through the schema: not a map, it is dropped (presence off)
      joined,
      joined,
      joined,
    ]);
    // the join's checks come first: a private join the caller may not read is refused as such
    const [checked] = await joinReplies([[name, { config: { private: true, broadcast: "x" } }]]);
    expect(checked).toEqual(refused);
  });

  it("broadcast self and ack are flexible booleans too", async () => {
    const { ws, frames } = await rawSocket<unknown[]>(backend.url, backend.keys.publishable);
    try {
      const payload = { type: "broadcast", event: "m", payload: { n: 1 } };
      const off = `realtime:open:${crypto.randomUUID()}`;
      ws.send(
        JSON.stringify([
          "1",
          "1",
          off,
          "phx_join",
          { config: { broadcast: { self: 1, ack: "yes" } } },
        ]),
      );
      const on = `realtime:open:${crypto.randomUUID()}`;
      ws.send(
        JSON.stringify([
          "2",
          "2",
          on,
          "phx_join",
          { config: { broadcast: { self: "True", ack: "TRUE" } } },
        ]),
      );
      await expect.poll(() => frames).toHaveLength(2);
      ws.send(JSON.stringify(["1", "3", off, "broadcast", payload]));
      ws.send(JSON.stringify(["2", "4", on, "broadcast", payload]));
      // nothing for the first (no self, no ack); the second's to itself, then its ack
      await expect
        .poll(() => frames.slice(2).map((f) => [f[2], f[3]]))
        .toEqual([
          [on, "broadcast"],
          [on, "phx_reply"],
        ]);
    } finally {
      ws.terminate();
    }
  });

  it("replication_ready: the system message upstream sends once its change feed is up", async () => {
    const { ws, frames } = await rawSocket<unknown[]>(backend.url, backend.keys.publishable);
    try {
      const topic = `realtime:open:${crypto.randomUUID()}`;
      const config = { broadcast: { replication_ready: true }, presence: { enabled: false } };
      ws.send(JSON.stringify(["1", "1", topic, "phx_join", { config }]));
      await expect.poll(() => frames).toHaveLength(2);
      expect(frames[1]).toEqual([
        "1",
        null,
        topic,
        "system",
        {
          extension: "system",
          status: "ok",
          message: "Replication connection established",
          channel: topic.slice("realtime:".length),
        },
      ]);
    } finally {
      ws.terminate();
    }
  });
});

describe("what a policy sees of the authorization check", () => {
  it("the rows' private as the column default (false), the request's headers in request.headers", async () => {
    const name = `seen-${crypto.randomUUID()}`;
    const topic = `seen:${crypto.randomUUID()}`;
    // the socket's `x-` headers at the upgrade (upstream's x_headers), as a JSON object; an HTTP
    // broadcast's headers, all of them
    await backend.db.exec(`
      create policy "${name} read" on realtime.messages for select to anon
        using (realtime.topic() = '${topic}' and private is false
               and current_setting('request.headers', true)::jsonb
                 = '{"x-client-info": "realtime-test/1.0", "x-other": "b"}'::jsonb);
      create policy "${name} write" on realtime.messages for insert to anon
        with check (realtime.topic() = '${topic}' and private is false
               and current_setting('request.headers', true)::jsonb ->> 'x-http' = 'yes'
               and current_setting('request.headers', true)::jsonb ->> 'content-type'
                 = 'application/json');
    `);
    try {
      const { ws, frames } = await rawSocket<unknown[]>(backend.url, backend.keys.publishable, {
        headers: { "X-Client-Info": "realtime-test/1.0", "X-Other": "b", "User-Agent": "ua" },
      });
      try {
        const config = { private: true, presence: { enabled: true } };
        ws.send(JSON.stringify(["1", "1", `realtime:${topic}`, "phx_join", { config }]));
        await expect.poll(() => frames[0]?.[4]).toMatchObject({ status: "ok" });
      } finally {
        ws.terminate();
      }
      const send = (headers: Record<string, string>) =>
        fetch(
          `${backend.url}/realtime/v1/api/broadcast/${encodeURIComponent(topic)}/events/e?private=true`,
          {
            method: "POST",
            headers: { apikey: backend.keys.publishable, ...headers },
            body: "{}",
          },
        );
      expect((await send({ "Content-Type": "application/json", "X-Http": "yes" })).status).toBe(
        202,
      );
      expect((await send({ "Content-Type": "application/json" })).status).toBe(403);
    } finally {
      await backend.db.exec(`
        drop policy "${name} read" on realtime.messages;
        drop policy "${name} write" on realtime.messages;
      `);
    }
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

describe("the presence read right alone", () => {
  it("joins while presence is on, and gets presence but no broadcast", async () => {
    const a = await user();
    const b = await user();
    const name = `presence-only:${a.id}`;
    // presence off: presence's right is not asked, and broadcast's is missing
    const c = await user();
    await expect(subscribed(c.client.channel(name, { config: { private: true } }))).rejects.toThrow(
      `Unauthorized: You do not have permissions to read from this Channel topic: ${name}`,
    );
    const got: Record<string, string[]> = { a: [], b: [] };
    const listen = (who: "a" | "b", client: SupabaseClient) =>
      client
        .channel(name, { config: { private: true, presence: { key: who } } })
        .on("presence", { event: "sync" }, () => {})
        .on("broadcast", { event: "note" }, (m) => got[who]?.push(m.payload.text));
    const aChannel = listen("a", a.client);
    const bChannel = listen("b", b.client);
    await Promise.all([subscribed(aChannel), subscribed(bChannel)]);
    // Ada's own topic: she may write presence there, and Grace sees it
    expect(await aChannel.track({ name: "A" })).toBe("ok");
    await expect.poll(() => Object.keys(bChannel.presenceState())).toEqual(["a"]);
    // Grace reads an open topic too: sends reach a socket in order, so once the second is
    // there, a first one for her would have come before it
    const open = `open:${crypto.randomUUID()}`;
    const bOpen = b.client
      .channel(open, { config: { private: true } })
      .on("broadcast", { event: "note" }, (m) => got.b?.push(`open: ${m.payload.text}`));
    await subscribed(bOpen);
    await backend.db.query(
      "select realtime.send($1, 'note', $2, true), realtime.send($3, 'note', $4, true)",
      [{ text: "for readers" }, name, { text: "after" }, open],
    );
    await expect.poll(() => got.b).toEqual(["open: after"]);
    await expect.poll(() => got.a).toEqual(["for readers"]);
  });
});

describe("replay", () => {
  it("a private join replays the topic's stored broadcasts since a time; a public one may not", async () => {
    const a = await user();
    const token = (await a.client.auth.getSession()).data.session?.access_token as string;
    const name = `open:${crypto.randomUUID()}`;
    const since = Date.now() - 1000;
    for (const n of [1, 2, 3]) {
      await backend.db.query("select realtime.send($1, 'note', $2, true)", [{ n }, name]);
    }
    // a public send on the same name is no private channel's
    await backend.db.query("select realtime.send($1, 'note', $2, false)", [{ n: 9 }, name]);
    const { ws, frames } = await rawSocket<unknown[]>(backend.url, backend.keys.publishable);
    try {
      const join = (ref: string, config: Record<string, unknown>) =>
        ws.send(
          JSON.stringify([
            ref,
            ref,
            `realtime:${name}`,
            "phx_join",
            { config, access_token: token },
          ]),
        );
      join("1", { private: true, broadcast: { replay: { since, limit: 2 } } });
      await expect.poll(() => frames.length).toBe(3);
      expect(frames[0]).toMatchObject([
        "1",
        "1",
        `realtime:${name}`,
        "phx_reply",
        { status: "ok" },
      ]);
      // the last two, oldest first, as the channel pushes them (its join_ref, no ref)
      expect(frames.slice(1)).toEqual(
        [2, 3].map((n) => [
          "1",
          null,
          `realtime:${name}`,
          "broadcast",
          {
            type: "broadcast",
            event: "note",
            payload: { n, id: expect.any(String) },
            meta: { replayed: true, id: expect.any(String) },
          },
        ]),
      );
      const refused = async (ref: string, config: Record<string, unknown>, topic = name) => {
        ws.send(
          JSON.stringify([
            ref,
            ref,
            `realtime:${topic}`,
            "phx_join",
            { config, access_token: token },
          ]),
        );
        await expect.poll(() => frames.some((f) => f[1] === ref)).toBe(true);
        return (frames.find((f) => f[1] === ref)?.[4] as { response: { reason: string } }).response
          .reason;
      };
      const other = `open:${crypto.randomUUID()}`;
      expect(await refused("2", { broadcast: { replay: { since } } }, other)).toBe(
        "UnableToReplayMessages: Replay is not allowed for public channels",
      );
      expect(
        await refused("3", { private: true, broadcast: { replay: { since: "yesterday" } } }, other),
      ).toBe("UnableToReplayMessages: Replay params are not valid");
      expect(
        await refused(
          "4",
          { private: true, broadcast: { replay: { since } } },
          `user:${crypto.randomUUID()}`,
        ),
      ).toMatch(/^Unauthorized: You do not have permissions to read from this Channel topic: /);
    } finally {
      ws.terminate();
    }
  });
});

describe("a new token on a private channel", () => {
  /**
   * Ada joins `subTopic(ada's id)` with her token, then sends Grace's as the channel's new one:
   * the frames that answer it, and the sub-topic.
   */
  async function joinThenSwapToken(subTopic: (id: string) => string, config: object) {
    const a = await user();
    const b = await user();
    const aToken = (await a.client.auth.getSession()).data.session?.access_token as string;
    const bToken = (await b.client.auth.getSession()).data.session?.access_token as string;
    const { ws, frames } = await rawSocket(backend.url, backend.keys.publishable);
    try {
      const topic = `realtime:${subTopic(a.id)}`;
      ws.send(JSON.stringify(["1", "1", topic, "phx_join", { config, access_token: aToken }]));
      await expect.poll(() => frames.length).toBeGreaterThanOrEqual(1);
      expect(frames[0]).toMatchObject(["1", "1", topic, "phx_reply", { status: "ok" }]);
      const before = frames.length;
      ws.send(JSON.stringify(["1", "2", topic, "access_token", { access_token: bToken }]));
      await expect.poll(() => frames.length).toBe(before + 2);
      return { name: subTopic(a.id), answer: frames.slice(before) };
    } finally {
      ws.terminate();
    }
  }

  /** Upstream's shutdown: a system error with `message`, then phx_close. */
  const shutdown = (name: string, message: string) => [
    [
      "1",
      null,
      `realtime:${name}`,
      "system",
      { extension: "system", status: "error", message, channel: name },
    ],
    ["1", "1", `realtime:${name}`, "phx_close", {}],
  ];

  it("that loses one read right closes it, as upstream's check_read_permissions_revoked", async () => {
    // Ada reads her presence-only topic's broadcast and presence; Grace its presence alone
    const { name, answer } = await joinThenSwapToken((id) => `presence-only:${id}`, {
      private: true,
      broadcast: {},
      presence: { enabled: true, key: "a" },
    });
    expect(answer).toEqual(
      shutdown(name, `You no longer have permission to read from this Channel topic: ${name}`),
    );
  });

  it("that may no longer read the topic closes it with upstream's system message", async () => {
    const { name, answer } = await joinThenSwapToken((id) => `user:${id}`, {
      private: true,
      broadcast: {},
      presence: { enabled: false },
    });
    expect(answer).toEqual(
      shutdown(name, `You do not have permissions to read from this Channel topic: ${name}`),
    );
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

describe("broadcasts whose event is over a binary frame's 255 bytes", () => {
  it("are refused over HTTP, and never reach a 2.0.0 socket as a corrupted frame", async () => {
    const topic = `long-${crypto.randomUUID()}`;
    const sockets = await Promise.all(
      (["2.0.0", "1.0.0"] as const).map(async (vsn) => {
        const { ws, frames } = await rawSocket(backend.url, backend.keys.publishable, { vsn });
        const join = { config: {} };
        ws.send(
          JSON.stringify(
            vsn === "2.0.0"
              ? ["1", "1", `realtime:${topic}`, "phx_join", join]
              : {
                  join_ref: "1",
                  ref: "1",
                  topic: `realtime:${topic}`,
                  event: "phx_join",
                  payload: join,
                },
          ),
        );
        await expect.poll(() => frames).toHaveLength(1);
        frames.length = 0;
        return { ws, frames };
      }),
    );
    const [v2, v1] = sockets as [(typeof sockets)[0], (typeof sockets)[0]];
    try {
      const long = "e".repeat(300);
      const sent = await fetch(`${backend.url}/realtime/v1/api/broadcast/${topic}/events/${long}`, {
        method: "POST",
        headers: {
          apikey: backend.keys.publishable,
          "Content-Type": "application/octet-stream",
        },
        body: new Uint8Array([1, 2, 3]),
      });
      expect(sent.status).toBe(422);
      expect(await sent.json()).toEqual({
        errors: { event: ["must be less than or equal to 255 bytes"] },
      });
      // from the database: the JSON client gets it; the binary one cannot, and gets the next
      await backend.db.query("select realtime.send('{}', $1, $2, false)", [long, topic]);
      await backend.db.query("select realtime.send('{}', 'last', $1, false)", [topic]);
      await expect.poll(() => v1.frames).toHaveLength(2);
      expect(v1.frames.map((f) => (f as { payload: { event: string } }).payload.event)).toEqual([
        long,
        "last",
      ]);
      await expect.poll(() => v2.frames).toHaveLength(1);
      const frame = v2.frames[0] as Uint8Array;
      expect([frame[0], frame[1], frame[2]]).toEqual([4, `realtime:${topic}`.length, 4]);
    } finally {
      for (const { ws } of sockets) ws.terminate();
    }
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

// The tenant limits, each with upstream's answer: concurrent users (at the default, 200, while the
// HTTP APIs keep answering), joins per second, events per second, payload sizes (at the default,
// 3000 KB, and the socket's 5 MB frames), presence events and a client's presence calls. Limits
// that take seconds at their default are lowered, with a 100 ms tick instead of upstream's 5 s.
// The counters are a backend's: three backends on the worker's database, each test on topics
// of its own: one at upstream's defaults, one for joins, one for events and presence.
import { createClient } from "@supabase/supabase-js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { workerDatabase } from "../../../../tests/support/memory-backend.ts";
import { createLocalBackend, type LocalBackend } from "../../src/backend.ts";
import type { RealtimeSettings } from "../../src/project/config.ts";
import { noPersist, subscribed } from "./support.ts";

const backends: LocalBackend[] = [];
const sockets: WebSocket[] = [];
afterEach(() => {
  for (const ws of sockets.splice(0)) ws.terminate();
});
afterAll(async () => {
  for (const backend of backends.splice(0)) await backend.close();
});
let defaults: LocalBackend;
let joins: LocalBackend;
let lowered: LocalBackend;
beforeAll(async () => {
  [defaults, joins, lowered] = await Promise.all([
    backendWith(),
    backendWith({ maxJoinsPerSecond: 5, rateCounterTickMs: 100 }),
    backendWith({
      maxEventsPerSecond: 10,
      maxPresenceEventsPerSecond: 5,
      maxPayloadSizeInKb: 1,
      rateCounterTickMs: 100,
    }),
  ]);
}, 60_000);

async function backendWith(realtime: Partial<RealtimeSettings> = {}): Promise<LocalBackend> {
  const backend = await createLocalBackend({
    db: await workerDatabase(),
    port: 0,
    host: "127.0.0.1",
    config: { local: { realtime } },
  });
  backends.push(backend);
  return backend;
}

/** A raw 2.0.0 socket: every frame it gets, and how it closed. */
async function raw(backend: LocalBackend) {
  const ws = new WebSocket(
    `${backend.url.replace("http", "ws")}/realtime/v1/websocket?apikey=${backend.keys.publishable}&vsn=2.0.0`,
  );
  sockets.push(ws);
  const frames: unknown[][] = [];
  let closed: number | undefined;
  ws.on("message", (data) => frames.push(JSON.parse(String(data))));
  ws.on("close", (code) => {
    closed = code;
  });
  ws.on("error", () => {});
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  let refs = 0;
  return {
    ws,
    frames,
    closed: () => closed,
    join(topic: string, config: Record<string, unknown> = {}) {
      const ref = String(++refs);
      ws.send(JSON.stringify([ref, ref, `realtime:${topic}`, "phx_join", { config }]));
      return ref;
    },
    push(topic: string, joinRef: string, event: string, payload: unknown) {
      ws.send(JSON.stringify([joinRef, String(++refs), `realtime:${topic}`, event, payload]));
      return String(refs);
    },
    /** The reply to a ref, once it came. */
    async reply(ref: string) {
      let found: unknown[] | undefined;
      await expect
        .poll(() => (found = frames.find((f) => f[1] === ref && f[3] === "phx_reply")), {
          timeout: 5000,
        })
        .toBeDefined();
      return (found as unknown[])[4] as { status: string; response: unknown };
    },
  };
}

const systemError = (topic: string, message: string) => [
  expect.anything(),
  null,
  `realtime:${topic}`,
  "system",
  { extension: "system", status: "error", message, channel: topic },
];

describe("tenant limits", () => {
  it("200 concurrent users (the default): past them a join, then a connection, is refused; the APIs answer", async () => {
    const backend = defaults;
    // warm: the first data API request of a backend reads its schema
    await createClient(backend.url, backend.keys.publishable, { auth: noPersist })
      .from("notes")
      .select("id")
      .limit(1);
    // 201 sockets connect; 200 join a channel
    const [extra, ...users] = await Promise.all(Array.from({ length: 201 }, () => raw(backend)));
    const replies = await Promise.all(
      users.map((u) => u.reply(u.join(`users-${crypto.randomUUID()}`))),
    );
    expect(replies.every((r) => r.status === "ok")).toBe(true);
    // HTTP keeps answering with 200 sockets connected
    const started = performance.now();
    const [health, rest] = await Promise.all([
      fetch(`${backend.url}/auth/v1/health`, { headers: { apikey: backend.keys.publishable } }),
      createClient(backend.url, backend.keys.publishable, { auth: noPersist })
        .from("notes")
        .select("id")
        .limit(1),
    ]);
    expect(health.status).toBe(200);
    expect(rest.status).toBeLessThan(500);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(await extra?.reply(extra.join("one-too-many"))).toEqual({
      status: "error",
      response: { reason: "ConnectionRateLimitReached: Too many connected users" },
    });
    // a new connection is refused at the upgrade, as upstream's UserSocket.handle_error: 429
    const refused = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const ws = new WebSocket(
        `${backend.url.replace("http", "ws")}/realtime/v1/websocket?apikey=${backend.keys.publishable}&vsn=2.0.0`,
      );
      ws.on("open", () => reject(new Error("accepted")));
      ws.on("unexpected-response", (_req, res) => {
        let body = "";
        res.on("data", (chunk) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      ws.on("error", () => {});
    });
    expect(refused).toEqual({
      status: 429,
      body: JSON.stringify({ error: "Too many connected users" }),
    });
    // a counted socket may join more channels; one leaving makes room
    const first = users[0] as Awaited<ReturnType<typeof raw>>;
    expect((await first.reply(first.join("second-channel"))).status).toBe("ok");
    first.ws.terminate();
    await expect
      .poll(async () => {
        if (!extra) return undefined;
        return (await extra.reply(extra.join(`retry-${crypto.randomUUID()}`))).status;
      })
      .toBe("ok");
  });

  it("joins per second: over the limit the join is refused and the socket disconnected", async () => {
    const backend = joins;
    const client = await raw(backend);
    // joins go through until a tick of the counter sees them over the limit (5 in 1 s: one in 100 ms)
    let refused: { status: string; response: unknown } | undefined;
    let joined = 0;
    while (!refused && joined < 100) {
      const answer = await client.reply(client.join(`j${joined}`));
      if (answer.status === "ok") joined++;
      else refused = answer;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(joined).toBeGreaterThan(0);
    expect(refused).toEqual({
      status: "error",
      response: { reason: "ClientJoinRateLimitReached: Too many joins per second" },
    });
    await expect.poll(() => client.closed()).toBe(1000);
  });

  it("events per second, every delivery counted: over the limit a receiving channel shuts down", async () => {
    const backend = lowered;
    const topic = `events-${crypto.randomUUID()}`;
    const sender = await raw(backend);
    const receivers = await Promise.all([raw(backend), raw(backend)]);
    const senderRef = sender.join(topic);
    await sender.reply(senderRef);
    for (const r of receivers) await r.reply(r.join(topic));
    const deadline = Date.now() + 5000;
    const shut = () => receivers.every((r) => r.frames.some((f) => f[3] === "system"));
    while (!shut() && Date.now() < deadline) {
      sender.push(topic, senderRef, "broadcast", { type: "broadcast", event: "e", payload: {} });
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    for (const r of receivers) {
      const at = r.frames.findIndex((f) => f[3] === "system");
      expect(r.frames[at]).toEqual(systemError(topic, "Too many messages per second"));
      expect(r.frames[at + 1]?.[3]).toBe("phx_close");
    }
  });

  it("payloads: 3000 KB (the default) with ack answers upstream's error; frames over 5 MB end the socket", async () => {
    const backend = defaults;
    const client = await raw(backend);
    const topic = `payload-${crypto.randomUUID()}`;
    const ref = client.join(topic, { broadcast: { ack: true } });
    await client.reply(ref);
    const fits = client.push(topic, ref, "broadcast", {
      type: "broadcast",
      event: "e",
      payload: { x: "a".repeat(2_990_000) },
    });
    expect(await client.reply(fits)).toEqual({ status: "ok", response: {} });
    const over = client.push(topic, ref, "broadcast", {
      type: "broadcast",
      event: "e",
      payload: { x: "a".repeat(3_001_000) },
    });
    expect(await client.reply(over)).toEqual({
      status: "error",
      response: "payload_size_exceeded",
    });
    // the HTTP endpoints: upstream's changeset error
    const http = await fetch(`${backend.url}/realtime/v1/api/broadcast`, {
      method: "POST",
      headers: { apikey: backend.keys.publishable, "Content-Type": "application/json" },
      body: JSON.stringify({
        messages: [{ topic, event: "e", payload: { x: "a".repeat(3_001_000) } }],
      }),
    });
    expect(http.status).toBe(422);
    expect(await http.json()).toEqual({
      errors: { messages: [{ payload: ["Payload size exceeds tenant limit"] }] },
    });
    client.ws.send("x".repeat(5_000_001));
    await expect.poll(() => client.closed()).toBe(1009);
  });

  it("presence: a client's 5 calls per window (the default)", async () => {
    const backend = defaults;
    const client = await raw(backend);
    const topic = `presence-${crypto.randomUUID()}`;
    const ref = client.join(topic, { presence: { key: "me" } });
    await client.reply(ref);
    for (let i = 0; i < 5; i++) {
      const track = client.push(topic, ref, "presence", { event: "track", payload: { n: i } });
      expect((await client.reply(track)).status).toBe("ok");
    }
    client.push(topic, ref, "presence", { event: "track", payload: { n: 5 } });
    await expect
      .poll(() => client.frames.find((f) => f[3] === "system"))
      .toEqual(systemError(topic, "Client presence rate limit exceeded"));
  });

  it("presence events per second, diffs counted per receiver", async () => {
    const backend = lowered;
    const others = await Promise.all(Array.from({ length: 4 }, () => raw(backend)));
    const busy = `busy-${crypto.randomUUID()}`;
    const refs = others.map((o, i) => o.join(busy, { presence: { key: `k${i}` } }));
    await Promise.all(others.map((o, i) => o.reply(refs[i] as string)));
    for (const [i, o] of others.entries()) {
      o.push(busy, refs[i] as string, "presence", { event: "track", payload: { i } });
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
    const last = others[0] as Awaited<ReturnType<typeof raw>>;
    last.push(busy, refs[0] as string, "presence", { event: "track", payload: { again: true } });
    await expect
      .poll(() => last.frames.find((f) => f[3] === "system"))
      .toEqual(systemError(busy, "Too many presence messages per second"));
  });

  it("a track over the payload limit shuts the channel down; supabase-js sees the channel close", async () => {
    const backend = lowered;
    const client = createClient(backend.url, backend.keys.publishable, { auth: noPersist });
    const channel = client.channel(`big-track-${crypto.randomUUID()}`);
    const system: unknown[] = [];
    channel.on("system", {}, (m) => system.push(m));
    await subscribed(channel);
    // no reply comes: the channel shuts down instead
    void channel.track({ blob: "b".repeat(2000) }, { timeout: 1000 });
    await expect
      .poll(() => system)
      .toEqual([
        expect.objectContaining({ status: "error", message: "Track message size exceeded" }),
      ]);
    await client.removeAllChannels();
  });
});

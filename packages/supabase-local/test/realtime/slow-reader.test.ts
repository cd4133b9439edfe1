// A client that stops reading its socket while others broadcast to it: the server does not keep
// what it cannot deliver. Upstream's socket ends when a send blocks for ranch's `send_timeout`
// (30 s), and its transport and channel processes are killed past WEBSOCKET_MAX_HEAP_SIZE (50 MB
// of heap); here the socket ends past `maxBufferedBytes` unsent, or once a frame stays unwritten
// `sendTimeoutMs`. Both are options of the Realtime server, so each case runs a server of its own
// with small ones. The paused client's connection drops with no close frame (1006), what the
// server held for it never much past the cap, and its channel leaves (its presence with it); a
// client that reads, on the same topic and under the same load, gets every message and stays.
import type { Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { ownRealtime } from "./support.ts";

/** The tenant's message limits raised, so that the flood is delivered, not cut by them. */
const FLOOD_LIMITS = { maxEventsPerSecond: 100_000, maxBytesPerSecond: 1_000_000_000 };

const servers: Array<{ close: () => Promise<void> }> = [];
const sockets: WebSocket[] = [];
afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  for (const server of servers.splice(0)) await server.close();
});

/**
 * A raw 2.0.0 socket joined to `topic` (broadcasts to itself off), with presence under `presence`
 * (tracked) when given: the broadcasts it got, and the presence keys it saw leave.
 */
async function joined(url: string, topic: string, presence?: string) {
  const ws = new WebSocket(url);
  sockets.push(ws);
  let broadcasts = 0;
  let joinedOk = false;
  let closed: number | undefined;
  const left: string[] = [];
  ws.on("message", (data) => {
    const [, , , event, payload] = JSON.parse(String(data)) as [
      unknown,
      unknown,
      unknown,
      string,
      { status?: string; leaves?: Record<string, unknown> },
    ];
    if (event === "broadcast") broadcasts++;
    if (event === "phx_reply" && payload.status === "ok") joinedOk = true;
    if (event === "presence_diff") left.push(...Object.keys(payload.leaves ?? {}));
  });
  ws.on("close", (code) => {
    closed = code;
  });
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  const config = presence
    ? { broadcast: {}, presence: { key: presence, enabled: true } }
    : { broadcast: {} };
  ws.send(JSON.stringify(["1", "1", `realtime:${topic}`, "phx_join", { config }]));
  await expect.poll(() => joinedOk).toBe(true);
  if (presence) {
    ws.send(
      JSON.stringify([
        "1",
        "track",
        `realtime:${topic}`,
        "presence",
        { type: "presence", event: "track", payload: { who: presence } },
      ]),
    );
  }
  return {
    ws,
    broadcasts: () => broadcasts,
    closed: () => closed,
    left: () => left,
    /** Stops reading: the server's frames stay in the connection's buffers, then in its own. */
    pause: () => (ws as unknown as { _socket: Socket })._socket.pause(),
    resume: () => (ws as unknown as { _socket: Socket })._socket.resume(),
  };
}

/** `count` broadcasts of 64 KB from `sender` to its topic, the first `from` already sent. */
function flood(sender: WebSocket, topic: string, count: number, from = 0): void {
  const text = "x".repeat(64 * 1024);
  for (let i = from; i < from + count; i++) {
    sender.send(
      JSON.stringify([
        "1",
        String(i + 2),
        `realtime:${topic}`,
        "broadcast",
        { type: "broadcast", event: "flood", payload: { text } },
      ]),
    );
  }
}

describe("a client that stops reading", () => {
  it("is dropped once the server holds more than maxBufferedBytes for it; a reader is not", async () => {
    const cap = 1_000_000;
    const server = await ownRealtime(
      { maxBufferedBytes: cap, sendTimeoutMs: 60_000 },
      FLOOD_LIMITS,
    );
    servers.push(server);
    const topic = `slow-${crypto.randomUUID()}`;
    const slow = await joined(server.url, topic, "slow");
    const reader = await joined(server.url, topic, "reader");
    const sender = await joined(server.url, topic);
    // the most any socket of the server held unsent, as each frame was handed to it (a timer
    // would miss it: one read of the sender's connection can carry megabytes of broadcasts)
    let held = 0;
    for (const ws of server.connections()) {
      const send = ws.send.bind(ws);
      ws.send = ((...args: Parameters<typeof send>) => {
        send(...args);
        held = Math.max(held, ws.bufferedAmount);
      }) as typeof ws.send;
    }
    slow.pause();
    // 16 MB: more than the connection's buffers hold, on loopback a few MB. Sent 8 at a time, each
    // batch once the reader has the last: a reader this process starves (a loaded machine) must
    // not itself fall a megabyte behind
    for (let sent = 0; sent < 256; sent += 8) {
      flood(sender.ws, topic, 8, sent);
      await expect.poll(() => reader.broadcasts(), { timeout: 20_000 }).toBe(sent + 8);
    }
    // the cap, and at most the one frame that passed it (64 KB and its envelope)
    expect(held).toBeGreaterThan(0);
    expect(held).toBeLessThanOrEqual(cap + 70_000);
    slow.resume();
    await expect.poll(() => slow.closed(), { timeout: 5_000 }).toBe(1006);
    expect(slow.broadcasts()).toBeLessThan(256);
    // its channel left the topic: the reader saw its presence go
    await expect.poll(() => reader.left(), { timeout: 5_000 }).toContain("slow");
    expect(reader.left()).not.toContain("reader");
    expect(reader.closed()).toBeUndefined();
    expect(sender.closed()).toBeUndefined();
  }, 30_000);

  it("is dropped once a frame to it stays unwritten sendTimeoutMs", async () => {
    const server = await ownRealtime(
      { maxBufferedBytes: 1_000_000_000, sendTimeoutMs: 500 },
      FLOOD_LIMITS,
    );
    servers.push(server);
    const topic = `stalled-${crypto.randomUUID()}`;
    const slow = await joined(server.url, topic);
    const sender = await joined(server.url, topic);
    slow.pause();
    flood(sender.ws, topic, 256);
    // the frames wait, unwritten, past the send timeout
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    slow.resume();
    await expect.poll(() => slow.closed(), { timeout: 5_000 }).toBe(1006);
    expect(slow.broadcasts()).toBeLessThan(256);
    expect(sender.closed()).toBeUndefined();
  }, 30_000);
});

// Phoenix's idle timeout (the websocket transport's `:timeout`, 60 s upstream): a socket that sends
// no frame for that long is closed by the server with 1000, while one that heartbeats stays. The
// timeout is an option of the Realtime server, so this test runs one of its own with 400 ms,
// behind a plain HTTP server standing in for the gateway (the socket's token is taken as given).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { ownRealtime } from "./support.ts";

const TIMEOUT_MS = 400;
let server: Awaited<ReturnType<typeof ownRealtime>>;
let url: string;
const sockets: WebSocket[] = [];

beforeAll(async () => {
  server = await ownRealtime({ idleTimeoutMs: TIMEOUT_MS });
  url = server.url;
});

afterAll(async () => {
  for (const ws of sockets) ws.terminate();
  await server.close();
});

/** A raw socket joined to a topic of its own: how (and when) it was closed. */
async function joined() {
  const ws = new WebSocket(url);
  sockets.push(ws);
  const replies: unknown[] = [];
  let closed: { code: number; reason: string; at: number } | undefined;
  ws.on("message", (data) => replies.push(JSON.parse(String(data))));
  ws.on("close", (code, reason) => {
    closed = { code, reason: String(reason), at: Date.now() };
  });
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  // the client's last frame: the server hears it after this, so its silence starts no earlier
  const since = Date.now();
  ws.send(
    JSON.stringify(["1", "1", `realtime:idle-${crypto.randomUUID()}`, "phx_join", { config: {} }]),
  );
  await expect.poll(() => replies.length).toBeGreaterThan(0);
  return { ws, closed: () => closed, since };
}

describe("the idle timeout", () => {
  it("closes a socket that stays silent, with 1000; one that heartbeats stays open", async () => {
    const silent = await joined();
    const beating = await joined();
    let ref = 0;
    const heartbeat = setInterval(
      () => beating.ws.send(JSON.stringify([null, String(++ref), "phoenix", "heartbeat", {}])),
      TIMEOUT_MS / 4,
    );
    try {
      await expect
        .poll(() => silent.closed(), { timeout: TIMEOUT_MS * 5, interval: 20 })
        .toBeDefined();
      const closed = silent.closed() as NonNullable<ReturnType<typeof silent.closed>>;
      expect(closed).toMatchObject({ code: 1000, reason: "" });
      // not before the timeout, and not long after it (cowboy's last tick: a tenth more)
      expect(closed.at - silent.since).toBeGreaterThanOrEqual(TIMEOUT_MS - 2);
      expect(closed.at - silent.since).toBeLessThan(TIMEOUT_MS * 2);
      await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * 2));
      expect(beating.closed()).toBeUndefined();
      expect(beating.ws.readyState).toBe(WebSocket.OPEN);
    } finally {
      clearInterval(heartbeat);
    }
  });
});

// Phoenix's idle timeout (the websocket transport's `:timeout`, 60 s upstream): a socket that sends
// no frame for that long is closed by the server with 1000, while one that heartbeats stays. The
// timeout is an option of the Realtime server, so this test runs one of its own with 400 ms,
// behind a plain HTTP server standing in for the gateway (the socket's token is taken as given).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { decodeJwt, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { workerDatabase } from "../../../../tests/support/memory-backend.ts";
import { withContext } from "../../src/http/context.ts";
import type { Claims } from "../../src/http/jwt.ts";
import { upgradeRequest } from "../../src/http/upgrade.ts";
import { REALTIME_DEFAULTS } from "../../src/project/config.ts";
import { acceptedUpgrade, createRealtime } from "../../src/realtime/index.ts";

const TIMEOUT_MS = 400;
let server: Server;
let url: string;
const sockets: WebSocket[] = [];

beforeAll(async () => {
  const claims = async (token: string) => decodeJwt(token) as Claims;
  const realtime = createRealtime({
    db: await workerDatabase(),
    ownDatabase: false,
    limits: REALTIME_DEFAULTS,
    verify: claims,
    idleTimeoutMs: TIMEOUT_MS,
  });
  const token = await new SignJWT({ role: "anon" })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setExpirationTime("1h")
    .sign(new TextEncoder().encode("idle-test-secret-idle-test-secret"));
  const wss = new WebSocketServer({ noServer: true });
  server = createServer((_req, res) => res.writeHead(404).end());
  server.on("upgrade", async (req, socket, head) => {
    const request = withContext(upgradeRequest(req), {
      bearer: token,
      claims: () => claims(token),
      clientAddress: "127.0.0.1",
      forwarded: false,
    });
    const response = await realtime.websocket(request);
    const accept = acceptedUpgrade(request);
    if (!accept) {
      socket.end(`HTTP/1.1 ${response.status} Refused\r\ncontent-length: 0\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(req, socket, head, accept);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/realtime/v1/websocket?vsn=2.0.0`;
});

afterAll(async () => {
  for (const ws of sockets) ws.terminate();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
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

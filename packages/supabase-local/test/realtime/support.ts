// What the Realtime tests share: supabase-js clients of the shared test backend (their channels
// removed after each test), a channel's subscription as a promise, raw sockets, and a Realtime
// server of a test's own (for options the shared backend keeps at upstream's values).
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createClient, type RealtimeChannel, type SupabaseClient } from "@supabase/supabase-js";
import { decodeJwt, SignJWT } from "jose";
import { afterEach } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { BACKEND_URL, PUBLISHABLE_KEY } from "../../../../tests/support/backend.ts";
import { workerDatabase } from "../../../../tests/support/memory-backend.ts";
import { withContext } from "../../src/http/context.ts";
import type { Claims } from "../../src/http/jwt.ts";
import { upgradeRequest } from "../../src/http/upgrade.ts";
import { REALTIME_DEFAULTS, type RealtimeSettings } from "../../src/project/config.ts";
import { acceptedUpgrade, createRealtime, type RealtimeOptions } from "../../src/realtime/index.ts";

export const noPersist = {
  persistSession: false,
  autoRefreshToken: false,
  detectSessionInUrl: false,
};

/** A maker of anon clients (publishable key) speaking `vsn`; each test's clients leave after it. */
export function anonClients(): (vsn?: "1.0.0" | "2.0.0") => SupabaseClient {
  const clients: SupabaseClient[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.removeAllChannels();
  });
  return (vsn) => {
    const client = createClient(BACKEND_URL, PUBLISHABLE_KEY, {
      auth: noPersist,
      realtime: vsn ? { vsn } : {},
    });
    clients.push(client);
    return client;
  };
}

/** Resolves once the channel is SUBSCRIBED; rejects with the join's error otherwise. */
export function subscribed(channel: RealtimeChannel): Promise<void> {
  return new Promise((resolve, reject) => {
    channel.subscribe((status, error) => {
      if (status === "SUBSCRIBED") resolve();
      else if (status !== "CLOSED") reject(error ?? new Error(status));
    });
  });
}

/**
 * A raw socket to the Realtime of the backend at `url`, as the publishable key, open: every frame
 * it gets lands in `frames` (decoded JSON, or the bytes of a binary frame). `F` is what the test
 * reads the frames as (Phoenix's 2.0.0 arrays, say).
 */
export async function rawSocket<F = unknown>(
  url: string,
  publishableKey: string,
  options: { vsn?: string; headers?: Record<string, string> } = {},
): Promise<{ ws: WebSocket; frames: F[] }> {
  const ws = new WebSocket(
    `${url.replace("http", "ws")}/realtime/v1/websocket?apikey=${publishableKey}&vsn=${options.vsn ?? "2.0.0"}`,
    { headers: options.headers },
  );
  const frames: F[] = [];
  ws.on("message", (data, binary) =>
    frames.push((binary ? new Uint8Array(data as Buffer) : JSON.parse(String(data))) as F),
  );
  await new Promise((resolve) => ws.once("open", resolve));
  return { ws, frames };
}

/**
 * A Realtime server of the test's own with `options` (the idle timeout, the send limits) and tenant
 * `limits` over upstream's defaults, behind a
 * plain HTTP server standing in for the gateway: every socket is anon, its token taken as given.
 * Its `url` is the 2.0.0 socket's; `connections()` are the server's ends of the sockets still
 * open; `close()` ends every socket and the server.
 */
export async function ownRealtime(
  options: Pick<RealtimeOptions, "idleTimeoutMs" | "sendTimeoutMs" | "maxBufferedBytes">,
  limits: Partial<RealtimeSettings> = {},
): Promise<{ url: string; connections: () => WebSocket[]; close: () => Promise<void> }> {
  const claims = async (token: string) => decodeJwt(token) as Claims;
  const realtime = createRealtime({
    db: await workerDatabase(),
    ownDatabase: false,
    limits: { ...REALTIME_DEFAULTS, ...limits },
    verify: claims,
    ...options,
  });
  const token = await new SignJWT({ role: "anon" })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setExpirationTime("1h")
    .sign(new TextEncoder().encode("own-realtime-secret-own-realtime-secret"));
  const wss = new WebSocketServer({ noServer: true });
  const server = createServer((_req, res) => res.writeHead(404).end());
  server.on("upgrade", async (req, socket, head) => {
    const request = withContext(upgradeRequest(req), {
      bearer: token,
      keyJwt: token,
      claims: () => claims(token),
      clientAddress: "127.0.0.1",
      forwarded: false,
      elsewhere: false,
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
  const { port } = server.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}/realtime/v1/websocket?vsn=2.0.0`,
    connections: () => [...wss.clients].filter((ws) => ws.readyState === WebSocket.OPEN),
    async close() {
      for (const ws of wss.clients) ws.terminate();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

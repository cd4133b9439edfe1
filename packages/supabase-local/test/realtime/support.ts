// What the Realtime tests share: supabase-js clients of the shared test backend (their channels
// removed after each test), a channel's subscription as a promise, and raw sockets.
import { createClient, type RealtimeChannel, type SupabaseClient } from "@supabase/supabase-js";
import { afterEach } from "vitest";
import { WebSocket } from "ws";
import { BACKEND_URL, PUBLISHABLE_KEY } from "../../../../tests/support/backend.ts";

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

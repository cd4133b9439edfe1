// What the Realtime tests share: supabase-js clients of the shared test backend (their channels
// removed after each test) and a channel's subscription as a promise.
import { createClient, type RealtimeChannel, type SupabaseClient } from "@supabase/supabase-js";
import { afterEach } from "vitest";
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

// A session's refreshed tokens reaching Realtime, through the real supabase-js client of a backend
// whose access tokens live 6 seconds: every token is inside supabase-js's refresh margin (90 s), so
// each heartbeat (every second here) refreshes the session and realtime-js sends the new token as
// `access_token`. A private channel stays joined across its join token's expiry and keeps
// receiving; when the session's refresh fails (it ended elsewhere), the channel's last token
// expires and upstream's system message closes it (realtime-js does not rejoin). A backend of its
// own: the token lifetime and the policy are this file's.
import { fileURLToPath } from "node:url";
import { createClient, type RealtimeChannel, type SupabaseClient } from "@supabase/supabase-js";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, type ExpectStatic, it } from "vitest";
import { QUICK_PASSWORD_HASH_COST, TEST_RATE_LIMITS } from "../../../../tests/support/backend.ts";
import { createLocalBackend, type LocalBackend } from "../../src/backend.ts";
import { noPersist } from "./support.ts";

const JWT_EXPIRY = 6;

let backend: LocalBackend;
const clients: SupabaseClient[] = [];

beforeAll(async () => {
  backend = await createLocalBackend({
    projectDir: fileURLToPath(new URL("../../../../", import.meta.url)),
    port: 0,
    host: "127.0.0.1",
    seed: false,
    config: {
      auth: {
        passwordHashCost: QUICK_PASSWORD_HASH_COST,
        jwtExpiry: JWT_EXPIRY,
        rateLimit: TEST_RATE_LIMITS,
      },
    },
  });
  await backend.db.exec(`
    create policy "read your own topic" on realtime.messages for select to authenticated
      using (realtime.topic() = 'user:' || auth.uid()::text);
  `);
}, 60_000);
// the tests run at once: their clients go after both
afterAll(async () => {
  for (const client of clients) {
    await client.auth.stopAutoRefresh();
    await client.removeAllChannels();
  }
  await backend?.close();
});

type Frame = [string | null, string | null, string, string, Record<string, unknown>];

/** A signed-in user whose client refreshes its session, and the text frames its socket sent. */
async function user() {
  const sent: Frame[] = [];
  class Recording extends WebSocket {
    override send(data: Parameters<WebSocket["send"]>[0]): void {
      if (typeof data === "string") sent.push(JSON.parse(data) as Frame);
      super.send(data);
    }
  }
  const client = createClient(backend.url, backend.keys.publishable, {
    auth: { ...noPersist, autoRefreshToken: true },
    realtime: { heartbeatIntervalMs: 1000, transport: Recording },
  });
  clients.push(client);
  const email = `rt-${crypto.randomUUID()}@example.com`;
  const admin = createClient(backend.url, backend.keys.secret, { auth: noPersist });
  const created = await admin.auth.admin.createUser({
    email,
    password: "correct-horse-battery",
    email_confirm: true,
  });
  if (created.error) throw created.error;
  const signedIn = await client.auth.signInWithPassword({
    email,
    password: "correct-horse-battery",
  });
  if (signedIn.error) throw signedIn.error;
  return { client, admin, id: created.data.user.id, sent };
}

/** The user's private topic, with every status, system message and `ping` broadcast it gets. */
async function listen(expect: ExpectStatic, client: SupabaseClient, id: string) {
  const statuses: string[] = [];
  const systems: Array<Record<string, unknown>> = [];
  const pings: number[] = [];
  const channel: RealtimeChannel = client
    .channel(`user:${id}`, { config: { private: true } })
    .on("broadcast", { event: "ping" }, ({ payload }) => pings.push(payload.n))
    .on("system", {}, (message) => systems.push(message));
  const closedAt: number[] = [];
  await new Promise<void>((resolve) => {
    channel.subscribe((status) => {
      statuses.push(status);
      if (status === "CLOSED") closedAt.push(Date.now());
      if (status === "SUBSCRIBED") resolve();
    });
  });
  expect(statuses).toEqual(["SUBSCRIBED"]);
  return { channel, statuses, systems, pings, closedAt };
}

function ping(id: string, n: number) {
  return backend.db.query("select realtime.send($1, 'ping', $2)", [{ n }, `user:${id}`]);
}

/** The `access_token` values a socket sent on a topic (its join's first). */
function tokensSent(sent: Frame[], topic: string): string[] {
  return sent
    .filter(([, , t, event]) => t === topic && (event === "phx_join" || event === "access_token"))
    .map(([, , , , payload]) => String(payload.access_token));
}

/** Until the clock is past a token's expiry by a second (the server re-checks at expiry). */
async function pastExpiry(token: string) {
  const exp = decodeJwt(token).exp as number;
  await new Promise((resolve) => setTimeout(resolve, exp * 1000 + 1000 - Date.now()));
}

describe.concurrent("a session's tokens on a private channel", () => {
  it("reach Realtime as they are refreshed, and the channel keeps receiving across expiry", async ({
    expect,
  }) => {
    const { client, id, sent } = await user();
    const { channel, statuses, systems, pings } = await listen(expect, client, id);
    const topic = `realtime:user:${id}`;
    const [joinToken] = tokensSent(sent, topic);
    expect(decodeJwt(joinToken as string).sub).toBe(id);
    await ping(id, 1);
    await expect.poll(() => pings).toEqual([1]);
    await pastExpiry(joinToken as string);
    await ping(id, 2);
    await expect.poll(() => pings).toEqual([1, 2]);
    // the refreshed tokens went out as `access_token` messages, each the same user's, newer ones
    const refreshed = tokensSent(sent, topic).slice(1);
    expect(refreshed.length).toBeGreaterThan(0);
    for (const token of refreshed) {
      expect(token).not.toBe(joinToken);
      expect(decodeJwt(token).sub).toBe(id);
    }
    expect(decodeJwt(refreshed.at(-1) as string).exp).toBeGreaterThan(
      decodeJwt(joinToken as string).exp as number,
    );
    // never shut down, never rejoined
    expect(statuses).toEqual(["SUBSCRIBED"]);
    expect(systems).toEqual([]);
    expect(channel.state).toBe("joined");
    expect(sent.filter(([, , t, event]) => t === topic && event === "phx_join")).toHaveLength(1);
  });

  it("whose refresh fails: the channel closes at its last token's expiry with upstream's system message", async ({
    expect,
  }) => {
    const { client, admin, id, sent } = await user();
    const { channel, statuses, systems, closedAt } = await listen(expect, client, id);
    const topic = `realtime:user:${id}`;
    // the session ends elsewhere: its refresh tokens are revoked, so refreshing fails; supabase-js
    // keeps the session while its access token lasts, and realtime-js the channel's token
    const { data } = await client.auth.getSession();
    const signedOut = await admin.auth.admin.signOut(
      data.session?.access_token as string,
      "global",
    );
    expect(signedOut.error).toBeNull();
    const userTokens = () => tokensSent(sent, topic).filter((t) => !t.startsWith("sb_"));
    // the channel lives on with the last user token until that expires, then: upstream's system
    // message, phx_close, and realtime-js's CLOSED (it does not rejoin)
    await expect
      .poll(() => statuses, { timeout: (JWT_EXPIRY + 3) * 1000 })
      .toEqual(["SUBSCRIBED", "CLOSED"]);
    expect(systems).toEqual([
      {
        extension: "system",
        status: "error",
        message: expect.stringMatching(/^Token has expired \d+ seconds ago$/),
        channel: `user:${id}`,
      },
    ]);
    const lastToken = userTokens().at(-1) as string;
    expect(closedAt[0]).toBeGreaterThanOrEqual((decodeJwt(lastToken).exp as number) * 1000);
    expect(channel.state).toBe("closed");
  });
});

// Realtime's socket through @supabase/supabase-js (Node's WebSocket) and, where the client hides
// the wire, a raw `ws`: both serializers, heartbeats, joins and their errors, public broadcasts
// (binary frames from the default client, `self`, `ack`), tokens, and the upgrade's rules.
import { once } from "node:events";
import { createClient, type RealtimeChannel, type SupabaseClient } from "@supabase/supabase-js";
import { decodeJwt, generateKeyPair, SignJWT } from "jose";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import {
  BACKEND_URL,
  PUBLISHABLE_KEY,
  SECRET_KEY,
  SERVICE_ROLE_KEY,
  signedInClient,
} from "../../../../tests/support/backend.ts";
import { KEYS } from "../../src/index.ts";
import { anonClients, noPersist, subscribed } from "./support.ts";

const WS_URL = `${BACKEND_URL.replace("http", "ws")}/realtime/v1/websocket`;
const CHROME =
  "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36";

const client = anonClients();
const sockets: WebSocket[] = [];
afterEach(() => {
  for (const ws of sockets.splice(0)) ws.terminate();
});

function topic() {
  return `room-${crypto.randomUUID()}`;
}

/** A raw socket that collects every frame it gets. Its joins carry `config`, as realtime-js's do:
 * without it a join is the legacy postgres_changes form (postgres-changes.test.ts). */
async function raw(
  query = `apikey=${PUBLISHABLE_KEY}&vsn=2.0.0`,
  headers?: Record<string, string>,
) {
  const ws = new WebSocket(`${WS_URL}?${query}`, { headers });
  sockets.push(ws);
  const frames: unknown[] = [];
  const waiters: Array<() => void> = [];
  ws.on("message", (data, binary) => {
    frames.push(binary ? new Uint8Array(data as Buffer) : JSON.parse(String(data)));
    for (const wake of waiters.splice(0)) wake();
  });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const next = async (waitMs = 5000): Promise<unknown> => {
    const deadline = Date.now() + waitMs;
    while (frames.length === 0) {
      if (Date.now() > deadline) throw new Error("no frame");
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
    return frames.shift();
  };
  return { ws, next, send: (value: unknown) => ws.send(JSON.stringify(value)) };
}

/** The upgrade's HTTP answer when it is refused. */
function refusal(url: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
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
}

function jwt(claims: Record<string, unknown>, exp: number | undefined) {
  const signer = new SignJWT(claims).setProtectedHeader({ alg: "HS256", typ: "JWT" });
  if (exp !== undefined) signer.setExpirationTime(exp);
  return signer.sign(new TextEncoder().encode(KEYS.jwtSecret));
}

describe("the socket", () => {
  it("joins public channels with supabase-js, on both serializers", async () => {
    for (const vsn of ["1.0.0", "2.0.0"] as const) {
      const channel = client(vsn).channel(topic());
      await subscribed(channel);
      expect(channel.state).toBe("joined");
    }
  });

  it("answers heartbeats, and joins with upstream's reply", async () => {
    const socket = await raw();
    socket.send([null, "1", "phoenix", "heartbeat", {}]);
    expect(await socket.next()).toEqual([
      null,
      "1",
      "phoenix",
      "phx_reply",
      { status: "ok", response: {} },
    ]);
    const name = topic();
    socket.send([
      "2",
      "2",
      `realtime:${name}`,
      "phx_join",
      { config: { broadcast: {} }, access_token: PUBLISHABLE_KEY },
    ]);
    expect(await socket.next()).toEqual([
      "2",
      "2",
      `realtime:${name}`,
      "phx_reply",
      { status: "ok", response: { postgres_changes: [] } },
    ]);
    // leave: the reply, then phx_close
    socket.send(["2", "3", `realtime:${name}`, "phx_leave", {}]);
    expect(await socket.next()).toEqual([
      "2",
      "3",
      `realtime:${name}`,
      "phx_reply",
      { status: "ok", response: {} },
    ]);
    expect(await socket.next()).toEqual(["2", "2", `realtime:${name}`, "phx_close", {}]);
  });

  it("speaks 1.0.0 as JSON objects of four fields, no join_ref (Phoenix's V1 serializer)", async () => {
    const ws = new WebSocket(`${WS_URL}?apikey=${PUBLISHABLE_KEY}&vsn=1.0.0`);
    sockets.push(ws);
    await once(ws, "open");
    ws.send(
      JSON.stringify({
        topic: "phoenix",
        event: "heartbeat",
        payload: {},
        ref: "7",
        join_ref: null,
      }),
    );
    const [data] = await once(ws, "message");
    expect(String(data)).toBe(
      '{"event":"phx_reply","payload":{"status":"ok","response":{}},"ref":"7","topic":"phoenix"}',
    );
  });

  it("gives unknown topics and events upstream's answers, and drops a frame it cannot read, the socket going on", async () => {
    const socket = await raw();
    socket.send([
      null,
      "1",
      "realtime:nowhere",
      "broadcast",
      { type: "broadcast", event: "x", payload: {} },
    ]);
    expect(await socket.next()).toEqual([
      null,
      "1",
      "realtime:nowhere",
      "phx_reply",
      { status: "error", response: { reason: "unmatched topic" } },
    ]);
    socket.send(["2", "2", "lobby", "phx_join", {}]);
    expect(await socket.next()).toEqual([
      "2",
      "2",
      "lobby",
      "phx_reply",
      { status: "error", response: { reason: "unmatched topic" } },
    ]);
    socket.send(["3", "3", "realtime:", "phx_join", {}]);
    expect(await socket.next()).toMatchObject([
      "3",
      "3",
      "realtime:",
      "phx_reply",
      { status: "error", response: { reason: "TopicNameRequired: You must provide a topic name" } },
    ]);
    // an unknown event on a joined channel is dropped; the socket goes on
    const name = `realtime:${topic()}`;
    socket.send(["4", "4", name, "phx_join", { config: {} }]);
    expect(await socket.next()).toMatchObject(["4", "4", name, "phx_reply", { status: "ok" }]);
    socket.send(["4", "5", name, "no_such_event", {}]);
    socket.send([null, "6", "phoenix", "heartbeat", {}]);
    expect(await socket.next()).toMatchObject([
      null,
      "6",
      "phoenix",
      "phx_reply",
      { status: "ok" },
    ]);
    // not JSON, a wrong shape, JSON nested too deep to be passed on, a binary frame of an unknown
    // kind: each is dropped and the socket goes on (upstream logs MalformedWebSocketMessage)
    const deep = `${'{"a":'.repeat(20_000)}1${"}".repeat(20_000)}`;
    let ref = 7;
    for (const frame of [
      "{not json",
      JSON.stringify({ topic: "x" }),
      `[null, "7", "realtime:x", "broadcast", ${deep}]`,
      new Uint8Array([9, 0, 0]),
    ]) {
      socket.ws.send(frame);
      const heartbeat = String(++ref);
      socket.send([null, heartbeat, "phoenix", "heartbeat", {}]);
      expect(await socket.next()).toMatchObject([
        null,
        heartbeat,
        "phoenix",
        "phx_reply",
        { status: "ok" },
      ]);
    }
    expect(socket.ws.readyState).toBe(WebSocket.OPEN);
  });

  it("takes a postgres_changes binding nested thousands deep as any other, and a track payload of null as no map", async () => {
    const socket = await raw();
    const nested = `${"[".repeat(4000)}${"]".repeat(4000)}`;
    const name = `realtime:${topic()}`;
    // a binding of a table that is not published, then one with no schema or table: each
    // answered in upstream's words, the socket open
    const bindings = `[{"event":"*","schema":"public","table":"nowhere","extra":${nested}}]`;
    socket.ws.send(
      `["1","1",${JSON.stringify(name)},"phx_join",{"config":{"postgres_changes":${bindings}}}]`,
    );
    const reply = (await socket.next()) as [string, string, string, string, { status: string }];
    expect(reply.slice(0, 4)).toEqual(["1", "1", name, "phx_reply"]);
    expect(reply[4].status).toBe("ok");
    expect(await socket.next()).toMatchObject([
      "1",
      null,
      name,
      "system",
      {
        extension: "postgres_changes",
        status: "error",
        message: expect.stringMatching(/^Unable to subscribe to changes with given parameters/),
      },
    ]);
    socket.send(["1", "2", name, "phx_leave", {}]);
    expect(await socket.next()).toMatchObject(["1", "2", name, "phx_reply", { status: "ok" }]);
    expect(await socket.next()).toEqual(["1", "1", name, "phx_close", {}]);
    const other = `realtime:${topic()}`;
    socket.ws.send(
      `["3","3",${JSON.stringify(other)},"phx_join",{"config":{"postgres_changes":[{"extra":${nested}}]}}]`,
    );
    expect(await socket.next()).toMatchObject(["3", "3", other, "phx_reply", { status: "ok" }]);
    const refused = (await socket.next()) as unknown[];
    expect(refused).toMatchObject(["3", null, other, "system", { status: "error" }]);
    expect((refused[4] as { message: string }).message).toMatch(
      /^No subscription params provided\. Please provide at least a `schema` or `table` to subscribe to: %\{"extra" => \[\[\[/,
    );
    // upstream's Map.get(payload, "payload", %{}): a null payload is there, and no map
    socket.send(["3", "4", other, "presence", { type: "presence", event: "track", payload: null }]);
    expect(await socket.next()).toEqual([
      "3",
      "4",
      other,
      "phx_reply",
      { status: "error", response: { reason: "Presence track payload must be a map" } },
    ]);
  });

  it("refuses joins whose token does not do, with upstream's reasons", async () => {
    const socket = await raw();
    const cases: Array<[string, string]> = [
      [
        await jwt({ role: "anon" }, Math.floor(Date.now() / 1000) - 30),
        "InvalidJWTToken: Token has expired 30 seconds ago",
      ],
      [
        await jwt({ role: "anon" }, undefined),
        "InvalidJWTToken: Fields `role` and `exp` are required in JWT",
      ],
      [
        await jwt({ sub: "x" }, Math.floor(Date.now() / 1000) + 60),
        "InvalidJWTToken: Fields `role` and `exp` are required in JWT",
      ],
      [
        `${PUBLISHABLE_KEY.slice(0, 0)}${SERVICE_ROLE_KEY.slice(0, -3)}abc`,
        "JwtSignatureError: Failed to validate JWT signature",
      ],
      ["not-a-jwt", "MalformedJWT: The token provided is not a valid JWT"],
    ];
    for (const [i, [token, reason]] of cases.entries()) {
      const name = `realtime:${topic()}`;
      socket.send([String(i), String(i), name, "phx_join", { access_token: token }]);
      const reply = (await socket.next()) as unknown[];
      expect(reply[4]).toMatchObject({ status: "error", response: { reason: expect.any(String) } });
      const got = (reply[4] as { response: { reason: string } }).response.reason;
      if (reason.includes("seconds ago"))
        expect(got).toMatch(/^InvalidJWTToken: Token has expired 3[01] seconds ago$/);
      else expect(got).toBe(reason);
    }
  });

  it("takes the tokens upstream's JwtVerification takes, and names a signing key it cannot find", async () => {
    const secret = new TextEncoder().encode(KEYS.jwtSecret);
    const inAMinute = Math.floor(Date.now() / 1000) + 60;
    const signed = (alg: string, claims: Record<string, unknown>) =>
      new SignJWT({ role: "anon", exp: inAMinute, ...claims })
        .setProtectedHeader({ alg, typ: "JWT" })
        .sign(secret);
    const { privateKey } = await generateKeyPair("ES256");
    const foreign = (header: Record<string, unknown>) =>
      new SignJWT({ role: "anon", exp: inAMinute })
        .setProtectedHeader({ alg: "ES256", ...header })
        .sign(privateKey);
    const socket = await raw();
    const cases: Array<[string, string | null]> = [
      // HS384 and HS512 with the JWT secret, as HS256
      [await signed("HS384", {}), null],
      [await signed("HS512", {}), null],
      // Joken checks exp and iat only: a not-yet-valid nbf joins
      [await signed("HS256", { nbf: inAMinute }), null],
      // a fractional exp is rounded, not refused
      [await signed("HS256", { exp: inAMinute + 0.5 }), null],
      // whitespace inside the token is taken out first (clean_token)
      [(await signed("HS256", {})).replace(".", ".\n "), null],
      [
        await foreign({ kid: "not-a-project-key" }),
        'JwtSignerError: Failed to generate JWT signer for key ID (kid) "not-a-project-key", check your JWT secret or JWKS configuration',
      ],
      [
        await foreign({}),
        "JwtSignerError: Failed to generate JWT signer, check your JWT secret or JWKS configuration",
      ],
      // an algorithm none of upstream's signers takes names no key, whatever the kid
      ...["PS256", "none", "constructor"].map((alg): [string, string] => [
        [{ alg, kid: "k" }, { role: "anon", exp: inAMinute }, "c2ln"]
          .map((part) =>
            typeof part === "string"
              ? part
              : Buffer.from(JSON.stringify(part)).toString("base64url"),
          )
          .join("."),
        "JwtSignerError: Failed to generate JWT signer, check your JWT secret or JWKS configuration",
      ]),
      [
        await signed("HS256", { iat: "yesterday" }),
        "MalformedJWT: The token provided is not a valid JWT",
      ],
    ];
    for (const [i, [token, reason]] of cases.entries()) {
      const payload = { config: { broadcast: {} }, access_token: token };
      socket.send([String(i), String(i), `realtime:${topic()}`, "phx_join", payload]);
      const reply = (await socket.next()) as unknown[];
      if (reason === null) expect(reply[4], `case ${i}`).toMatchObject({ status: "ok" });
      else expect(reply[4], `case ${i}`).toMatchObject({ status: "error", response: { reason } });
    }
  });

  it("reads the join's user_token before its access_token, as upstream's assign_access_token", async () => {
    const socket = await raw();
    const now = Math.floor(Date.now() / 1000);
    const good = await jwt({ role: "anon" }, now + 60);
    const expired = await jwt({ role: "anon" }, now - 30);
    const join = (ref: string, payload: Record<string, unknown>) =>
      socket.send([ref, ref, `realtime:${topic()}`, "phx_join", { config: {}, ...payload }]);
    join("1", { access_token: good, user_token: expired });
    expect(await socket.next()).toMatchObject([
      "1",
      "1",
      expect.any(String),
      "phx_reply",
      {
        status: "error",
        response: { reason: expect.stringMatching(/^InvalidJWTToken: Token has expired/) },
      },
    ]);
    join("2", { access_token: expired, user_token: good });
    expect(await socket.next()).toMatchObject([
      "2",
      "2",
      expect.any(String),
      "phx_reply",
      { status: "ok" },
    ]);
    // an `sb_` key in access_token means the socket's own token, whatever user_token holds
    join("3", { access_token: PUBLISHABLE_KEY, user_token: expired });
    expect(await socket.next()).toMatchObject([
      "3",
      "3",
      expect.any(String),
      "phx_reply",
      { status: "ok" },
    ]);
  });

  it("takes the socket's token from its API key, never from Authorization, as upstream", async () => {
    const now = Math.floor(Date.now() / 1000);
    const expired = await jwt({ role: "anon" }, now - 30);
    const userToken = await jwt({ role: "authenticated", sub: crypto.randomUUID() }, now + 60);
    // an expired bearer does not refuse the socket: its key's token is the one that counts
    const socket = await raw(`apikey=${PUBLISHABLE_KEY}&vsn=2.0.0`, {
      authorization: `Bearer ${expired}`,
    });
    socket.ws.close();
    // and a join without a token of its own is the key's role, not the bearer's
    const asUser = await raw(`apikey=${PUBLISHABLE_KEY}&vsn=2.0.0`, {
      authorization: `Bearer ${userToken}`,
    });
    const name = `realtime:${topic()}`;
    asUser.send(["1", "1", name, "phx_join", { config: { private: true } }]);
    expect(await asUser.next()).toMatchObject([
      "1",
      "1",
      name,
      "phx_reply",
      { status: "error", response: { reason: expect.stringMatching(/^Unauthorized: /) } },
    ]);
  });

  it("allows 100 channels per client", async () => {
    const socket = await raw();
    for (let i = 0; i < 100; i++) {
      socket.send([String(i), String(i), `realtime:${topic()}`, "phx_join", { config: {} }]);
      expect(await socket.next()).toMatchObject([
        String(i),
        String(i),
        expect.any(String),
        "phx_reply",
        { status: "ok" },
      ]);
    }
    socket.send(["x", "x", `realtime:${topic()}`, "phx_join", { config: {} }]);
    expect(await socket.next()).toMatchObject([
      "x",
      "x",
      expect.any(String),
      "phx_reply",
      { status: "error", response: { reason: "ChannelRateLimitReached: Too many channels" } },
    ]);
  });
});

describe("public broadcast", () => {
  it("reaches the other subscribers, not the sender unless `self`, with `ack`", async () => {
    const name = topic();
    const received: Record<string, unknown[]> = { a: [], b: [], c: [] };
    const channels = (["a", "b", "c"] as const).map((who) =>
      client(who === "c" ? "1.0.0" : "2.0.0")
        .channel(name, { config: { broadcast: { self: who === "b", ack: who === "a" } } })
        .on("broadcast", { event: "hello" }, (message) => received[who]?.push(message)),
    );
    await Promise.all(channels.map(subscribed));
    const [a, b] = channels as [RealtimeChannel, RealtimeChannel];
    // the default client sends this as a binary frame; `ack` makes send() wait for the reply
    expect(await a.send({ type: "broadcast", event: "hello", payload: { from: "a", n: 1 } })).toBe(
      "ok",
    );
    await b.send({ type: "broadcast", event: "hello", payload: { from: "b" } });
    await expect.poll(() => received.c?.length).toBe(2);
    await expect.poll(() => received.b?.length).toBe(2);
    expect(received.a).toEqual([{ type: "broadcast", event: "hello", payload: { from: "b" } }]);
    expect(received.c).toEqual([
      { type: "broadcast", event: "hello", payload: { from: "a", n: 1 } },
      { type: "broadcast", event: "hello", payload: { from: "b" } },
    ]);
    expect(received.b).toEqual(received.c);
  });

  it("refuses a private join that no policy on realtime.messages allows (private.test.ts has the rest)", async () => {
    const name = topic();
    const channel = client().channel(name, { config: { private: true } });
    await expect(subscribed(channel)).rejects.toThrow(
      `Unauthorized: You do not have permissions to read from this Channel topic: ${name}`,
    );
  });
});

describe("tokens", () => {
  it("closes the channel with upstream's system message when its token expires", async () => {
    const socket = await raw();
    const name = `realtime:${topic()}`;
    const token = await jwt({ role: "anon" }, Math.floor(Date.now() / 1000) + 2);
    socket.send(["1", "1", name, "phx_join", { config: {}, access_token: token }]);
    expect(await socket.next()).toMatchObject(["1", "1", name, "phx_reply", { status: "ok" }]);
    // the next frame is the shutdown, when the token's time is up (no sooner)
    const system = (await socket.next(8000)) as unknown[];
    expect(Date.now()).toBeGreaterThanOrEqual((decodeJwt(token).exp as number) * 1000);
    expect(system.slice(0, 4)).toEqual(["1", null, name, "system"]);
    expect(system[4]).toMatchObject({
      extension: "system",
      status: "error",
      channel: name.slice(9),
    });
    expect((system[4] as { message: string }).message).toMatch(
      /^Token has expired \d+ seconds ago$/,
    );
    expect(await socket.next()).toEqual(["1", "1", name, "phx_close", {}]);
  });

  it("ignores `sb_` keys as access tokens and closes the channel on a bad one", async () => {
    const socket = await raw();
    const name = `realtime:${topic()}`;
    socket.send(["1", "1", name, "phx_join", { config: {} }]);
    expect(await socket.next()).toMatchObject(["1", "1", name, "phx_reply", { status: "ok" }]);
    socket.send(["1", "2", name, "access_token", { access_token: PUBLISHABLE_KEY }]);
    socket.send([null, "3", "phoenix", "heartbeat", {}]);
    expect(await socket.next()).toMatchObject([
      null,
      "3",
      "phoenix",
      "phx_reply",
      { status: "ok" },
    ]);
    const { session } = await signedInClient();
    socket.send(["1", "4", name, "access_token", { access_token: session.access_token }]);
    socket.send([null, "5", "phoenix", "heartbeat", {}]);
    expect(await socket.next()).toMatchObject([
      null,
      "5",
      "phoenix",
      "phx_reply",
      { status: "ok" },
    ]);
    socket.send([
      "1",
      "6",
      name,
      "access_token",
      { access_token: await jwt({ role: "anon" }, undefined) },
    ]);
    expect(await socket.next()).toEqual([
      "1",
      null,
      name,
      "system",
      {
        extension: "system",
        status: "error",
        message: "Fields `role` and `exp` are required in JWT",
        channel: name.slice(9),
      },
    ]);
    expect(await socket.next()).toEqual(["1", "1", name, "phx_close", {}]);
  });
});

describe("the upgrade", () => {
  it("goes through the API's rules: a key, a loopback Host, no secret key from a browser", async () => {
    expect(await refusal(`${WS_URL}?vsn=2.0.0`)).toEqual({
      status: 401,
      body: JSON.stringify({
        message: "No API key found in request",
        hint: "No `apikey` request header or url param was found.",
      }),
    });
    expect((await refusal(`${WS_URL}?apikey=nope&vsn=2.0.0`)).status).toBe(401);
    const secret = await refusal(`${WS_URL}?apikey=${SECRET_KEY}&vsn=2.0.0`, {
      "User-Agent": CHROME,
    });
    expect(secret.status).toBe(401);
    expect(JSON.parse(secret.body).message).toBe("Forbidden use of secret API key in browser");
    const host = await refusal(`${WS_URL}?apikey=${PUBLISHABLE_KEY}&vsn=2.0.0`, {
      Host: `attacker.example:${new URL(BACKEND_URL).port}`,
    });
    expect(host.status).toBe(403);
    const foreign = await refusal(`${WS_URL}?apikey=${SERVICE_ROLE_KEY}&vsn=2.0.0`, {
      Origin: "https://attacker.example",
    });
    expect(foreign.status).toBe(401);
    expect(JSON.parse(foreign.body).message).toBe(
      "Forbidden use of a service_role or HS256 JWT from another origin",
    );
    // a version no serializer takes: Phoenix's 403, no body; a patch release of one is that one
    for (const vsn of ["3.0.0", "1.1.0", "abc", "", "2.0.01"]) {
      expect(await refusal(`${WS_URL}?apikey=${PUBLISHABLE_KEY}&vsn=${vsn}`)).toEqual({
        status: 403,
        body: "",
      });
    }
    for (const vsn of ["1.0.1", "2.0.7"]) {
      (await raw(`apikey=${PUBLISHABLE_KEY}&vsn=${vsn}`)).ws.close();
    }
    // the secret key from a server is fine; a plain GET is not an upgrade
    const server = await raw(`apikey=${SECRET_KEY}&vsn=2.0.0`);
    server.ws.close();
    const plain = await fetch(
      `${BACKEND_URL}/realtime/v1/websocket?apikey=${PUBLISHABLE_KEY}&vsn=2.0.0`,
    );
    expect(plain.status).toBe(400);
  });
});

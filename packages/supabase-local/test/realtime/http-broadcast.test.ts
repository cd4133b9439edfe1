// The REST broadcast endpoints' refusals, as upstream v2.102.1 answers them: the batch's
// changeset (BatchBroadcast: `payload` a map, `messages` required, `id` a binary_id, `private`
// Ecto's boolean), the single endpoint's content types (ValidateBroadcastContentType) and the
// token both need (AuthTenant: `role` and `exp`). A batch message's `id` reaches subscribers
// as the broadcast's `meta`.
import { SignJWT } from "jose";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { BACKEND_URL, PUBLISHABLE_KEY } from "../../../../tests/support/backend.ts";
import { KEYS } from "../../src/index.ts";

const BATCH = `${BACKEND_URL}/realtime/v1/api/broadcast`;
const JSON_HEADERS = { apikey: PUBLISHABLE_KEY, "content-type": "application/json" };
const sockets: WebSocket[] = [];
afterEach(() => {
  for (const ws of sockets.splice(0)) ws.terminate();
});

function topic() {
  return `room-${crypto.randomUUID()}`;
}

async function post(url: string, body: string, headers: Record<string, string> = JSON_HEADERS) {
  const response = await fetch(url, { method: "POST", headers, body });
  const text = await response.text();
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text) };
}

function batch(messages: unknown, headers?: Record<string, string>) {
  return post(BATCH, JSON.stringify({ messages }), headers);
}

/** A 1.0.0 socket joined to `name`: the JSON broadcasts it receives. */
async function listener(name: string) {
  const ws = new WebSocket(
    `${BACKEND_URL.replace("http", "ws")}/realtime/v1/websocket?apikey=${PUBLISHABLE_KEY}&vsn=1.0.0`,
  );
  sockets.push(ws);
  const frames: Array<{ event: string; payload: unknown }> = [];
  ws.on("message", (data) => frames.push(JSON.parse(String(data))));
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  ws.send(
    JSON.stringify({
      join_ref: "1",
      ref: "1",
      topic: `realtime:${name}`,
      event: "phx_join",
      payload: { config: {} },
    }),
  );
  await expect.poll(() => frames.some((f) => f.event === "phx_reply")).toBe(true);
  return { broadcasts: () => frames.filter((f) => f.event === "broadcast").map((f) => f.payload) };
}

describe("the batch endpoint's changeset", () => {
  it("refuses a payload that is not a map, each message's errors in its place", async () => {
    const room = topic();
    for (const payload of ["hello", [1, 2], 5, true]) {
      expect(await batch([{ topic: room, event: "e", payload }])).toEqual({
        status: 422,
        body: { errors: { messages: [{ payload: ["is invalid"] }] } },
      });
    }
    const mixed = await batch([
      { topic: room, event: "e", payload: {} },
      { topic: room, event: "e", payload: "x" },
      { topic: room, event: "e", payload: { a: 1 } },
    ]);
    expect(mixed).toEqual({
      status: 422,
      body: { errors: { messages: [{}, { payload: ["is invalid"] }, {}] } },
    });
  });

  it("needs messages: none, [] or a blank topic is can't be blank; null is invalid", async () => {
    const blank = { status: 422, body: { errors: { messages: ["can't be blank"] } } };
    expect(await batch([])).toEqual(blank);
    expect(await post(BATCH, "{}")).toEqual(blank);
    // an empty body is Plug's JSON parser's empty params, and a JSON array its `_json` param
    expect(await post(BATCH, "")).toEqual(blank);
    expect(await post(BATCH, "[]")).toEqual(blank);
    expect(await post(BATCH, "{")).toEqual({
      status: 400,
      body: { message: "Invalid request body" },
    });
    expect(await batch(null)).toEqual({
      status: 422,
      body: { errors: { messages: ["is invalid"] } },
    });
    expect(await batch([{ topic: "  ", event: "e", payload: {} }])).toEqual({
      status: 422,
      body: { errors: { messages: [{ topic: ["can't be blank"] }] } },
    });
  });

  it("casts private as Ecto's boolean: strings of it pass, anything else is invalid", async () => {
    const room = topic();
    for (const value of ["true", "false", "1", "0", false, ""]) {
      expect((await batch([{ topic: room, event: "e", payload: {}, private: value }])).status).toBe(
        202,
      );
    }
    for (const value of [1, "yes", {}]) {
      expect(await batch([{ topic: room, event: "e", payload: {}, private: value }])).toEqual({
        status: 422,
        body: { errors: { messages: [{ private: ["is invalid"] }] } },
      });
    }
  });

  it("sends a message's id as the broadcast's meta; an id that is no string is invalid", async () => {
    const room = topic();
    const socket = await listener(room);
    expect(await batch([{ id: 5, topic: room, event: "e", payload: {} }])).toEqual({
      status: 422,
      body: { errors: { messages: [{ id: ["is invalid"] }] } },
    });
    // two messages with one id: the second's is taken (the embed's primary key)
    expect(
      await batch([
        { id: "m-1", topic: room, event: "e", payload: {} },
        { id: "m-1", topic: room, event: "e", payload: {} },
      ]),
    ).toEqual({
      status: 422,
      body: { errors: { messages: [{}, { id: ["has already been taken"] }] } },
    });
    const sent = await batch([
      { id: "msg-123", topic: room, event: "e", payload: { n: 1 } },
      { topic: room, event: "e", payload: { n: 2 } },
    ]);
    expect(sent.status).toBe(202);
    await expect.poll(() => socket.broadcasts()).toHaveLength(2);
    expect(socket.broadcasts()).toEqual([
      { type: "broadcast", event: "e", payload: { n: 1 }, meta: { id: "msg-123" } },
      { type: "broadcast", event: "e", payload: { n: 2 } },
    ]);
  });
});

describe("the single endpoint", () => {
  it("takes JSON or bytes only: another content type is 415", async () => {
    const url = `${BATCH}/${topic()}/events/e`;
    const unsupported = {
      status: 415,
      body: { error: "Unsupported Media Type. Use application/json or application/octet-stream" },
    };
    for (const type of ["text/plain", "application/xml", "application/x-www-form-urlencoded"]) {
      expect(await post(url, "{}", { apikey: PUBLISHABLE_KEY, "content-type": type })).toEqual(
        unsupported,
      );
    }
    for (const type of ["application/json; charset=utf-8", "Application/JSON"]) {
      expect(await post(url, "{}", { apikey: PUBLISHABLE_KEY, "content-type": type })).toEqual({
        status: 202,
        body: undefined,
      });
    }
  });
});

describe("the token", () => {
  it("needs role and exp on either endpoint: 401 otherwise", async () => {
    const secret = new TextEncoder().encode(KEYS.jwtSecret);
    const sign = (claims: Record<string, unknown>) =>
      new SignJWT(claims).setProtectedHeader({ alg: "HS256", typ: "JWT" }).sign(secret);
    const exp = Math.floor(Date.now() / 1000) + 600;
    const room = topic();
    for (const claims of [{ role: "anon" }, { exp }]) {
      const headers = { ...JSON_HEADERS, authorization: `Bearer ${await sign(claims)}` };
      const unauthorized = { status: 401, body: { message: "Unauthorized" } };
      expect(await batch([{ topic: room, event: "e", payload: {} }], headers)).toEqual(
        unauthorized,
      );
      expect(await post(`${BATCH}/${room}/events/e`, "{}", headers)).toEqual(unauthorized);
    }
    const headers = {
      ...JSON_HEADERS,
      authorization: `Bearer ${await sign({ role: "anon", exp })}`,
    };
    expect((await post(`${BATCH}/${room}/events/e`, "{}", headers)).status).toBe(202);
  });
});

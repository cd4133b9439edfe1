// Broadcasts over HTTP, after the gateway, as upstream's BroadcastSingleController and
// BroadcastController answer: `channel.httpSend()`'s POST /realtime/v1/api/broadcast/:topic/events/:event
// (?private=true; a JSON body, or raw bytes as application/octet-stream: another content type is
// ValidateBroadcastContentType's 415) and the older POST /realtime/v1/api/broadcast {messages: [...]}
// that send() falls back to before a join. Both answer 202 with no body, and need a token with
// `role` and `exp` (AuthTenant's 401). A private single message needs the caller's write policy
// (403 otherwise); a private message of a batch without it is skipped. Over the events limit: 429;
// invalid messages: 422 with the changeset's errors (upstream's ChangesetView), a batch's cast as
// its embedded schema casts them (batchMessage below).
import type { PGlite } from "@electric-sql/pglite";
import { requestContext } from "../http/context.ts";
import type { Claims } from "../http/jwt.ts";
import { BodyTooLarge, readLimitedBody } from "../http/request-body.ts";
import { authorize, requestHeaders } from "./authorization.ts";
import { type Broadcast, type Hub, topicKey } from "./channels.ts";
import type { Limits } from "./limits.ts";
import { MAX_FRAME_STRING_BYTES } from "./serializer.ts";

/** Upstream's body parsers take up to 8 MB (Plug.Parsers' default length). */
const MAX_BODY = 8_000_000;
const TOO_LARGE = "Payload size exceeds tenant limit";

interface Services {
  hub: Hub;
  db: PGlite;
  limits: Limits;
}

interface Outgoing {
  topic: string;
  isPrivate: boolean;
  broadcast: Broadcast;
}

export async function httpBroadcast(
  request: Request,
  { hub, db, limits }: Services,
  target?: { topic: string; event: string },
): Promise<Response> {
  // the single endpoint's pipeline checks the content type before the token
  const contentType = target ? mediaType(request.headers.get("content-type")) : "json";
  if (contentType === undefined) {
    return Response.json(
      { error: "Unsupported Media Type. Use application/json or application/octet-stream" },
      { status: 415 },
    );
  }
  let claims: Claims;
  try {
    claims = await requestContext(request).claims();
  } catch {
    return message(401, "Unauthorized");
  }
  // AuthTenant's authorize_conn: a token that verifies must also carry `role` and `exp`
  if (!Object.hasOwn(claims, "role") || !Object.hasOwn(claims, "exp")) {
    return message(401, "Unauthorized");
  }
  const { events } = limits;
  // request.headers for the write policy, as upstream's conn.req_headers
  const headers = requestHeaders(request.headers);
  const send = (outgoing: Outgoing) => {
    events.add();
    hub.broadcast(topicKey(outgoing.topic, outgoing.isPrivate), outgoing.broadcast);
  };
  try {
    if (target) {
      if (events.avg > events.limit) return message(429, "You have exceeded your rate limit");
      const isPrivate = new URL(request.url).searchParams.get("private") === "true";
      let broadcast: Broadcast;
      if (contentType === "octet-stream") {
        // a binary broadcast reaches 2.0.0 clients as a frame whose event and topic lengths are
        // a byte each: upstream's serializer raises past 255 (the request fails); refused here
        // before anything is sent, in the changeset's shape
        if (
          Buffer.byteLength(target.event) > MAX_FRAME_STRING_BYTES ||
          Buffer.byteLength(`realtime:${target.topic}`) > MAX_FRAME_STRING_BYTES
        ) {
          const field =
            Buffer.byteLength(target.event) > MAX_FRAME_STRING_BYTES ? "event" : "topic";
          return errors({
            [field]: [`must be less than or equal to ${MAX_FRAME_STRING_BYTES} bytes`],
          });
        }
        const declared = Number(request.headers.get("content-length") ?? "0");
        if (declared > MAX_BODY) throw new BodyTooLarge(MAX_BODY);
        const bytes = new Uint8Array(await request.arrayBuffer());
        if (bytes.length > MAX_BODY) throw new BodyTooLarge(MAX_BODY);
        if (limits.payloadTooLarge(bytes.length)) return errors({ payload: [TOO_LARGE] });
        broadcast = { user: { event: target.event, encoding: "binary", payload: bytes } };
      } else {
        const text = await readLimitedBody(request, MAX_BODY);
        const payload: unknown = JSON.parse(text);
        if (limits.payloadTooLarge(Buffer.byteLength(text))) {
          return errors({ payload: [TOO_LARGE] });
        }
        broadcast = { json: { type: "broadcast", event: target.event, payload } };
      }
      if (isPrivate && !(await authorize(db, target.topic, claims, headers)).broadcast.write) {
        return message(403, "Unauthorized");
      }
      send({ topic: target.topic, isPrivate, broadcast });
      return new Response(null, { status: 202 });
    }
    const text = await readLimitedBody(request, MAX_BODY);
    // an empty body is no params, as Plug's JSON parser reads it; a JSON body that is no object
    // is Phoenix's `_json` param: no `messages` either way
    const body: unknown = text === "" ? {} : JSON.parse(text);
    const params = isObject(body) ? body : {};
    if (!Object.hasOwn(params, "messages")) return errors({ messages: ["can't be blank"] });
    const list = embedsMany(params.messages);
    if (list === undefined) return errors({ messages: ["is invalid"] });
    if (list.length === 0) return errors({ messages: ["can't be blank"] });
    const outgoing: Outgoing[] = [];
    const ids = new Set<string>();
    const problems = list.map((item): Record<string, string[]> => {
      const cast = batchMessage(item, limits);
      if (cast.id !== undefined) {
        // the embed's primary key: a second message with the same id is taken
        if (ids.has(cast.id))
          cast.errors.id = [...(cast.errors.id ?? []), "has already been taken"];
        ids.add(cast.id);
      }
      if (Object.keys(cast.errors).length === 0 && cast.message) outgoing.push(cast.message);
      return sortedKeys(cast.errors);
    });
    if (problems.some((p) => Object.keys(p).length > 0)) return errors({ messages: problems });
    if (events.avg > events.limit) return message(429, "You have exceeded your rate limit");
    if (outgoing.length + events.avg > events.limit) {
      return message(429, "Too many messages to broadcast, please reduce the batch size");
    }
    // upstream's order: the public messages, then the private ones by topic (each topic's write
    // right asked once)
    const privateTopics = [...new Set(outgoing.filter((o) => o.isPrivate).map((o) => o.topic))];
    for (const item of outgoing) if (!item.isPrivate) send(item);
    for (const topic of privateTopics.sort()) {
      if (!(await authorize(db, topic, claims, headers)).broadcast.write) continue;
      for (const item of outgoing) if (item.isPrivate && item.topic === topic) send(item);
    }
    return new Response(null, { status: 202 });
  } catch (error) {
    if (error instanceof BodyTooLarge) return message(413, "Payload too large");
    return message(400, "Invalid request body");
  }
}

/**
 * ValidateBroadcastContentType: no Content-Type, or application/json or application/octet-stream
 * (any case, with parameters); undefined for anything else, an unparsable one included.
 */
function mediaType(header: string | null): "json" | "octet-stream" | undefined {
  if (header === null) return "json";
  const match = /^\s*application\/(json|octet-stream)\s*(;.*)?$/is.exec(header);
  return match ? ((match[1] as string).toLowerCase() as "json" | "octet-stream") : undefined;
}

/**
 * `messages` as Ecto's cast_embed reads an embeds_many: a list, or a map of them by index (sorted
 * as Elixir sorts its keys: integers first); a list holding anything but maps, or any other
 * value (null too), is undefined ("is invalid"). A message that is itself a list makes Ecto's
 * cast raise (a 400 here).
 */
function embedsMany(value: unknown): unknown[] | undefined {
  let list: unknown[];
  if (Array.isArray(value)) list = value;
  else if (isObject(value)) {
    const keyed = Object.entries(value).map(([key, item]) => ({ key, n: indexKey(key), item }));
    keyed.sort((a, b) => {
      if (a.n !== undefined && b.n !== undefined) return a.n - b.n;
      if (a.n !== undefined) return -1;
      if (b.n !== undefined) return 1;
      return Buffer.compare(Buffer.from(a.key), Buffer.from(b.key));
    });
    list = keyed.map((k) => k.item);
  } else return undefined;
  if (list.some((item) => !isObject(item) && !Array.isArray(item))) return undefined;
  if (list.some(Array.isArray)) throw new Error("a message that is a list");
  return list;
}

function indexKey(key: string): number | undefined {
  return Buffer.byteLength(key) < 32 && /^[+-]?\d+$/.test(key) ? Number(key) : undefined;
}

interface CastMessage {
  errors: Record<string, string[]>;
  /** The cast id (a binary_id: any string that is not blank). */
  id?: string;
  message?: Outgoing;
}

/**
 * One message of a batch as upstream's message_changeset casts it: `id` a binary_id (any string),
 * `topic` and `event` strings, `payload` a map, `private` Ecto's boolean (`"true"`, `"1"`, …);
 * blank strings count as absent (Ecto's empty values); topic, event and payload are required.
 * With an id, the broadcast carries `meta: {id}` (upstream's send_message_and_count).
 */
function batchMessage(item: unknown, limits: Limits): CastMessage {
  const attrs = item as Record<string, unknown>;
  const errors: Record<string, string[]> = {};
  const cast = (field: string, accept: (value: unknown) => unknown): unknown => {
    const value = attrs[field];
    if (value === undefined || value === null) return undefined;
    if (typeof value === "string" && value.trimStart() === "") return undefined;
    const result = accept(value);
    if (result === undefined) errors[field] = ["is invalid"];
    return result;
  };
  const asString = (v: unknown) => (typeof v === "string" ? v : undefined);
  const id = cast("id", asString) as string | undefined;
  const topic = cast("topic", asString) as string | undefined;
  const event = cast("event", asString) as string | undefined;
  const payload = cast("payload", (v) => (isObject(v) ? v : undefined));
  const isPrivate = cast("private", (v) => {
    if (typeof v === "boolean") return v;
    if (v === "true" || v === "1") return true;
    if (v === "false" || v === "0") return false;
    return undefined;
  });
  for (const [field, value] of [
    ["topic", topic],
    ["payload", payload],
    ["event", event],
  ] as const) {
    if (value === undefined && !errors[field]) errors[field] = ["can't be blank"];
  }
  if (payload !== undefined && limits.payloadTooLarge(Buffer.byteLength(JSON.stringify(payload)))) {
    errors.payload = [TOO_LARGE];
  }
  if (topic === undefined || event === undefined || payload === undefined) return { errors, id };
  const json: Record<string, unknown> = { type: "broadcast", event, payload };
  if (id !== undefined) json.meta = { id };
  return {
    errors,
    id,
    message: { topic, isPrivate: isPrivate === true, broadcast: { json } },
  };
}

/** An error map's keys in Elixir's order for a small map (sorted), as upstream's JSON has them. */
function sortedKeys(fields: Record<string, string[]>): Record<string, string[]> {
  return Object.fromEntries(Object.entries(fields).sort(([a], [b]) => (a < b ? -1 : 1)));
}

function message(status: number, text: string): Response {
  return Response.json({ message: text }, { status });
}

function errors(fields: Record<string, unknown>): Response {
  return Response.json({ errors: fields }, { status: 422 });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// Broadcasts over HTTP, after the gateway, as upstream's BroadcastSingleController and
// BroadcastController answer: `channel.httpSend()`'s POST /realtime/v1/api/broadcast/:topic/events/:event
// (?private=true; a JSON body, or raw bytes as application/octet-stream) and the older
// POST /realtime/v1/api/broadcast {messages: [...]} that send() falls back to before a join. Both
// answer 202 with no body. A private single message needs the caller's write policy (403
// otherwise); a private message of a batch without it is skipped. Over the events limit: 429;
// invalid messages: 422 with the changeset's errors (upstream's ChangesetView).
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
  let claims: Claims;
  try {
    claims = await requestContext(request).claims();
  } catch {
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
      const binary = (request.headers.get("content-type") ?? "").startsWith(
        "application/octet-stream",
      );
      let broadcast: Broadcast;
      if (binary) {
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
    const body: unknown = JSON.parse(await readLimitedBody(request, MAX_BODY));
    const list = isObject(body) ? body.messages : undefined;
    if (list === undefined || list === null) return errors({ messages: ["can't be blank"] });
    if (!Array.isArray(list)) return errors({ messages: ["is invalid"] });
    const outgoing: Outgoing[] = [];
    const problems = list.map((item): Record<string, string[]> => {
      if (!isObject(item)) return { messages: ["is invalid"] };
      const found: Record<string, string[]> = {};
      for (const field of ["topic", "event"] as const) {
        if (item[field] === undefined || item[field] === null || item[field] === "") {
          found[field] = ["can't be blank"];
        } else if (typeof item[field] !== "string") found[field] = ["is invalid"];
      }
      if (item.payload === undefined || item.payload === null) found.payload = ["can't be blank"];
      else if (limits.payloadTooLarge(Buffer.byteLength(JSON.stringify(item.payload)))) {
        found.payload = [TOO_LARGE];
      }
      if (item.private !== undefined && typeof item.private !== "boolean") {
        found.private = ["is invalid"];
      }
      if (Object.keys(found).length === 0) {
        outgoing.push({
          topic: item.topic as string,
          isPrivate: item.private === true,
          broadcast: { json: { type: "broadcast", event: item.event, payload: item.payload } },
        });
      }
      return found;
    });
    if (problems.some((p) => Object.keys(p).length > 0)) return errors({ messages: problems });
    if (events.avg > events.limit) return message(429, "You have exceeded your rate limit");
    if (outgoing.length + events.avg > events.limit) {
      return message(429, "Too many messages to broadcast, please reduce the batch size");
    }
    for (const item of outgoing) {
      if (item.isPrivate && !(await authorize(db, item.topic, claims, headers)).broadcast.write)
        continue;
      send(item);
    }
    return new Response(null, { status: 202 });
  } catch (error) {
    if (error instanceof BodyTooLarge) return message(413, "Payload too large");
    return message(400, "Invalid request body");
  }
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

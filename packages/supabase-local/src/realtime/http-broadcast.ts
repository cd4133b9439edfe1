// Broadcasts over HTTP, after the gateway: `channel.httpSend()`'s
// POST /realtime/v1/api/broadcast/:topic/events/:event (?private=true; a JSON body, or raw bytes as
// application/octet-stream), and the older POST /realtime/v1/api/broadcast {messages: [...]} that
// send() falls back to before a join. Both answer 202 with no body. A private message goes out only
// when the caller may write to its topic (authorization.ts); others are skipped, as upstream skips them.
import type { PGlite } from "@electric-sql/pglite";
import { requestContext } from "../http/context.ts";
import type { Claims } from "../http/jwt.ts";
import { BodyTooLarge, readLimitedBody } from "../http/request-body.ts";
import { authorize } from "./authorization.ts";
import { type Broadcast, type Hub, topicKey } from "./channels.ts";

/** Upstream's tenant default max_payload_size_in_kb: 3000. */
const MAX_BODY = 3000 * 1024;

export async function httpBroadcast(
  request: Request,
  hub: Hub,
  db: PGlite,
  target?: { topic: string; event: string },
): Promise<Response> {
  let claims: Claims;
  try {
    claims = await requestContext(request).claims();
  } catch {
    return Response.json({ message: "Unauthorized" }, { status: 401 });
  }
  const messages: Array<{ topic: string; isPrivate: boolean; broadcast: Broadcast }> = [];
  try {
    if (target) {
      const isPrivate = new URL(request.url).searchParams.get("private") === "true";
      const binary = (request.headers.get("content-type") ?? "").startsWith(
        "application/octet-stream",
      );
      let broadcast: Broadcast;
      if (binary) {
        const declared = Number(request.headers.get("content-length") ?? "0");
        if (declared > MAX_BODY) throw new BodyTooLarge(MAX_BODY);
        const bytes = new Uint8Array(await request.arrayBuffer());
        if (bytes.length > MAX_BODY) throw new BodyTooLarge(MAX_BODY);
        broadcast = { user: { event: target.event, encoding: "binary", payload: bytes } };
      } else {
        const payload: unknown = JSON.parse(await readLimitedBody(request, MAX_BODY));
        broadcast = { json: { type: "broadcast", event: target.event, payload } };
      }
      messages.push({ topic: target.topic, isPrivate, broadcast });
    } else {
      const body: unknown = JSON.parse(await readLimitedBody(request, MAX_BODY));
      const list = (body as { messages?: unknown })?.messages;
      if (!Array.isArray(list)) return invalid();
      for (const item of list) {
        const { topic, event, payload } = (item ?? {}) as Record<string, unknown>;
        if (typeof topic !== "string" || typeof event !== "string") return invalid();
        messages.push({
          topic,
          isPrivate: (item as { private?: unknown }).private === true,
          broadcast: { json: { type: "broadcast", event, payload: payload ?? {} } },
        });
      }
    }
  } catch (error) {
    if (error instanceof BodyTooLarge) {
      return Response.json({ message: "Payload too large" }, { status: 413 });
    }
    return invalid();
  }
  for (const message of messages) {
    if (message.isPrivate) {
      const policies = await authorize(db, message.topic, claims);
      if (!policies.broadcast.write) continue;
    }
    hub.broadcast(topicKey(message.topic, message.isPrivate), message.broadcast);
  }
  return new Response(null, { status: 202 });
}

function invalid(): Response {
  return Response.json({ message: "Invalid request body" }, { status: 400 });
}

// Realtime at /realtime/v1: the socket's upgrade, answered as a plain Request -> Response like
// every route, once the app's rules (local-only.ts, the gateway) have passed it. An accepted
// upgrade leaves its socket's start on the Request for the server (backend.ts) to take: only the
// server holds the raw connection that becomes the WebSocket.
import type { PGlite } from "@electric-sql/pglite";
import type { WebSocket } from "ws";
import { requestContext } from "../http/context.ts";
import type { RealtimeSettings } from "../project/config.ts";
import { requestHeaders } from "./authorization.ts";
import { Hub, topicKey } from "./channels.ts";
import { httpBroadcast } from "./http-broadcast.ts";
import { startJanitor } from "./janitor.ts";
import { Limits } from "./limits.ts";
import { ChangeFeed } from "./postgres-changes.ts";
import { parseVsn } from "./serializer.ts";
import { RealtimeSocket } from "./socket.ts";
import { confirmToken, type Verify } from "./tokens.ts";

export interface RealtimeOptions {
  /** Verifies a JWT as every API does (http/jwt.ts), throwing a JwtRejected. */
  verify: Verify;
  /** The project's database: RLS for private channels, and the messages realtime.send() writes. */
  db: PGlite;
  /** The tenant limits (local-backend.toml [realtime], upstream's defaults). */
  limits: RealtimeSettings;
  /**
   * Whether this backend opened the database: then the subscriptions a previous run left (a
   * stop ends the sockets, not always before the database closes) are deleted at the start, as
   * upstream deletes them when its change feed starts, and old realtime.messages are deleted as
   * upstream's janitor drops them (janitor.ts). A backend sharing another's database leaves
   * both to the backend that opened it.
   */
  ownDatabase: boolean;
  /**
   * A socket that sends no frame for this long is closed (1000), as Phoenix's websocket transport
   * (`:timeout`, 60 000 ms, which upstream's endpoint keeps). Clients heartbeat every 25-30 s.
   */
  idleTimeoutMs?: number;
  /**
   * A frame to a client that stays unwritten this long (the client reads nothing, and the
   * connection's buffers are full) ends the socket, as ranch's `send_timeout` (30 000 ms, closing)
   * ends upstream's.
   */
  sendTimeoutMs?: number;
  /**
   * What a socket may hold unsent before it ends at once: upstream's channel processes stop at
   * WEBSOCKET_MAX_HEAP_SIZE (50 MB).
   */
  maxBufferedBytes?: number;
}

/** Phoenix's websocket `:timeout` default. */
const IDLE_TIMEOUT_MS = 60_000;
/** Ranch's `send_timeout` default for TCP listeners. */
const SEND_TIMEOUT_MS = 30_000;
/** Upstream's WEBSOCKET_MAX_HEAP_SIZE default. */
const MAX_BUFFERED_BYTES = 50_000_000;

export type Accept = (ws: WebSocket) => void;

const ACCEPTED = Symbol("supabase-local realtime upgrade");
type Carrier = Request & { [ACCEPTED]?: Accept };

export interface Realtime {
  /** GET /realtime/v1/websocket, after the gateway: a refusal, or an accepted upgrade. */
  websocket(request: Request): Promise<Response>;
  /** POST /realtime/v1/api/broadcast (messages in the body), or …/:topic/events/:event. */
  broadcast(request: Request, target?: { topic: string; event: string }): Promise<Response>;
}

export function createRealtime(options: RealtimeOptions): Realtime {
  const hub = new Hub();
  const { db } = options;
  const limits = new Limits(options.limits);
  const changes = new ChangeFeed(db, limits.dbEvents);
  if (options.ownDatabase) {
    changes.forgetPreviousRun();
    startJanitor(db);
  }
  hub.onPresenceDiff = (count) => limits.presence.add(count);
  // Messages the database sends (realtime.send(), realtime.broadcast_changes()): each row's id is
  // announced at its commit (sql/realtime.sql), then read here and broadcast on its topic. Heard
  // from the first socket on: before it, nobody could receive them.
  let feed: Promise<unknown> | undefined;
  const listen = () =>
    (feed ??= db
      .listen("supabase_local_realtime", (id) => {
        db.query<{ topic: string; event: string | null; payload: unknown; private: boolean }>(
          "select topic, event, payload, private from realtime.messages where id = $1",
          [id],
        )
          .then(({ rows }) => {
            const row = rows[0];
            if (!row || typeof row.event !== "string") return;
            // upstream's UserBroadcast with metadata {id}: a binary frame to 2.0.0 clients,
            // {type, event, payload, meta: {id}} to 1.0.0 ones
            hub.broadcast(topicKey(row.topic, row.private === true), {
              user: {
                event: row.event,
                encoding: "json",
                payload: new TextEncoder().encode(JSON.stringify(row.payload ?? null)),
                metadata: { id },
              },
            });
          })
          .catch(() => {});
      })
      .catch(() => {}));
  return {
    broadcast: (request, target) => httpBroadcast(request, { hub, db, limits }, target),
    async websocket(request) {
      if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") {
        // a plain GET: what Phoenix's websocket transport answers one
        return new Response(null, { status: 400 });
      }
      // a version no serializer takes: Phoenix's transport answers 403, no body
      const vsn = parseVsn(new URL(request.url).searchParams.get("vsn"));
      if (!vsn) return new Response(null, { status: 403 });
      // The socket's token is its API key's JWT (upstream reads the key, never Authorization);
      // it must verify and be current, and the tenant's users and joins be under their limits
      // (upstream's UserSocket.connect and TenantRateLimiters, answered by its handle_error).
      const token = requestContext(request).keyJwt;
      if (!token) return connectError(401, "API key is missing");
      const confirmed = await confirmToken(token, options.verify);
      if (!confirmed.ok) return connectError(401, connectMessage(confirmed.message));
      const refusal = limits.connectRefusal();
      if (refusal) return connectError(429, refusal);
      await listen();
      const headers = requestHeaders(request.headers, "x-");
      const accept: Accept = (ws) => {
        new RealtimeSocket(ws, {
          vsn,
          token,
          verify: options.verify,
          hub,
          changes,
          db,
          limits,
          headers,
          idleTimeoutMs: options.idleTimeoutMs ?? IDLE_TIMEOUT_MS,
          sendTimeoutMs: options.sendTimeoutMs ?? SEND_TIMEOUT_MS,
          maxBufferedBytes: options.maxBufferedBytes ?? MAX_BUFFERED_BYTES,
        });
      };
      Object.defineProperty(request, ACCEPTED, { value: accept });
      return new Response(null, { status: 200 });
    },
  };
}

/** The accepted upgrade's socket start, if the app accepted this request's upgrade. */
export function acceptedUpgrade(request: Request): Accept | undefined {
  return (request as Carrier)[ACCEPTED];
}

/** A refused upgrade as upstream's UserSocket.handle_error answers it: JSON {error}. */
function connectError(status: number, error: string): Response {
  return Response.json({ error }, { status });
}

/** confirmToken's words for a token, as the connect refusal words them (no "n seconds ago"). */
function connectMessage(message: string): string {
  if (message.startsWith("Token has expired") || message === "Token expiration time is invalid")
    return "Token has expired";
  return message;
}

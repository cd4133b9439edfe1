// Realtime at /realtime/v1: the socket's upgrade, answered as a plain Request -> Response like
// every route, once the app's rules (local-only.ts, the gateway) have passed it. An accepted
// upgrade leaves its socket's start on the Request for the server (backend.ts) to take: only the
// server holds the raw connection that becomes the WebSocket.
import type { WebSocket } from "ws";
import { requestContext } from "../http/context.ts";
import { Hub } from "./channels.ts";
import { parseVsn } from "./serializer.ts";
import { RealtimeSocket } from "./socket.ts";
import { confirmToken, type Verify } from "./tokens.ts";

export interface RealtimeOptions {
  /** Verifies a JWT as every API does (http/jwt.ts), throwing a JwtRejected. */
  verify: Verify;
}

/** Upstream's tenant defaults (Realtime's `tenants` table, as the CLI's Realtime seeds it). */
export const TENANT_DEFAULTS = {
  maxChannelsPerClient: 100,
};

export type Accept = (ws: WebSocket) => void;

const ACCEPTED = Symbol("supabase-local realtime upgrade");
type Carrier = Request & { [ACCEPTED]?: Accept };

export interface Realtime {
  /** GET /realtime/v1/websocket, after the gateway: a refusal, or an accepted upgrade. */
  websocket(request: Request): Promise<Response>;
}

export function createRealtime(options: RealtimeOptions): Realtime {
  const hub = new Hub();
  return {
    async websocket(request) {
      if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") {
        // a plain GET: what Phoenix's websocket transport answers one
        return new Response(null, { status: 400 });
      }
      const vsn = parseVsn(new URL(request.url).searchParams.get("vsn"));
      if (!vsn) return new Response(null, { status: 400 });
      const token = requestContext(request).bearer;
      // The socket's own token must verify and be current (upstream's UserSocket.connect: 403).
      if (!token || !(await confirmToken(token, options.verify)).ok) {
        return new Response(null, { status: 403 });
      }
      const accept: Accept = (ws) => {
        new RealtimeSocket(ws, {
          vsn,
          token,
          verify: options.verify,
          hub,
          maxChannels: TENANT_DEFAULTS.maxChannelsPerClient,
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

// HTTP upgrades (the Realtime socket) on the API's port. @hono/node-server serves requests, not
// upgrades: the server's `upgrade` event brings the raw connection here, it is asked as a Request
// through the app like any other (local-only.ts, the gateway, the route), and either the app's
// answer is written back on the connection or `ws` takes it over as a WebSocket.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { WebSocket, WebSocketServer } from "ws";

export type UpgradeResult = { accept: (ws: WebSocket) => void } | { response: Response };

/** The upgrade request as the app reads every request. */
export function upgradeRequest(req: IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of [value].flat()) headers.append(name, v);
  }
  const host = req.headers.host ?? "127.0.0.1";
  return new Request(new URL(req.url ?? "/", `http://${host}`), { method: req.method, headers });
}

/** The WebSockets this server accepted: made on the first, all ended when the server closes. */
export class WebSockets {
  #server: Promise<WebSocketServer> | undefined;

  async accept(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    accept: (ws: WebSocket) => void,
  ): Promise<void> {
    this.#server ??= import("ws").then(
      // frames over 5 MB end the socket (1009), as upstream's endpoint (max_frame_size 5_000_000)
      ({ WebSocketServer }) => new WebSocketServer({ noServer: true, maxPayload: 5_000_000 }),
    );
    const server = await this.#server;
    server.handleUpgrade(req, socket, head, accept);
  }

  /** Ends every socket at once (the HTTP server's close waits for none of them). */
  async close(): Promise<void> {
    if (!this.#server) return;
    const server = await this.#server;
    for (const ws of server.clients) ws.terminate();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** The app's refusal, written on the raw connection, which then ends. */
export async function refuseUpgrade(socket: Duplex, response: Response): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer());
  const lines = [
    `HTTP/1.1 ${response.status} ${response.statusText || statusText(response.status)}`,
  ];
  response.headers.forEach((value, name) => {
    if (name !== "content-length") lines.push(`${name}: ${value}`);
  });
  lines.push(`content-length: ${body.length}`, "connection: close", "", "");
  socket.end(Buffer.concat([Buffer.from(lines.join("\r\n")), body]));
}

function statusText(status: number): string {
  return (
    { 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found" }[status] ??
    "Error"
  );
}

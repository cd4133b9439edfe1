// A response body that is a Node stream underneath (a stored object's file). Through the Node
// server it is piped straight into the socket (sendNodeBody, called by backend.ts), skipping the
// Web stream a Response body otherwise is and @hono/node-server's read loop over it: a download's
// bytes then go file → socket in 1 MiB reads with Node's own back-pressure. In process (tests
// calling `fetch`) the same body is an ordinary Web stream, opened on first read.
import type { ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";

const opened = new WeakMap<ReadableStream<Uint8Array>, () => Readable>();

/** A Response body that opens `open()` when read: as a Web stream, or whole by sendNodeBody. */
export function nodeBody(open: () => Readable): ReadableStream<Uint8Array> {
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        reader ??= (Readable.toWeb(open()) as ReadableStream<Uint8Array>).getReader();
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      async cancel(reason) {
        await reader?.cancel(reason);
      },
    },
    // nothing is read before someone asks: sendNodeBody may take the file instead
    { highWaterMark: 0 },
  );
  opened.set(body, open);
  return body;
}

/**
 * Writes `response` to `outgoing` itself when its body is a nodeBody that was never read, and
 * answers true; false leaves the response to the server. A client that goes away mid-way ends the
 * file's stream (pipeline destroys both).
 */
export function sendNodeBody(response: Response, outgoing: ServerResponse): boolean {
  const body = response.body;
  const open = body && !body.locked ? opened.get(body) : undefined;
  if (!open) return false;
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of response.headers) if (name !== "set-cookie") headers[name] = value;
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  outgoing.writeHead(response.status, headers);
  pipeline(open(), outgoing).catch(() => {
    // the client went away, or the file did: the socket is already ended or destroyed
  });
  return true;
}

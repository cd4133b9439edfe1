// A response body that is a file, or part of one (a stored object's). Through the Node server it
// is written to the socket by sendNodeBody (called by backend.ts), skipping the Web stream a
// Response body otherwise is and @hono/node-server's read loop over it: 1 MiB reads into two
// buffers used over and over, each read into again only once the socket has taken what it held.
// A download so allocates nothing per read: a fresh 1 MiB buffer per read set off V8's garbage
// collector, whose helper threads then took more CPU than the transfer itself. In process (tests
// calling `fetch`) the same body is an ordinary Web stream of the file, opened on first read.
import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { Readable } from "node:stream";

/** The bytes of `path`, whole or `start`..`end` (inclusive). */
export interface FileBytes {
  path: string;
  start?: number;
  end?: number;
}

/** A read, and the most the socket holds of a body at once: two of them. */
const READ = 1 << 20;

const files = new WeakMap<ReadableStream<Uint8Array>, FileBytes>();

/** A Response body of `file`'s bytes: as a Web stream when read, or sent whole by sendNodeBody. */
export function nodeBody(file: FileBytes): ReadableStream<Uint8Array> {
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        // fresh buffers per read here: the reader keeps what it is given
        reader ??= (
          Readable.toWeb(
            createReadStream(file.path, {
              start: file.start,
              end: file.end,
              highWaterMark: READ,
            }),
          ) as ReadableStream<Uint8Array>
        ).getReader();
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
  files.set(body, file);
  return body;
}

/**
 * Writes `response` to `outgoing` itself when its body is a nodeBody that was never read, and
 * answers true; false leaves the response to the server. A client that goes away mid-way, or a
 * file that can't be read, ends the file and destroys the socket.
 */
export function sendNodeBody(response: Response, outgoing: ServerResponse): boolean {
  const body = response.body;
  const file = body && !body.locked ? files.get(body) : undefined;
  if (!file) return false;
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of response.headers) if (name !== "set-cookie") headers[name] = value;
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  outgoing.writeHead(response.status, headers);
  sendFile(file, outgoing).catch(() => outgoing.destroy());
  return true;
}

/** The file's bytes into `outgoing`, then its end: one read in flight while the socket sends. */
async function sendFile(
  { path, start = 0, end = Number.POSITIVE_INFINITY }: FileBytes,
  outgoing: ServerResponse,
): Promise<void> {
  const file = await open(path, "r");
  const gone = new Promise<never>((_, reject) => {
    outgoing.once("close", () => reject(new Error("the client went away")));
  });
  gone.catch(() => {});
  try {
    const buffers = [Buffer.allocUnsafeSlow(READ), Buffer.allocUnsafeSlow(READ)];
    const sent: Promise<void>[] = [Promise.resolve(), Promise.resolve()];
    let position = start;
    for (let i = 0; position <= end; i = 1 - i) {
      const buffer = buffers[i] as Buffer;
      // this buffer's last bytes are in the socket's hands until their write is done
      await Promise.race([sent[i], gone]);
      const length = Math.min(READ, end - position + 1);
      const { bytesRead } = await file.read(buffer, 0, length, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      const written = new Promise<void>((resolve, reject) => {
        outgoing.write(buffer.subarray(0, bytesRead), (error) =>
          error ? reject(error) : resolve(),
        );
      });
      written.catch(() => {});
      sent[i] = written;
    }
    await Promise.race([Promise.all(sent), gone]);
    outgoing.end();
  } finally {
    await file.close();
  }
}

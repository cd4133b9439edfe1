// The edge's distance from the Supabase region, on loopback: a TCP proxy between the Worker and
// the local backend that holds every chunk of bytes for half the round trip, each way. A request
// and its answer then take one round trip more than on loopback, as from a Cloudflare location to
// the project's region on a connection already open (20-150 ms in production; BENCH_RTT_MS,
// default 40). What it does not model: setting a connection up (TCP and TLS, 2-3 round trips from
// the edge when no warm connection is at hand), and bandwidth. Bytes, not HTTP: any protocol the
// Worker speaks to the backend (HTTP, a websocket) pays the same.
//
// It runs in a worker thread of its own, so the load generator's event loop in the bench's main
// thread cannot hold its timers up. setDelay() changes the round trip between arms.
import { createConnection, createServer, type Socket } from "node:net";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";

export interface RttProxy {
  url: string;
  port: number;
  /** Sets the added round trip, milliseconds (0: straight through). */
  setDelay: (ms: number) => Promise<void>;
  close: () => Promise<void>;
}

interface ProxyData {
  rttProxy: true;
  host: string;
  port: number;
  target: { host: string; port: number };
}

/** Starts the proxy on host:port (0: any free port), forwarding to `target` (an http:// URL). */
export async function startRttProxy(options: {
  host: string;
  port: number;
  target: string;
}): Promise<RttProxy> {
  const target = new URL(options.target);
  const data: ProxyData = {
    rttProxy: true,
    host: options.host,
    port: options.port,
    target: { host: target.hostname, port: Number(target.port) },
  };
  const thread = new Worker(new URL(import.meta.url), { workerData: data });
  // One question at a time: each takes its answer, or the thread's error, and leaves no listener.
  const ask = (message: unknown) =>
    new Promise<{ port?: number }>((resolve, reject) => {
      const failed = (error: Error) => {
        thread.off("message", answered);
        reject(error);
      };
      const answered = (answer: { ok?: boolean; port?: number; error?: string }) => {
        thread.off("error", failed);
        if (answer.ok) resolve(answer);
        else reject(new Error(`rtt-proxy: ${answer.error}`));
      };
      thread.once("message", answered);
      thread.once("error", failed);
      thread.postMessage(message);
    });
  const { port = options.port } = await ask({ listen: true });
  return {
    url: `http://${options.host}:${port}`,
    port,
    setDelay: async (ms) => {
      await ask({ delay: ms });
    },
    close: async () => {
      await ask({ close: true }).catch(() => undefined);
      await thread.terminate();
    },
  };
}

/** Pipes `from` into `to`, each chunk `hold()` milliseconds late, in order. */
export function delayedPipe(from: Socket, to: Socket, hold: () => number): void {
  from.on("data", (chunk) => {
    const ms = hold();
    if (ms <= 0) to.write(chunk);
    // Timers of the same duration fire in the order they were set: the bytes stay in order.
    else setTimeout(() => to.write(chunk), ms);
  });
  from.on("end", () => {
    const ms = hold();
    if (ms <= 0) to.end();
    else setTimeout(() => to.end(), ms);
  });
  from.on("error", () => to.destroy());
}

function serve(data: ProxyData) {
  let delayMs = 0;
  const half = () => delayMs / 2;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection(data.target);
    for (const socket of [client, upstream]) {
      socket.setNoDelay(true);
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    }
    delayedPipe(client, upstream, half);
    delayedPipe(upstream, client, half);
  });
  parentPort?.on("message", (message: { listen?: true; delay?: number; close?: true }) => {
    if (message.listen) {
      server.once("error", (error) => parentPort?.postMessage({ error: String(error) }));
      server.listen(data.port, data.host, () => {
        const address = server.address();
        parentPort?.postMessage({ ok: true, port: typeof address === "object" && address?.port });
      });
    } else if (message.delay !== undefined) {
      delayMs = message.delay;
      parentPort?.postMessage({ ok: true });
    } else if (message.close) {
      for (const socket of sockets) socket.destroy();
      server.close(() => parentPort?.postMessage({ ok: true }));
    }
  });
}

if (!isMainThread && (workerData as ProxyData | undefined)?.rttProxy) serve(workerData);

// The bench's local backend in its own thread (see startBackendThread in backend.ts). Posts
// { url } when it listens (or { error }); closes on "close" and answers "closed".
import { parentPort, workerData } from "node:worker_threads";
import { createLocalBackend, type LocalBackendOptions } from "./backend.ts";

const port = parentPort;
if (!port) throw new Error("backend-thread.ts runs as a worker thread");

try {
  const backend = await createLocalBackend(workerData as LocalBackendOptions);
  port.on("message", async (message) => {
    if (message !== "close") return;
    await backend.close();
    port.postMessage("closed");
  });
  port.postMessage({ url: backend.url });
} catch (error) {
  port.postMessage({ error: (error as Error).stack ?? String(error) });
}

// One local backend in its own thread (started by the e2e setup and by the bench): each gets its
// own event loop, so bcrypt and PGlite work never queues behind another stack's, the test runner or
// the load generator. Messages: it posts { url } when listening (or { error }); it closes on
// "close" and answers "closed"; { sql } runs as the superuser and is answered { done } or { error }
// (the bench switches a feature off with it to measure the feature's cost).
import { parentPort, workerData } from "node:worker_threads";
import { createLocalBackend, type LocalBackendOptions } from "@edge-notes/supabase-local";

const port = parentPort;
if (!port) throw new Error("backend-thread.ts runs as a worker thread");

try {
  const backend = await createLocalBackend(workerData as LocalBackendOptions);
  port.on("message", async (message) => {
    if (typeof message?.sql === "string") {
      backend.db.exec(message.sql).then(
        () => port.postMessage({ done: true }),
        (error: Error) => port.postMessage({ error: error.message }),
      );
      return;
    }
    if (message !== "close") return;
    await backend.close();
    port.postMessage("closed");
  });
  port.postMessage({ url: backend.url });
} catch (error) {
  port.postMessage({ error: (error as Error).stack ?? String(error) });
}

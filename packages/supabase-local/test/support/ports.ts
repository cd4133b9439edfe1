import { createServer } from "node:net";

// Linux gives outgoing connections their local ports from 32768-60999 (ip_local_port_range), and
// listen(0) its ports from the same range. A port a test takes there, releases and hands to a
// server a moment later can meanwhile become the local port of any connection the other test files
// open, and the server's listen then fails with EADDRINUSE. Below that range only a listener can
// hold a port, and each one is checked before it is handed out.
const FIRST = 20_000;
const PAST_LAST = 32_768;

/** A port nothing listens on, below the ephemeral range, for a server the test starts next. */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = FIRST + Math.floor(Math.random() * (PAST_LAST - FIRST));
    if (await isFree(port)) return port;
  }
}

function isFree(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

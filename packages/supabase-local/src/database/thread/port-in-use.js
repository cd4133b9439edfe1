// A port the backend listens on (the API's 54321, the Postgres port 54322, Mailpit's 54324) can be
// "in use" with no server on it. Those ports lie inside Linux's ephemeral range (32768-60999), from
// which the system picks the local port of every outgoing connection, and a connection closed on
// this side stays in TIME_WAIT for a minute, during which nothing may listen on its port. After a
// run that made thousands of local connections (the bench, a test run), `npm run dev` was refused
// for 54322 with nothing listening there. When only connections hold the port, the backend waits
// for the system to free it, and says so, instead of asking whether another backend is running.
//
// JavaScript, as postgres-port.js is: the database thread uses it too.
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

/** How long to wait for connections to let go of a port: TIME_WAIT is 60 s on Linux. */
export const PORT_WAIT_MS = 65_000;
const RETRY_MS = 250;
const TCP_LISTEN = 0x0a;

/**
 * What holds TCP `port` on this machine, from Linux's /proc/net/tcp and tcp6: "server" when a
 * socket listens on it, "connections" when only connections use it as their local port (open,
 * closing or in TIME_WAIT), "unknown" when neither says (no /proc: not Linux).
 * @param {number} port
 * @param {(path: string) => string} [read] reads a /proc file (tests pass their own)
 * @returns {"server" | "connections" | "unknown"}
 */
export function portHolders(port, read = (path) => readFileSync(path, "latin1")) {
  let connections = false;
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text;
    try {
      text = read(table);
    } catch {
      continue;
    }
    // "  sl  local_address rem_address   st ...": local_address is HEXIP:HEXPORT, st the state
    for (const line of text.split("\n").slice(1)) {
      const [, local = "", , state = ""] = line.trim().split(/\s+/);
      if (Number.parseInt(local.slice(local.lastIndexOf(":") + 1), 16) !== port) continue;
      if (Number.parseInt(state, 16) === TCP_LISTEN) return "server";
      connections = true;
    }
  }
  return connections ? "connections" : "unknown";
}

/**
 * Calls `listen` and resolves with what it resolves with. If it fails with EADDRINUSE while only
 * connections hold the port, says so once and calls it again every quarter second, for up to
 * PORT_WAIT_MS. When nothing holds the port any more by the time the tables are read (the last
 * connection let go in between), it is tried once more at once. Any other failure, and one still
 * there after that, is thrown as it came.
 * @template T
 * @param {() => Promise<T>} listen
 * @param {number} port
 * @param {{ waitMs?: number, holders?: (port: number) => string, say?: (line: string) => void }} [options]
 * @returns {Promise<T>}
 */
export async function listenOnceFree(listen, port, options = {}) {
  const { waitMs = PORT_WAIT_MS, holders = portHolders, say = console.error } = options;
  const deadline = Date.now() + waitMs;
  let said = false;
  let triedFreed = false;
  for (;;) {
    try {
      return await listen();
    } catch (error) {
      const inUse = /** @type {NodeJS.ErrnoException} */ (error).code === "EADDRINUSE";
      if (!inUse || Date.now() >= deadline) throw error;
      const holder = holders(port);
      if (holder === "unknown" && !triedFreed) {
        triedFreed = true;
        continue;
      }
      if (holder !== "connections") throw error;
      if (!said) {
        say(
          `[local backend] port ${port} is in use by connections, not by a server: another program's, closed moments ago or closing (the system keeps a closed connection's port for up to a minute). Waiting for it to be free…`,
        );
        said = true;
      }
      await sleep(RETRY_MS);
    }
  }
}

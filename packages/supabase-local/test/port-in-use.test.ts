// port-in-use.js: a port held only by connections (an outgoing connection's local port, or one in
// TIME_WAIT for a minute after it closed) is waited for, and said so; a port a server listens on is
// refused at once, as before.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it, vi } from "vitest";
import { QUICK_PASSWORD_HASH_COST } from "../../../tests/support/backend.ts";
import { listenOnceFree, portHolders } from "../src/database/thread/port-in-use.js";
import { createLocalBackend, KEYS } from "../src/index.ts";
import { withBaseSnapshot } from "./support/base-snapshot.ts";

const LINUX_TABLES = existsSync("/proc/net/tcp");

const opened: { close: () => void }[] = [];
afterEach(() => {
  for (const thing of opened.splice(0)) thing.close();
  vi.restoreAllMocks();
});

async function listening(port = 0): Promise<Server> {
  const server = createServer((socket) => socket.on("error", () => {}));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  opened.push(server);
  return server;
}

/**
 * A port held the way the bench's and the tests' connections held 54322: the local port of an open
 * outgoing connection. `release()` resets the connection, which leaves no TIME_WAIT behind.
 */
async function heldByConnection(): Promise<{ port: number; release: () => void }> {
  const server = await listening();
  const socket: Socket = connect({
    port: (server.address() as { port: number }).port,
    host: "127.0.0.1",
  });
  await new Promise((resolve) => socket.once("connect", resolve));
  const release = () => {
    if (!socket.destroyed) socket.resetAndDestroy();
  };
  opened.push({ close: release });
  return { port: socket.localPort as number, release };
}

function inUse(): NodeJS.ErrnoException {
  return Object.assign(new Error("listen EADDRINUSE: address already in use"), {
    code: "EADDRINUSE",
  });
}

describe("portHolders", () => {
  // Two lines of /proc/net/tcp and one of tcp6: 54322 listening, 54324 in TIME_WAIT (state 06),
  // 54321 listening on ::1.
  const TCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:D432 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 31337 1 0000000000000000 100 0 0 10 0
   1: 0100007F:D434 0100007F:B2E5 06 00000000:00000000 03:00001626 00000000     0        0 0 3 0000000000000000
`;
  const TCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:D431 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 31338 1 0000000000000000 100 0 0 10 0
`;
  const read = (path: string) => (path.endsWith("tcp6") ? TCP6 : TCP);

  it("tells a server from connections, in both tables", () => {
    expect(portHolders(54322, read)).toBe("server");
    expect(portHolders(54324, read)).toBe("connections");
    expect(portHolders(54321, read)).toBe("server");
    expect(portHolders(54323, read)).toBe("unknown");
  });

  it("knows nothing where there are no tables (not Linux)", () => {
    const none = () => {
      throw new Error("ENOENT");
    };
    expect(portHolders(54322, none)).toBe("unknown");
  });

  it.runIf(LINUX_TABLES)(
    "reads this machine's: a listener, an open connection's local port",
    async () => {
      const server = await listening();
      expect(portHolders((server.address() as { port: number }).port)).toBe("server");
      const held = await heldByConnection();
      expect(portHolders(held.port)).toBe("connections");
    },
  );
});

describe("listenOnceFree", () => {
  it("tries again while only connections hold the port, and says so once", async () => {
    const say = vi.fn();
    let calls = 0;
    const listen = async () => {
      calls += 1;
      if (calls < 3) throw inUse();
      return "listening";
    };
    const result = await listenOnceFree(listen, 54322, { holders: () => "connections", say });
    expect(result).toBe("listening");
    expect(calls).toBe(3);
    expect(say).toHaveBeenCalledTimes(1);
    expect(say.mock.calls[0]?.[0]).toMatch(/port 54322 is in use by connections, not by a server/);
  });

  it("tries once more at once when the port's last holder let go before the tables were read", async () => {
    // listen() failed while a connection held the port; by the time /proc is read it is gone
    const say = vi.fn();
    let calls = 0;
    const listen = async () => {
      calls += 1;
      if (calls < 2) throw inUse();
      return "listening";
    };
    const result = await listenOnceFree(listen, 54322, { holders: () => "unknown", say });
    expect(result).toBe("listening");
    expect(calls).toBe(2);
    expect(say).not.toHaveBeenCalled();
    // still refused the second time, with nothing to say who holds it: the port's own error
    const error = inUse();
    let tries = 0;
    const refused = listenOnceFree(
      async () => {
        tries += 1;
        throw error;
      },
      54322,
      { holders: () => "unknown", say },
    );
    await expect(refused).rejects.toBe(error);
    expect(tries).toBe(2);
  });

  it("refuses at once when a server holds the port, or for any other error", async () => {
    for (const [error, holders] of [
      [inUse(), "server"],
      [Object.assign(new Error("EACCES"), { code: "EACCES" }), "connections"],
    ] as const) {
      const say = vi.fn();
      let calls = 0;
      const listen = async () => {
        calls += 1;
        throw error;
      };
      await expect(listenOnceFree(listen, 80, { holders: () => holders, say })).rejects.toBe(error);
      expect(calls).toBe(1);
      expect(say).not.toHaveBeenCalled();
    }
  });

  it("gives up after waiting, with the port's own error", async () => {
    const error = inUse();
    const started = performance.now();
    const listen = async () => {
      throw error;
    };
    const wait = listenOnceFree(listen, 54322, {
      holders: () => "connections",
      say: () => {},
      waitMs: 600,
    });
    await expect(wait).rejects.toBe(error);
    expect(performance.now() - started).toBeGreaterThanOrEqual(600);
  });
});

describe.runIf(LINUX_TABLES)("a backend whose ports connections still hold", () => {
  it("starts on them once they are free, the API's and the Postgres port alike", async () => {
    // a project of its own, started from the base snapshot: the wait is all this test is about
    const project = mkdtempSync(join(tmpdir(), "port-in-use-project-"));
    opened.push({ close: () => rmSync(project, { recursive: true, force: true }) });
    const cacheDir = join(project, "cache");
    await mkdir(join(project, "supabase"), { recursive: true });
    await withBaseSnapshot(project, cacheDir);
    const api = await heldByConnection();
    const postgres = await heldByConnection();
    const said = vi.spyOn(console, "error").mockImplementation(() => {});
    const started = performance.now();
    setTimeout(api.release, 700);
    setTimeout(postgres.release, 1500);
    const local = await createLocalBackend({
      projectDir: project,
      cacheDir,
      host: "127.0.0.1",
      port: api.port,
      postgresPort: postgres.port,
      seed: false,
      config: { auth: { passwordHashCost: QUICK_PASSWORD_HASH_COST } },
    });
    try {
      expect(performance.now() - started).toBeGreaterThanOrEqual(1500);
      expect(said.mock.calls.map((call) => String(call[0]))).toContainEqual(
        expect.stringMatching(new RegExp(`port ${api.port} is in use by connections`)),
      );
      expect(local.url).toBe(`http://127.0.0.1:${api.port}`);
      const health = await fetch(`${local.url}/auth/v1/health`, {
        headers: { apikey: KEYS.publishable },
      });
      expect(health.status).toBe(200);
      const client = new pg.Client({
        connectionString: `postgresql://postgres:postgres@127.0.0.1:${postgres.port}/postgres`,
      });
      await client.connect();
      try {
        expect((await client.query("select 1 as one")).rows).toEqual([{ one: 1 }]);
      } finally {
        await client.end();
      }
    } finally {
      await local.close();
    }
  }, 30_000);
});

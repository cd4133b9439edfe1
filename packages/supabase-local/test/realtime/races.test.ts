// Sockets that go away while a join waits on a busy database (its token, a private channel's RLS
// check, its postgres_changes subscription): nothing of the join stays behind. Backends of their
// own on the worker's database, one per test, at two concurrent users: a socket counted for good
// shows at once.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { workerDatabase } from "../../../../tests/support/memory-backend.ts";
import { createLocalBackend, type LocalBackend } from "../../src/backend.ts";

const backends: LocalBackend[] = [];
let backend: LocalBackend;
const prefix = `race-${crypto.randomUUID()}`;
const sockets: WebSocket[] = [];
beforeAll(async () => {
  const db = await workerDatabase();
  await db.exec(`
    create policy "${prefix}" on realtime.messages for select to anon
      using (realtime.topic() like '${prefix}%');
  `);
});
beforeEach(async () => {
  backend = await createLocalBackend({
    db: await workerDatabase(),
    port: 0,
    host: "127.0.0.1",
    config: { local: { realtime: { maxConcurrentUsers: 2 } } },
  });
  backends.push(backend);
}, 60_000);
afterEach(() => {
  for (const ws of sockets.splice(0)) ws.terminate();
});
afterAll(async () => {
  for (const b of backends.splice(0)) await b.close();
  await (await workerDatabase()).exec(`drop policy if exists "${prefix}" on realtime.messages`);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A raw 2.0.0 socket, or the HTTP status its upgrade was refused with. */
async function connect(): Promise<WebSocket | number> {
  const ws = new WebSocket(
    `${backend.url.replace("http", "ws")}/realtime/v1/websocket?apikey=${backend.keys.publishable}&vsn=2.0.0`,
  );
  sockets.push(ws);
  ws.on("error", () => {});
  return new Promise((resolve) => {
    ws.once("open", () => resolve(ws));
    ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
  });
}

function join(ws: WebSocket, ref: string, topic: string, config: Record<string, unknown>): void {
  ws.send(JSON.stringify([ref, ref, `realtime:${topic}`, "phx_join", { config }]));
}

/** The database busy for half a second, as a join reaches it. */
function busy(): Promise<unknown> {
  return backend.db.query("select pg_sleep(0.5)");
}

describe("a socket that closes while its join waits", () => {
  it("is not counted as a user: the limit's connections come back", async () => {
    for (let i = 0; i < 2; i++) {
      const ws = await connect();
      if (typeof ws === "number") throw new Error(`refused: ${ws}`);
      const sleeping = busy();
      join(ws, "1", `${prefix}-${i}`, { private: true });
      await sleep(50);
      ws.terminate();
      await sleeping;
      await sleep(300);
    }
    const late = await connect();
    expect(typeof late).not.toBe("number");
  });

  it("leaves no channel, no realtime.subscription rows behind", async () => {
    const table = `race_${crypto.randomUUID().replaceAll("-", "")}`;
    await backend.db.exec(`
      create table public.${table} (id bigint primary key);
      alter publication supabase_realtime add table public.${table};
      grant all on public.${table} to anon;
    `);
    try {
      const ws = await connect();
      if (typeof ws === "number") throw new Error(`refused: ${ws}`);
      const sleeping = busy();
      // refused once the database answers; the next join waits behind it
      join(ws, "1", `${prefix}-denied`.replace("race-", "nobody-"), { private: true });
      join(ws, "2", `${prefix}-changes`, {
        postgres_changes: [{ event: "*", schema: "public", table }],
      });
      await sleep(50);
      ws.terminate();
      await sleeping;
      await sleep(1000);
      const { rows } = await backend.db.query<{ n: number }>(
        "select count(*)::int as n from realtime.subscription where entity = $1::regclass",
        [`public.${table}`],
      );
      expect(rows[0]?.n).toBe(0);
      // and no channel in the hub: a broadcast to its topic reaches nobody, so two sockets may
      // still connect (the limit is two users)
      const [a, b] = await Promise.all([connect(), connect()]);
      expect([typeof a, typeof b]).toEqual(["object", "object"]);
    } finally {
      await backend.db.exec(`
        alter publication supabase_realtime drop table public.${table};
        drop table public.${table};
      `);
    }
  });
});

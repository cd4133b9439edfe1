// The Postgres port: the same PGlite the APIs use, over the wire protocol, for `pg`, psql and any
// Postgres client. Connections and API requests take turns (src/postgres-port.js): a transaction
// is never interleaved with the API's, session settings never leak either way, and a connection
// idle in a transaction gives way after idleInTransactionTimeout while the API waits.
import { execFile } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { connect as connectSocket, createServer, type Server, type Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { QUICK_PASSWORD_HASH_COST } from "../../../tests/support/backend.ts";
import { createLocalBackend, KEYS, type LocalBackend } from "../src/index.ts";
import { freePort } from "./support/ports.ts";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
// Never the defaults (54321/54322): someone may be running `npm run dev` on this machine.
// Ports from the OS unless set: a fixed one in the ephemeral range can be taken by any socket.
const API_PORT = Number(process.env.TEST_PG_API_PORT ?? 0);
const PG_PORT = Number(process.env.TEST_PG_PORT ?? 0);
const IDLE_LIMIT = 2000;

let local: LocalBackend;
let admin: SupabaseClient;
const clients: pg.Client[] = [];

beforeAll(async () => {
  local = await createLocalBackend({
    projectDir: ROOT,
    host: "127.0.0.1",
    port: API_PORT,
    postgresPort: PG_PORT,
    idleInTransactionTimeout: IDLE_LIMIT,
    seed: false,
    config: { auth: { passwordHashCost: QUICK_PASSWORD_HASH_COST } },
  });
  admin = createClient(local.url, KEYS.secret, {
    auth: { persistSession: false, autoRefreshToken: false },
  });
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.end().catch(() => {})));
  await local?.close();
});

async function connect(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: local.dbUrl });
  client.on("error", () => {}); // a terminated session's socket error is asserted where expected
  await client.connect();
  clients.push(client);
  return client;
}

/** A raw connection to the port, for what no client library sends. */
async function rawSocket(): Promise<Socket> {
  const url = new URL(String(local.dbUrl));
  const socket = connectSocket(Number(url.port), url.hostname);
  socket.on("error", () => {}); // a refused connection is asserted through "close"
  await once(socket, "connect");
  return socket;
}

/** A protocol 3.0 startup packet with these parameters, `pad` bytes of application_name added. */
function startupPacket(params: Record<string, string>, pad = 0): Buffer {
  const body = Buffer.concat([
    ...Object.entries({
      ...params,
      ...(pad > 0 ? { application_name: "x".repeat(pad) } : {}),
    }).flatMap(([k, v]) => [Buffer.from(k), Buffer.from([0]), Buffer.from(v), Buffer.from([0])]),
    Buffer.from([0]),
  ]);
  const header = Buffer.alloc(8);
  header.writeInt32BE(body.length + 8, 0);
  header.writeInt32BE(0x00030000, 4);
  return Buffer.concat([header, body]);
}

/** The first message the server sends back, or "closed" when it closes the connection first. */
async function firstReply(socket: Socket): Promise<Buffer | "closed"> {
  let received = Buffer.alloc(0);
  return new Promise((resolve) => {
    socket.on("data", (data) => {
      received = Buffer.concat([received, data]);
      if (received.length >= 5 && received.length >= 1 + received.readInt32BE(1)) {
        resolve(received.subarray(0, 1 + received.readInt32BE(1)));
      }
    });
    socket.once("close", () => resolve("closed"));
  });
}

/** Whether the server closed the socket within `ms`. */
async function closedWithin(socket: Socket, ms: number): Promise<boolean> {
  if (socket.destroyed) return true;
  return Promise.race([
    once(socket, "close").then(() => true),
    new Promise<boolean>((r) => setTimeout(() => r(false), ms)),
  ]);
}

/** How long a new pg connection's query and a data API request take, together (ms). */
async function serving(): Promise<number> {
  const started = performance.now();
  const client = new pg.Client({ connectionString: local.dbUrl, connectionTimeoutMillis: 5000 });
  client.on("error", () => {});
  clients.push(client);
  await client.connect();
  expect((await client.query("select 1 as ok")).rows).toEqual([{ ok: 1 }]);
  const { error } = await admin.from("notes").select("id").limit(1);
  expect(error).toBeNull();
  return performance.now() - started;
}

async function user() {
  const email = `pg-${crypto.randomUUID().slice(0, 12)}@example.com`;
  const { data, error } = await admin.auth.admin.createUser({
    email,
    password: "pg-port-password",
    email_confirm: true,
  });
  if (error) throw error;
  return data.user;
}

async function restInsert(ownerId: string, title: string) {
  const { error } = await admin.from("notes").insert({ owner_id: ownerId, title });
  if (error) throw error;
}

describe("the Postgres port", () => {
  it("prints as supabase status does and answers a query", async () => {
    expect(local.dbUrl).toMatch(
      /^postgresql:\/\/postgres:postgres@127\.0\.0\.1:[1-9]\d*\/postgres$/,
    );
    if (PG_PORT) expect(new URL(String(local.dbUrl)).port).toBe(String(PG_PORT));
    const client = await connect();
    const { rows } = await client.query<{ n: number; who: string }>(
      "select 1 + $1::int as n, current_user as who",
      [41],
    );
    expect(rows).toEqual([{ n: 42, who: "postgres" }]);
    // the API's tables: the same database
    const owner = await user();
    await restInsert(owner.id, "made through the data API");
    const seen = await client.query("select title from public.notes where owner_id = $1", [
      owner.id,
    ]);
    expect(seen.rows).toEqual([{ title: "made through the data API" }]);
  });

  it("applies row-level security as a role with request.jwt.claims", async () => {
    const [ada, bob] = [await user(), await user()];
    await restInsert(ada.id, "ada's");
    await restInsert(bob.id, "bob's");
    const client = await connect();
    const asUser = async (id: string) => {
      await client.query("begin");
      await client.query("set local role authenticated");
      await client.query("select set_config('request.jwt.claims', $1, true)", [
        JSON.stringify({ sub: id, role: "authenticated", aal: "aal1", is_anonymous: false }),
      ]);
      const { rows } = await client.query("select title from public.notes");
      await client.query("commit");
      return rows.map((r) => r.title);
    };
    expect(await asUser(ada.id)).toEqual(["ada's"]);
    expect(await asUser(bob.id)).toEqual(["bob's"]);
    const denied = await client
      .query("set role anon; select count(*)::int as n from public.notes")
      .catch((e) => e);
    expect(denied).toMatchObject({ code: "42501" });
    await client.query("reset role");
  });

  it("keeps a connection's session settings to itself, and the API's to the API", async () => {
    const owner = await user();
    const client = await connect();
    await client.query("set role authenticated");
    await client.query(
      `set request.jwt.claims = '${JSON.stringify({ sub: owner.id, role: "authenticated" })}'`,
    );
    await client.query("set statement_timeout = '1234ms'");
    // The API works as before (its own role and no statement timeout of psql's) …
    await restInsert(owner.id, "while psql is someone else");
    const { data: users } = await admin.auth.admin.listUsers({ perPage: 1 });
    expect(users.users.length).toBe(1);
    const direct = await local.db.query<{ who: string; timeout: string; claims: string }>(
      "select current_user as who, current_setting('statement_timeout') as timeout, coalesce(current_setting('request.jwt.claims', true), '') as claims",
    );
    expect(direct.rows).toEqual([{ who: "postgres", timeout: "0", claims: "" }]);
    // … and the connection still has its own.
    const { rows } = await client.query(
      "select current_user as who, current_setting('statement_timeout') as timeout, auth.uid() as uid",
    );
    expect(rows).toEqual([{ who: "authenticated", timeout: "1234ms", uid: owner.id }]);
  });

  it("never interleaves a pg transaction with REST writes: nothing lost, nothing torn", async () => {
    const owner = await user();
    const client = await connect();
    const rounds = 15;
    const rest = Array.from({ length: rounds }, (_, i) => restInsert(owner.id, `rest ${i}`));
    const wire = (async () => {
      for (let i = 0; i < rounds; i++) {
        await client.query("begin");
        const { rows } = await client.query<{ n: number }>(
          "select count(*)::int as n from public.notes where owner_id = $1",
          [owner.id],
        );
        await client.query("insert into public.notes (owner_id, title) values ($1, $2)", [
          owner.id,
          `pg ${i}`,
        ]);
        // inside the transaction the count moved by our insert alone: no REST write slipped in
        const after = await client.query<{ n: number }>(
          "select count(*)::int as n from public.notes where owner_id = $1",
          [owner.id],
        );
        expect(after.rows[0]?.n).toBe((rows[0]?.n ?? 0) + 1);
        await client.query(i % 5 === 4 ? "rollback" : "commit");
      }
    })();
    await Promise.all([...rest, wire]);
    const { data } = await admin.from("notes").select("title").eq("owner_id", owner.id);
    const titles = (data ?? []).map((r) => r.title).sort();
    const expected = [
      ...Array.from({ length: rounds }, (_, i) => `rest ${i}`),
      ...Array.from({ length: rounds }, (_, i) => i)
        .filter((i) => i % 5 !== 4)
        .map((i) => `pg ${i}`),
    ].sort();
    expect(titles).toEqual(expected);
  });

  it("ends a connection idle in a transaction while the API waits (25P03), rolling it back", async () => {
    const owner = await user();
    const client = await connect();
    const ended = new Promise<Error>((resolve) => client.once("error", resolve));
    await client.query("begin");
    await client.query(
      "insert into public.notes (owner_id, title) values ($1, 'never committed')",
      [owner.id],
    );
    // the API has to wait for the transaction, then goes on once the session is ended
    await restInsert(owner.id, "after the idle session");
    expect(await ended).toMatchObject({
      code: "25P03",
      message: "terminating connection due to idle-in-transaction timeout",
    });
    const { data } = await admin.from("notes").select("title").eq("owner_id", owner.id);
    expect(data).toEqual([{ title: "after the idle session" }]);
    // a new connection works
    const again = await connect();
    expect((await again.query("select 1 as ok")).rows).toEqual([{ ok: 1 }]);
  });

  it("lets a connection keep an open transaction as long as nobody else waits", async () => {
    const client = await connect();
    await client.query("begin");
    await client.query("create temporary table kept (n int)");
    await new Promise((r) => setTimeout(r, IDLE_LIMIT * 2));
    await client.query("insert into kept values (1)");
    expect((await client.query("select count(*)::int as n from kept")).rows).toEqual([{ n: 1 }]);
    await client.query("rollback");
  });

  it("asks for the password over SCRAM-SHA-256 and refuses a wrong one (28P01)", async () => {
    const socket = await rawSocket();
    socket.write(startupPacket({ user: "postgres", database: "postgres" }));
    const reply = await firstReply(socket);
    socket.destroy();
    // AuthenticationSASL offering SCRAM-SHA-256 (no -PLUS: there is no TLS to bind to)
    expect(reply).toEqual(
      Buffer.concat([
        Buffer.from([0x52, 0, 0, 0, 23, 0, 0, 0, 10]),
        Buffer.from("SCRAM-SHA-256\0\0"),
      ]),
    );
    const refused = async (url: string) => {
      const client = new pg.Client({ connectionString: url });
      client.on("error", () => {});
      return client.connect().then(
        () => client.end().then(() => undefined),
        (error: Error) => error,
      );
    };
    const url = new URL(String(local.dbUrl));
    url.password = "wrong";
    expect(await refused(url.href)).toMatchObject({
      code: "28P01",
      message: 'password authentication failed for user "postgres"',
    });
    // Only the postgres user logs in (the session would be postgres's whatever the name said).
    url.password = "postgres";
    url.username = "anon";
    expect(await refused(url.href)).toMatchObject({
      code: "28P01",
      message: 'password authentication failed for user "anon"',
    });
    expect(await serving()).toBeLessThan(2000);
  });

  it("closes a startup packet over 10 000 bytes, and keeps serving", async () => {
    // At the limit (10 000 bytes after the length word): answered. One byte over: closed.
    const atLimit = await rawSocket();
    atLimit.write(startupPacket({ user: "postgres" }, 10_004 - 41));
    expect((await firstReply(atLimit)) as Buffer).toHaveLength(24);
    atLimit.destroy();
    const over = await rawSocket();
    over.write(startupPacket({ user: "postgres" }, 10_004 - 40));
    expect(await firstReply(over)).toBe("closed");
    expect(await serving()).toBeLessThan(2000);
  });

  it("closes a startup packet that declares 2 GB at once; the database does not stall", async () => {
    const stderr = vi.spyOn(process.stderr, "write");
    try {
      // A startup packet that declares 2 GB, and a client that keeps sending: the connection is
      // closed after its first 8 bytes, and the database answers others meanwhile.
      const flood = await rawSocket();
      const header = Buffer.alloc(8);
      header.writeInt32BE(0x7fffffff, 0);
      header.writeInt32BE(0x00030000, 4);
      flood.write(header);
      const chunk = Buffer.alloc(1 << 20, 0x61);
      const started = performance.now();
      const pump = (async () => {
        while (!flood.destroyed && performance.now() - started < 4000) {
          if (!flood.write(chunk)) {
            await new Promise((resolve) => {
              flood.once("drain", resolve);
              flood.once("close", resolve);
            });
          }
        }
      })();
      await new Promise((r) => setTimeout(r, 300));
      expect(await serving()).toBeLessThan(1500);
      expect(await closedWithin(flood, 1000)).toBe(true);
      await pump;
      const logged = stderr.mock.calls.map(([line]) => String(line)).join("");
      expect(logged).toMatch(/Postgres port: invalid length of startup packet/);
    } finally {
      stderr.mockRestore();
    }
  }, 30_000);

  it("closes a message over Postgres's limit for its type, and keeps serving", async () => {
    // Sync, a small message: 10 000 bytes at most; Query, a large one: 1 GB at most.
    for (const [type, length] of [
      ["S", 10_005],
      ["Q", 0x40000000],
    ] as const) {
      const client = await connect();
      const ended = new Promise((resolve) => {
        client.once("end", resolve);
        client.once("error", resolve);
      });
      const header = Buffer.alloc(5);
      header.write(type, 0);
      header.writeInt32BE(length, 1);
      const socket = (client as unknown as { connection: { stream: Socket } }).connection.stream;
      socket.write(header);
      socket.write(Buffer.alloc(64 * 1024));
      await ended;
      expect(await serving()).toBeLessThan(2000);
    }
  });

  it("sends Realtime the changes and broadcasts a connection makes, at its commit; its LISTENs stay its own", async () => {
    const client = await connect();
    await client.query(`
      create table if not exists public.port_feed (id int primary key, note text);
      grant select on public.port_feed to anon;
      do $$ begin
        if not exists (select 1 from pg_publication_tables
                       where pubname = 'supabase_realtime' and tablename = 'port_feed') then
          alter publication supabase_realtime add table public.port_feed;
        end if;
      end $$;
    `);
    const notified: string[] = [];
    client.on("notification", (n) => notified.push(n.channel));
    await client.query("listen port_own");
    const anon = createClient(local.url, KEYS.publishable, {
      auth: { persistSession: false, autoRefreshToken: false },
    });
    const seen: unknown[] = [];
    const sent: unknown[] = [];
    const channel = anon
      .channel(`port-${crypto.randomUUID()}`)
      .on("postgres_changes", { event: "INSERT", schema: "public", table: "port_feed" }, (p) =>
        seen.push(p.new),
      );
    const topic = `port-broadcast-${crypto.randomUUID()}`;
    const broadcasts = anon
      .channel(topic)
      .on("broadcast", { event: "hello" }, (m) => sent.push(m.payload));
    const subscribed = (c: typeof channel, system: boolean) =>
      new Promise<void>((resolve, reject) => {
        if (system) c.on("system", {}, (m) => m.status === "ok" && resolve());
        c.subscribe((status, error) => {
          if (status === "SUBSCRIBED" && !system) resolve();
          else if (status === "CHANNEL_ERROR") reject(error);
        });
      });
    try {
      await Promise.all([subscribed(channel, true), subscribed(broadcasts, false)]);
      const id = Math.floor(Math.random() * 1e9);
      await client.query("insert into public.port_feed values ($1, 'from the port')", [id]);
      await client.query("select realtime.send('{\"n\": 1}', 'hello', $1, false)", [topic]);
      // nothing else writes: the events come from the port's own commits
      await vi.waitFor(() => expect(seen).toEqual([{ id, note: "from the port" }]), {
        timeout: 5000,
      });
      await vi.waitFor(() => expect(sent).toEqual([expect.objectContaining({ n: 1 })]), {
        timeout: 5000,
      });
      await client.query("notify port_own");
      await vi.waitFor(() => expect(notified).toContain("port_own"));
      // the backend's own channels are not the connection's
      expect(notified).toEqual(["port_own"]);
    } finally {
      await anon.removeAllChannels();
    }
  });

  it("serves psql", async () => {
    if (!existsSync("/usr/bin/psql")) return;
    const { stdout } = await promisify(execFile)("/usr/bin/psql", [
      local.dbUrl as string,
      "-Atc",
      "select count(*) > 0 from pg_tables where schemaname = 'auth' and tablename = 'users'",
    ]);
    expect(stdout.trim()).toBe("t");
  });
});

describe("a Postgres port that is taken", () => {
  it("fails the start at once with EADDRINUSE, and frees the API's port", async () => {
    const listening = async (port: number) => {
      const server: Server = createServer();
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, "127.0.0.1", resolve);
      });
      return server;
    };
    const holder = await listening(0);
    const taken = (holder.address() as { port: number }).port;
    const apiPort = await freePort();
    try {
      const started = performance.now();
      // before: the failed open's clean-up waited forever on the thread that had stopped
      const failure = await createLocalBackend({
        projectDir: ROOT,
        host: "127.0.0.1",
        port: apiPort,
        postgresPort: taken,
        seed: false,
      }).then(
        () => undefined,
        (error: NodeJS.ErrnoException) => error,
      );
      expect(failure?.code).toBe("EADDRINUSE");
      // the Postgres port's refusal, not the API's (a port another test file took meanwhile)
      expect(failure?.message).toContain(`:${taken}`);
      expect(performance.now() - started).toBeLessThan(15_000);
      (await listening(apiPort)).close();
    } finally {
      holder.close();
    }
  }, 30_000);
});

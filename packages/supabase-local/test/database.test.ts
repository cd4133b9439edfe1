// The database in its worker thread (src/database/) stands in for PGlite: the query options the
// backend passes must mean what they mean to PGlite, though functions cannot cross the thread.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type PGlite, TransactionAbortedError } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { pgliteEngine } from "../src/database/engine.ts";
import { openDatabase, prepareDatabase } from "../src/database/open.ts";
import { baseSnapshot, snapshotCacheDir } from "../src/database/snapshot.ts";

let db: PGlite;
beforeAll(async () => {
  db = await openDatabase(undefined, {
    snapshot: await baseSnapshot(snapshotCacheDir(process.cwd())),
  });
}, 60_000);
afterAll(() => db?.close());

const OPEN = fileURLToPath(new URL("../src/database/open.ts", import.meta.url));
const ENGINE = fileURLToPath(new URL("../src/database/engine.ts", import.meta.url));
const SNAPSHOT = fileURLToPath(new URL("../src/database/snapshot.ts", import.meta.url));

const JSON_OID = 114;
const SQL = `SELECT '{"b": 1.50, "a": [1e2]}'::json AS j, '{"n": 1.50}'::jsonb AS jb, 7 AS n`;

describe("query options across the worker thread", () => {
  test("parsers: the values of their types as Postgres's text, the others parsed as usual", async () => {
    const asText = (text: string) => `<${text}>`;
    const { rows } = await db.query(SQL, [], { parsers: { [JSON_OID]: asText } });
    expect(rows).toEqual([{ j: '<{"b": 1.50, "a": [1e2]}>', jb: { n: 1.5 }, n: 7 }]);
    // without them, json is parsed
    expect((await db.query(SQL)).rows).toEqual([{ j: { b: 1.5, a: [100] }, jb: { n: 1.5 }, n: 7 }]);
  });

  test("parsers inside a transaction and with rowMode array", async () => {
    const rows = await db.transaction(
      async (tx) =>
        (
          await tx.query(SQL, [], {
            rowMode: "array",
            parsers: { [JSON_OID]: (text: string) => text },
          })
        ).rows,
    );
    expect(rows).toEqual([['{"b": 1.50, "a": [1e2]}', { n: 1.5 }, 7]]);
  });
});

describe("statements in one trip (database/thread/query.js)", () => {
  test("parameters of every kind arrive as PGlite's own query() writes them", async () => {
    const { rows } = await db.query(
      `SELECT $1::text AS text, $2::int AS int, $3::boolean AS bool, $4::jsonb AS obj,
              $5::int[] AS arr, $6::timestamptz AS at, $7::bytea AS bytes, $8::text AS none,
              $9::jsonb AS json_text, $10::boolean AS bool_text`,
      [
        "it's",
        42,
        false,
        { a: [1, "x"] },
        [3, 1, 2],
        new Date("2026-01-02T03:04:05.678Z"),
        new Uint8Array([0, 255]),
        null,
        '{"kept": "as written"}',
        "yes",
      ],
    );
    expect(rows).toEqual([
      {
        text: "it's",
        int: 42,
        bool: false,
        obj: { a: [1, "x"] },
        arr: [3, 1, 2],
        at: new Date("2026-01-02T03:04:05.678Z"),
        bytes: new Uint8Array([0, 255]),
        none: null,
        json_text: { kept: "as written" },
        bool_text: true,
      },
    ]);
  });

  test("Postgres' errors come back whole, and the session takes the next statement", async () => {
    // text only (one trip), a number (described first), a value its serializer refuses
    await expect(db.query("SELECT $1::uuid", ["not-a-uuid"])).rejects.toMatchObject({
      code: "22P02",
      message: 'invalid input syntax for type uuid: "not-a-uuid"',
    });
    await expect(db.query("SELEC $1::int", [1])).rejects.toMatchObject({
      code: "42601",
      message: 'syntax error at or near "SELEC"',
    });
    await expect(db.query("SELECT $1::boolean", [2])).rejects.toThrow(
      "Invalid input for boolean type",
    );
    // and no transaction of the refused statement's is left open to take the next one in: the
    // next statement's now() is its own, not the time the refused one was parsed
    await new Promise((resolve) => setTimeout(resolve, 5));
    const mark = new Date();
    const next = await db.query("SELECT now() >= $1::timestamptz AS own", [mark]);
    expect(next.rows).toEqual([{ own: true }]);
    await expect(db.exec("SELECT 1; SELECT nope")).rejects.toMatchObject({ code: "42703" });
    expect((await db.query("SELECT $1::int + 1 AS n", [1])).rows).toEqual([{ n: 2 }]);
    const results = await db.exec("SELECT 1 AS a; SELECT 2 AS b");
    expect(results.map((r) => r.rows)).toEqual([[{ a: 1 }], [{ b: 2 }]]);
  });

  test("affected rows, as PGlite counts them", async () => {
    await db.exec("CREATE TABLE public.trip_rows (a int)");
    const inserted = await db.query(
      "INSERT INTO public.trip_rows SELECT generate_series(1, $1)",
      [3],
    );
    expect(inserted.affectedRows).toBe(3);
    const updated = await db.query("UPDATE public.trip_rows SET a = a + 1 WHERE a > $1", ["1"]);
    expect(updated.affectedRows).toBe(2);
    await db.exec("DROP TABLE public.trip_rows");
  });
});

describe("prepared once per session (database/thread/query.js)", () => {
  /** This session's statements prepared from `text`. */
  const preparedAs = async (text: string) =>
    (
      await db.query<{ name: string }>(
        "SELECT name FROM pg_prepared_statements WHERE statement = $1",
        [text],
      )
    ).rows.map((row) => row.name);

  test("a statement is parsed the first time it runs and only bound after that", async () => {
    const text = "SELECT $1::int * 2 AS twice, $2::text AS label";
    expect(await preparedAs(text)).toEqual([]);
    expect((await db.query(text, [21, "a"])).rows).toEqual([{ twice: 42, label: "a" }]);
    expect((await db.query(text, [4, "b"])).rows).toEqual([{ twice: 8, label: "b" }]);
    expect((await db.query(text, ["5", "c"])).rows).toEqual([{ twice: 10, label: "c" }]);
    expect(await preparedAs(text)).toEqual([expect.stringMatching(/^_supabase_local_\d+$/)]);
    // a statement Postgres refuses to parse is not kept; one parsed whose values fail is
    await expect(db.query("SELEC 1 AS never")).rejects.toMatchObject({ code: "42601" });
    expect(await preparedAs("SELEC 1 AS never")).toEqual([]);
    await expect(db.query("SELECT $1::uuid AS id", ["nope"])).rejects.toMatchObject({
      code: "22P02",
    });
    expect(await preparedAs("SELECT $1::uuid AS id")).toHaveLength(1);
  });

  test("the same statement sees what changed since it was prepared: rows, roles, tables", async () => {
    await db.exec(
      "CREATE TABLE public.prepared_rows (a int); INSERT INTO public.prepared_rows VALUES (1)",
    );
    const text = "SELECT * FROM public.prepared_rows ORDER BY 1";
    expect((await db.query(text)).rows).toEqual([{ a: 1 }]);
    await db.exec("INSERT INTO public.prepared_rows VALUES (2)");
    expect((await db.query(text)).rows).toEqual([{ a: 1 }, { a: 2 }]);
    // a column more: the statement's result changed under it, so it is prepared again
    await db.exec("ALTER TABLE public.prepared_rows ADD COLUMN b text DEFAULT 'x'");
    expect((await db.query(text)).rows).toEqual([
      { a: 1, b: "x" },
      { a: 2, b: "x" },
    ]);
    // inside a transaction that error stands (the transaction is aborted), as for any driver
    await db.exec("ALTER TABLE public.prepared_rows DROP COLUMN b");
    await expect(db.transaction((tx) => tx.query(text))).rejects.toMatchObject({
      code: "0A000",
    });
    expect((await db.query(text)).rows).toEqual([{ a: 1 }, { a: 2 }]);
    // row level security is applied for the role in force, not the one it was prepared under
    await db.exec(`ALTER TABLE public.prepared_rows ENABLE ROW LEVEL SECURITY;
      CREATE POLICY only_one ON public.prepared_rows FOR SELECT TO anon USING (a = 1);
      GRANT SELECT ON public.prepared_rows TO anon`);
    const asAnon = await db.transaction(async (tx) => {
      await tx.exec("SET LOCAL ROLE anon");
      return (await tx.query(text)).rows;
    });
    expect(asAnon).toEqual([{ a: 1 }]);
    expect((await db.query(text)).rows).toEqual([{ a: 1 }, { a: 2 }]);
    await db.exec("DROP TABLE public.prepared_rows");
  });

  test("statements removed behind its back (DEALLOCATE ALL, DISCARD ALL) are prepared again", async () => {
    const text = "SELECT $1::text || '!' AS shout";
    expect((await db.query(text, ["hey"])).rows).toEqual([{ shout: "hey!" }]);
    await db.exec("DEALLOCATE ALL");
    expect((await db.query(text, ["again"])).rows).toEqual([{ shout: "again!" }]);
    await db.exec("DISCARD ALL");
    expect((await db.query(text, ["and again"])).rows).toEqual([{ shout: "and again!" }]);
    expect(await preparedAs(text)).toHaveLength(1);
  });

  test("a session keeps the 500 it used last", async () => {
    for (let i = 0; i < 520; i++) await db.query(`SELECT ${i} AS n, $1::text AS k`, ["k"]);
    const { rows } = await db.query<{ kept: number; first: boolean; last: boolean }>(
      `SELECT count(*)::int AS kept,
              bool_or(statement = 'SELECT 0 AS n, $1::text AS k') AS first,
              bool_or(statement = 'SELECT 519 AS n, $1::text AS k') AS last
         FROM pg_prepared_statements WHERE name LIKE '\\_supabase\\_local\\_%'`,
    );
    expect(rows[0]?.kept).toBe(500);
    expect(rows[0]?.first).toBe(false);
    expect(rows[0]?.last).toBe(true);
  });
});

describe("transactions (BEGIN travels with the first statement)", () => {
  test("the first statement is inside the transaction: undone by a rollback, same now()", async () => {
    const failed = db.transaction(async (tx) => {
      await tx.exec("CREATE TABLE public.tx_first (a int)");
      const [first, second] = [
        await tx.query<{ t: string }>("SELECT now()::text AS t"),
        await tx.query<{ t: string }>(
          "SELECT clock_timestamp() > now() AS later, now()::text AS t",
        ),
      ];
      expect(second.rows[0]?.t).toBe(first.rows[0]?.t);
      throw new Error("undo");
    });
    await expect(failed).rejects.toThrow("undo");
    const { rows } = await db.query("SELECT to_regclass('public.tx_first') AS t");
    expect(rows).toEqual([{ t: null }]);
  });

  test("a failing first statement, an empty transaction and an early rollback leave no transaction open", async () => {
    await expect(db.transaction((tx) => tx.exec("SELECT nope"))).rejects.toThrow(/nope/);
    expect(await db.transaction(async () => "nothing sent")).toBe("nothing sent");
    await db.transaction((tx) => tx.rollback());
    // outside a transaction each statement has a now() of its own; a transaction left open (or
    // aborted) would answer the same one (or refuse)
    const now = async () => (await db.query<{ t: string }>("SELECT now()::text AS t")).rows[0]?.t;
    const before = await now();
    await db.query("SELECT pg_sleep(0.002)");
    expect(await now()).not.toBe(before);
  });

  test("a transaction whose failed statement was caught ends in PGlite's TransactionAbortedError", async () => {
    const committed = db.transaction(async (tx) => {
      await tx.exec("CREATE TABLE public.tx_aborted (a int)");
      await tx.exec("SELECT nope").catch(() => "caught");
      return "returned normally";
    });
    // COMMIT of an aborted transaction rolls back; PGlite's own transaction() says so this way
    await expect(committed).rejects.toBeInstanceOf(TransactionAbortedError);
    const { rows } = await db.query("SELECT to_regclass('public.tx_aborted') AS t");
    expect(rows).toEqual([{ t: null }]);
  });
});

describe("extensions", () => {
  test("pgcrypto, whose library loads at its first call, answers in a database opened from a snapshot", async () => {
    const { rows } = await db.query<{ hash: string; matches: boolean; digest: string }>(
      `SELECT h AS hash, extensions.crypt('secret', h) = h AS matches,
              encode(extensions.digest('abc', 'sha256'), 'hex') AS digest
         FROM (SELECT extensions.crypt('secret', extensions.gen_salt('bf', 4)) AS h) AS hashed`,
    );
    expect(rows[0]?.hash).toMatch(/^\$2a\$04\$[./A-Za-z0-9]{53}$/);
    expect(rows[0]?.matches).toBe(true);
    expect(rows[0]?.digest).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
  });
});

describe("the setup mark (prepareDatabase)", () => {
  const anonUsesExtensions = async () =>
    (
      await db.query<{ ok: boolean }>(
        "SELECT has_schema_privilege('anon', 'extensions', 'USAGE') AS ok",
      )
    ).rows[0]?.ok;

  test("a database marked by this version is left alone; another mark sets it up again", async () => {
    expect(await anonUsesExtensions()).toBe(true);
    await db.exec("REVOKE USAGE ON SCHEMA extensions FROM anon");
    try {
      await prepareDatabase(db);
      expect(await anonUsesExtensions()).toBe(false); // marked: roles.sql did not run
      await db.exec("COMMENT ON SCHEMA auth IS 'supabase-local setup of another version'");
      await prepareDatabase(db);
      expect(await anonUsesExtensions()).toBe(true); // roles.sql ran again (its grants)
      const { rows } = await db.query<{ mark: string }>(
        "SELECT obj_description('auth'::regnamespace, 'pg_namespace') AS mark",
      );
      expect(rows[0]?.mark).toMatch(/^supabase-local setup [0-9a-f]{64}$/);
    } finally {
      await db.exec("GRANT USAGE ON SCHEMA extensions TO anon");
    }
  });
});

describe("the database thread", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "database-thread-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Runs `body` in a new Node process (module code, with `openDatabase`, `prestartDatabaseThread`
   * and the base snapshot's `snapshot` in scope): its exit status, its output, and how long it took. */
  function inProcess(body: string, nodeOptions: string[] = []) {
    const script = `import { openDatabase } from ${JSON.stringify(OPEN)};
      import { prestartDatabaseThread } from ${JSON.stringify(ENGINE)};
      import { baseSnapshot, snapshotCacheDir } from ${JSON.stringify(SNAPSHOT)};
      const snapshot = await baseSnapshot(snapshotCacheDir(${JSON.stringify(process.cwd())}));
      ${body}`;
    const started = performance.now();
    const result = spawnSync(
      process.execPath,
      [...nodeOptions, "--input-type=module", "--eval", script],
      { encoding: "utf8", timeout: 30_000 },
    );
    return {
      status: result.status,
      stdout: result.stdout.trim().split("\n"),
      stderr: result.stderr,
      seconds: (performance.now() - started) / 1000,
    };
  }

  // postMessage copies an ArrayBuffer on both sides: 11 MB on the way to every open
  test("is sent PGlite's files in shared memory, which postMessage does not copy", async () => {
    const { fsBundle, extensionFiles } = await pgliteEngine();
    expect(fsBundle.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(fsBundle.byteLength).toBeGreaterThan(1_000_000);
    expect(extensionFiles.length).toBeGreaterThan(100);
    for (const file of extensionFiles) expect(file.data.buffer).toBeInstanceOf(SharedArrayBuffer);
  });

  const OPEN_QUERY_CLOSE = `const db = await openDatabase(undefined, { snapshot });
    console.log((await db.query("SELECT 1 AS one")).rows[0].one);
    await db.close();`;

  test("takes none of the process's command-line options: a preload is not loaded again in it", () => {
    const preload = join(dir, "preload.mjs");
    writeFileSync(
      preload,
      `import { isMainThread } from "node:worker_threads";
      console.log(isMainThread ? "preload: main thread" : "preload: another thread");`,
    );
    const result = inProcess(OPEN_QUERY_CLOSE, ["--import", preload]);
    expect(result.stderr).toBe("");
    expect(result.stdout).toEqual(["preload: main thread", "1"]);
  }, 60_000);

  // createLocalBackend and the command line start one before they know the database; the open
  // sends it which database to open, with the engine
  test("started ahead of its open: the database opens and answers, and the process ends after close", () => {
    const result = inProcess(`prestartDatabaseThread();\n${OPEN_QUERY_CLOSE}`);
    expect(result).toMatchObject({ status: 0, stdout: ["1"], stderr: "" });
  }, 60_000);

  test("started and never taken, it keeps no process alive", () => {
    // (a thread kept alive would hold the process until the spawn's 30 s timeout)
    const result = inProcess(`prestartDatabaseThread(); console.log("started");`);
    expect(result).toMatchObject({ status: 0, stdout: ["started"], stderr: "" });
    expect(result.seconds).toBeLessThan(15);
  }, 60_000);
});

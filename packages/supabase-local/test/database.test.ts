// The database in its worker thread (database.ts) stands in for PGlite: the query options the
// backend passes must mean what they mean to PGlite, though functions cannot cross the thread.
import { type PGlite, TransactionAbortedError } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openDatabase, prepareDatabase } from "../src/database.ts";
import { baseSnapshot, snapshotCacheDir } from "../src/snapshot.ts";

let db: PGlite;
beforeAll(async () => {
  db = await openDatabase(undefined, {
    snapshot: await baseSnapshot(snapshotCacheDir(process.cwd())),
  });
}, 60_000);
afterAll(() => db?.close());

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

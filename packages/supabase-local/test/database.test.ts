// The database in its worker thread (database.ts) stands in for PGlite: the query options the
// backend passes must mean what they mean to PGlite, though functions cannot cross the thread.
import type { PGlite } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openDatabase } from "../src/database.ts";
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

// supabase/migrations applied like the Supabase CLI: in version order, recorded in
// supabase_migrations.schema_migrations, only new files on restart, seed only on a fresh database.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openDatabase } from "../../src/database/open.ts";
import { baseSnapshot, snapshotCacheDir, snapshotKey } from "../../src/database/snapshot.ts";
import { applyMigrations, MigrationError } from "../../src/project/migrations.ts";

/** A database with the backend's roles and auth schema and nothing of a project's (initdb's
 * seconds saved by starting from the base snapshot). */
async function database(dataDir?: string): Promise<PGlite> {
  const snapshot = await baseSnapshot(snapshotCacheDir(process.cwd()));
  return openDatabase(dataDir, { snapshot });
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "migrations-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function project(files: Record<string, string>, seed = "") {
  const root = await mkdtemp(join(dir, "p-"));
  const migrationsDir = join(root, "migrations");
  await (await import("node:fs/promises")).mkdir(migrationsDir);
  for (const [name, sql] of Object.entries(files)) await writeFile(join(migrationsDir, name), sql);
  const seedFile = join(root, "seed.sql");
  await writeFile(seedFile, seed);
  return { root, migrationsDir, seedFiles: [seedFile] };
}

const history = async (db: PGlite) =>
  (
    await db.query<{ version: string; name: string }>(
      "SELECT version, name FROM supabase_migrations.schema_migrations ORDER BY version",
    )
  ).rows;

describe("applyMigrations", () => {
  test("in version order, recorded, seed once, only new files on restart (persistent database)", async () => {
    const p = await project(
      {
        "20240102000000_add_col.sql": "ALTER TABLE items ADD COLUMN note text;",
        "20240101000000_items.sql": "CREATE TABLE items (id int PRIMARY KEY, name text);",
        "README.md": "not a migration",
      },
      "INSERT INTO items (id, name) VALUES (1, 'seeded');",
    );
    const dataDir = join(p.root, "pgdata");
    let db = await database(dataDir);
    await applyMigrations(db, p);
    expect(await history(db)).toEqual([
      { version: "20240101000000", name: "items" },
      { version: "20240102000000", name: "add_col" },
    ]);
    expect((await db.query("SELECT id, name, note FROM items")).rows).toEqual([
      { id: 1, name: "seeded", note: null },
    ]);
    await db.close();

    await writeFile(
      join(p.migrationsDir, "20240103000000_more.sql"),
      "INSERT INTO items (id, name) VALUES (2, 'from migration');",
    );
    db = await database(dataDir);
    await applyMigrations(db, p); // would fail if it re-ran CREATE TABLE, and would re-seed id 1
    expect((await history(db)).map((r) => r.version)).toEqual([
      "20240101000000",
      "20240102000000",
      "20240103000000",
    ]);
    expect((await db.query("SELECT id FROM items ORDER BY id")).rows).toEqual([
      { id: 1 },
      { id: 2 },
    ]);
    await db.close();
  });

  test("a failing migration stops with file, line and Postgres message, and leaves nothing behind", async () => {
    const p = await project({
      "20240101000000_ok.sql": "CREATE TABLE a (id int);",
      "20240102000000_broken.sql":
        "CREATE TABLE b (id int);\n\nSELECT 1;\nCREATE TABLE c (id nosuchtype);\n",
    });
    const db = await database();
    const error = await applyMigrations(db, p).catch((e) => e);
    expect(error).toBeInstanceOf(MigrationError);
    expect(error.message).toMatch(/20240102000000_broken\.sql:4: type "nosuchtype" does not exist/);
    expect(error.line).toBe(4);
    expect((await history(db)).map((r) => r.version)).toEqual(["20240101000000"]);
    expect((await db.query("SELECT to_regclass('b') AS b")).rows).toEqual([{ b: null }]);
    await db.close();
  });

  test("fixtures run on every start", async () => {
    const p = await project({});
    const fixture = join(p.root, "fixture.sql");
    await writeFile(fixture, "CREATE TABLE IF NOT EXISTS f (n int); INSERT INTO f VALUES (1);");
    const db = await database();
    await applyMigrations(db, { ...p, fixtures: [fixture] });
    await applyMigrations(db, { ...p, fixtures: [fixture] });
    expect((await db.query("SELECT count(*)::int AS n FROM f")).rows).toEqual([{ n: 2 }]);
    await db.close();
  });

  test("[db.migrations] enabled = false: a fresh database gets none, its seed still runs, and its snapshot is its own", async () => {
    const p = await project(
      { "20240101000000_a.sql": "CREATE TABLE a (n int);" },
      "CREATE TABLE seeded (n int);",
    );
    const db = await database();
    await applyMigrations(db, { ...p, migrationsEnabled: false });
    const tables = await db.query("SELECT to_regclass('a') AS a, to_regclass('seeded') AS seeded");
    expect(tables.rows).toEqual([{ a: null, seeded: "seeded" }]);
    expect(await history(db)).toEqual([]);
    await db.close();
    const on = await snapshotKey({ migrationsDir: p.migrationsDir, seedFiles: p.seedFiles });
    const off = await snapshotKey({ ...p, migrationsEnabled: false });
    expect(off).not.toBe(on);
  });
});

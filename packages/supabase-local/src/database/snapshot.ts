// The start snapshot: a data directory that has already been through initdb, the API roles and the
// auth schema (sql/roles.sql, sql/auth.sql), the project's migrations and its seed. Making one takes
// seconds (initdb alone is most of them); copying one takes a fraction of a second. So a fresh
// database (an in-memory backend, a persisted one after `supabase-local reset`) starts as a copy
// of the snapshot, made once per set of inputs and kept in a cache:
//
//   <project>/node_modules/.cache/supabase-local/   (the OS temp directory without node_modules)
//     base-<key>/   initdb + roles.sql + auth.sql: PGlite's version, its extensions, the two files
//     <key>/        a copy of the base + the project's migrations and seed: the base's key, each
//                   migration's file name and content, the seed's content
//     <key>-spare/  a copy of <key> made after a persisted database's fresh start, which the next
//                   one (after `supabase-local reset`) moves into place instead of copying
//                   (data-dir.ts: provideData, refillSpare); one, the latest snapshot's
//
// Editing any input gives a new key, so the next fresh start makes a new snapshot (from the base:
// an edited migration costs a copy and the project's SQL, not another initdb). Two processes that
// make the same one at once each build in a directory of their own and rename it into place: one
// rename wins, the other process uses the winner's and removes its own. A reader never sees a
// half-written snapshot. The few of each kind used last are kept, and any used in the last minute
// (a start may be copying it).
import { createHash, randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, readdir, readFile, rename, rm, stat, utimes } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { projectCacheDir } from "../boot/cache-dir.js";
import { applyMigrations, migrationFiles } from "../project/migrations.ts";
import { discardSpare, isAlive, spareOf } from "./data-dir.ts";
import { Database } from "./database.ts";
import { EXTENSIONS, localExtensionSources } from "./extensions.ts";
import { prepareDatabase, setupSql } from "./open.ts";

/** Bumped when what a snapshot holds changes without any of the hashed inputs changing. */
const FORMAT = 1;

/** How many snapshots a cache keeps (the newest): a few branches' worth of migrations. */
const KEEP = 3;

/**
 * A snapshot used more recently than this is kept even beyond KEEP: a start may be copying it.
 * (Projects without node_modules share the OS temp directory's cache: several starting at once,
 * each with its own migrations, pushed the one another was copying out of the newest three, and
 * that start failed with ENOENT halfway through its copy.) A copy takes a second or two.
 */
const IN_USE_MS = 60_000;

export interface SnapshotInputs {
  /** supabase/migrations */
  migrationsDir: string;
  /** config.toml [db.migrations] enabled (migrations.ts) */
  migrationsEnabled?: boolean;
  /** the seed files, in order (config.toml [db.seed]; none: no seed) */
  seedFiles?: string[];
  /** config.toml [api] auto_expose_new_tables (migrations.ts) */
  autoExposeNewTables?: boolean;
}

/** The cache a project's snapshots live in (cache-dir.js): its node_modules/.cache. */
export function snapshotCacheDir(projectDir: string): string {
  return projectCacheDir(projectDir);
}

/** The key of the base snapshot: PGlite with the API roles and auth schema, no project yet. */
async function baseKey(): Promise<string> {
  const { roles, auth, realtime, storage } = await setupSql();
  return digest([
    ["format", String(FORMAT)],
    ["pglite", await pgliteVersion()],
    ["extensions", Object.keys(EXTENSIONS).sort().join(",")],
    ["local extensions", localExtensionSources()],
    ["roles.sql", roles],
    ["auth.sql", auth],
    ["realtime.sql", realtime],
    ["storage.sql", storage],
  ]);
}

/**
 * The hash of every input of a project's snapshot (see the top of this file). The inputs are a few
 * small files, read synchronously: a fresh start computes this while PGlite's 15 MB are being read
 * (pgliteEngine), and asynchronous reads queued behind those on libuv's four threads, 16-76 ms
 * for the whole key against 3-10 ms now.
 */
export async function snapshotKey(inputs: SnapshotInputs): Promise<string> {
  const parts: [string, string][] = [["base", await baseKey()]];
  if (inputs.autoExposeNewTables === false) parts.push(["auto_expose_new_tables", "false"]);
  if (inputs.migrationsEnabled === false) parts.push(["migrations", "off"]);
  else
    for (const { file, path } of await migrationFiles(inputs.migrationsDir))
      parts.push([`migration ${file}`, readFileSync(path, "utf8")]);
  for (const seedFile of inputs.seedFiles ?? []) {
    let seed: string | null;
    try {
      seed = readFileSync(seedFile, "utf8");
    } catch {
      seed = null;
    }
    parts.push(seed === null ? [`no seed ${seedFile}`, ""] : [`seed ${seedFile}`, seed]);
  }
  return digest(parts);
}

/**
 * The snapshot for these inputs: its directory in `cacheDir`, made first when the cache has none.
 * It is made from the base snapshot (initdb, roles.sql, auth.sql; made first when missing too), so
 * an edited migration or seed costs a copy and the project's SQL, not another initdb. A migration
 * or seed that fails throws its MigrationError, as a start without a snapshot would.
 */
export async function snapshotFor(inputs: SnapshotInputs, cacheDir: string): Promise<string> {
  const key = await snapshotKey(inputs);
  const ready = join(cacheDir, key);
  if (existsSync(join(ready, "PG_VERSION"))) return used(ready);
  const base = await baseSnapshot(cacheDir);
  return cached(
    cacheDir,
    key,
    async (db) => {
      await applyMigrations(db as unknown as PGlite, inputs);
    },
    base,
  );
}

/** The base snapshot (initdb, roles.sql, auth.sql; no project): made first when missing. */
export async function baseSnapshot(cacheDir: string): Promise<string> {
  return cached(cacheDir, `base-${await baseKey()}`, async (db) => {
    await prepareDatabase(db);
  });
}

/**
 * `cacheDir/name`, made by `build` on a database started in a directory of this process's own
 * (from `from`, when given) and put in place by putInCache.
 */
async function cached(
  cacheDir: string,
  name: string,
  build: (db: Database) => Promise<void>,
  from?: string,
): Promise<string> {
  return putInCache(cacheDir, name, async (building) => {
    const db = await Database.open(building, { snapshot: from });
    try {
      await build(db);
      await db.exec("CHECKPOINT");
    } finally {
      await db.close();
    }
  });
}

/**
 * `cacheDir/name` as it is, or made by `make` in a directory of this process's own and renamed
 * into place when done, so that no reader ever sees a half-made snapshot (two processes making
 * the same one: one rename wins, the other uses the winner's). Then the cache is pruned.
 */
export async function putInCache(
  cacheDir: string,
  name: string,
  make: (dir: string) => Promise<void>,
): Promise<string> {
  const dir = join(cacheDir, name);
  if (existsSync(join(dir, "PG_VERSION"))) return used(dir);
  await mkdir(cacheDir, { recursive: true });
  const building = join(cacheDir, `.${name}.${process.pid}.${randomBytes(4).toString("hex")}`);
  try {
    await make(building);
    try {
      await rename(building, dir);
    } catch (error) {
      // another process put the same snapshot in place first: use theirs
      if (!existsSync(join(dir, "PG_VERSION"))) throw error;
    }
  } finally {
    await rm(building, { recursive: true, force: true });
  }
  await used(dir);
  await prune(cacheDir);
  return dir;
}

/**
 * Marks a snapshot as just used (its mtime): prune keeps the most recently used, so a snapshot a
 * start is about to copy is not the one another process's prune removes.
 */
async function used(dir: string): Promise<string> {
  const now = new Date();
  await utimes(dir, now, now).catch(() => {});
  return dir;
}

/**
 * Keeps the KEEP snapshots of each kind (base, project) used last, and any used in the last
 * IN_USE_MS, and removes the others (with their spares, see data-dir.ts), and the build
 * directories of processes that are gone (spares being made or moved included).
 */
async function prune(cacheDir: string): Promise<void> {
  const snapshots = new Map<string, { path: string; mtime: number }[]>();
  for (const name of await readdir(cacheDir).catch(() => [] as string[])) {
    const path = join(cacheDir, name);
    const building = /^\.[\w-]+\.(\d+)\.[0-9a-f]+$/.exec(name);
    const snapshot = /^(base-)?[0-9a-f]{32}$/.exec(name);
    if (building && !isAlive(Number(building[1]))) await rm(path, { recursive: true, force: true });
    if (!snapshot) continue;
    const kind = snapshot[1] ?? "";
    const mtime = await stat(path).then(
      (s) => s.mtimeMs,
      () => 0,
    );
    snapshots.set(kind, [...(snapshots.get(kind) ?? []), { path, mtime }]);
  }
  for (const list of snapshots.values()) {
    list.sort((a, b) => b.mtime - a.mtime);
    for (const { path, mtime } of list.slice(KEEP)) {
      if (Date.now() - mtime < IN_USE_MS) continue;
      await rm(path, { recursive: true, force: true });
      await discardSpare(spareOf(path));
    }
  }
}

function digest(parts: [string, string][]): string {
  const hash = createHash("sha256");
  for (const [label, value] of parts)
    hash.update(`${label}\0${Buffer.byteLength(value)}\0${value}\0`);
  return hash.digest("hex").slice(0, 32);
}

async function pgliteVersion(): Promise<string> {
  // the package's exports leave its package.json out: find it beside the resolved entry point
  let dir = dirname(createRequire(import.meta.url).resolve("@electric-sql/pglite"));
  while (!existsSync(join(dir, "package.json")) && dir !== dirname(dir)) dir = dirname(dir);
  return (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string })
    .version;
}

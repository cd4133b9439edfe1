import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import type { Extensions } from "@electric-sql/pglite";
import { amcheck } from "@electric-sql/pglite/contrib/amcheck";
import { bloom } from "@electric-sql/pglite/contrib/bloom";
import { btree_gin } from "@electric-sql/pglite/contrib/btree_gin";
import { btree_gist } from "@electric-sql/pglite/contrib/btree_gist";
import { citext } from "@electric-sql/pglite/contrib/citext";
import { cube } from "@electric-sql/pglite/contrib/cube";
import { dict_int } from "@electric-sql/pglite/contrib/dict_int";
import { dict_xsyn } from "@electric-sql/pglite/contrib/dict_xsyn";
import { earthdistance } from "@electric-sql/pglite/contrib/earthdistance";
import { file_fdw } from "@electric-sql/pglite/contrib/file_fdw";
import { fuzzystrmatch } from "@electric-sql/pglite/contrib/fuzzystrmatch";
import { hstore } from "@electric-sql/pglite/contrib/hstore";
import { intarray } from "@electric-sql/pglite/contrib/intarray";
import { isn } from "@electric-sql/pglite/contrib/isn";
import { lo } from "@electric-sql/pglite/contrib/lo";
import { ltree } from "@electric-sql/pglite/contrib/ltree";
import { moddatetime } from "@electric-sql/pglite/contrib/moddatetime";
import { pageinspect } from "@electric-sql/pglite/contrib/pageinspect";
import { pg_buffercache } from "@electric-sql/pglite/contrib/pg_buffercache";
import { pg_freespacemap } from "@electric-sql/pglite/contrib/pg_freespacemap";
import { pg_stat_statements } from "@electric-sql/pglite/contrib/pg_stat_statements";
import { pg_surgery } from "@electric-sql/pglite/contrib/pg_surgery";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import { pg_visibility } from "@electric-sql/pglite/contrib/pg_visibility";
import { pg_walinspect } from "@electric-sql/pglite/contrib/pg_walinspect";
import { pgcrypto } from "@electric-sql/pglite/contrib/pgcrypto";
import { seg } from "@electric-sql/pglite/contrib/seg";
import { tablefunc } from "@electric-sql/pglite/contrib/tablefunc";
import { tcn } from "@electric-sql/pglite/contrib/tcn";
import { tsm_system_rows } from "@electric-sql/pglite/contrib/tsm_system_rows";
import { tsm_system_time } from "@electric-sql/pglite/contrib/tsm_system_time";
import { unaccent } from "@electric-sql/pglite/contrib/unaccent";
import { uuid_ossp } from "@electric-sql/pglite/contrib/uuid_ossp";
import { vector } from "@electric-sql/pglite-pgvector";
import { parseTar } from "nanotar";
import { projectCacheDir } from "../boot/cache-dir.js";
import { inSharedMemory, readShared } from "./shared-memory.ts";

/**
 * The Postgres extensions a Supabase project can create, as far as PGlite builds them: every one of
 * Supabase's Postgres image that PGlite ships (its contrib bundles, and pgvector from
 * @electric-sql/pglite-pgvector). The files are in place from the start, so `create extension vector
 * with schema extensions` in a migration works here as on a hosted project; nothing is created but
 * what a new project has: pgcrypto and uuid-ossp, in schema `extensions` (sql/roles.sql), which
 * seeds use to hash passwords as GoTrue stores them and migrations for uuid defaults. `moddatetime`
 * stands for PGlite's `spi` bundle, which also holds autoinc, insert_username and refint.
 * Supabase's extensions PGlite has no build of (PostGIS, pg_net, pg_cron, pg_graphql, http,
 * pgjwt…) are not available: `create extension` answers Postgres's own "is not available".
 * The database thread (thread/worker.js) puts their files in place and Postgres loads a library
 * when a query first calls it; their names are part of the start snapshot's key (snapshot.ts):
 * adding one here builds a new snapshot. A PGlite of one's own that prepareDatabase() sets up
 * needs them too: `new PGlite({ extensions: EXTENSIONS })` (whose own loader links every library at
 * its start).
 */
export const EXTENSIONS: Extensions = {
  amcheck,
  bloom,
  btree_gin,
  btree_gist,
  citext,
  cube,
  dict_int,
  dict_xsyn,
  earthdistance,
  file_fdw,
  fuzzystrmatch,
  hstore,
  intarray,
  isn,
  lo,
  ltree,
  moddatetime,
  pageinspect,
  pg_buffercache,
  pg_freespacemap,
  pg_stat_statements,
  pg_surgery,
  pg_trgm,
  pg_visibility,
  pg_walinspect,
  pgcrypto,
  seg,
  tablefunc,
  tcn,
  tsm_system_rows,
  tsm_system_time,
  unaccent,
  uuid_ossp,
  vector,
};

/**
 * The extensions the local backend makes itself, in SQL where PGlite has no build of Supabase's:
 * supabase_vault (sql/supabase_vault--*.sql over pgcrypto) and pg_net (sql/pg_net--*.sql, its
 * requests sent by pg-net.ts). Their files go where PGlite's own go.
 */
const LOCAL_EXTENSION_FILES = [
  "supabase_vault.control",
  "supabase_vault--0.3.1.sql",
  "pg_net.control",
  "pg_net--0.20.4.sql",
];

/** The local extensions' files' text, for the start snapshot's key (snapshot.ts). */
export function localExtensionSources(): string {
  return LOCAL_EXTENSION_FILES.map(
    (file) => `${file}\n${readFileSync(new URL(`sql/${file}`, import.meta.url), "utf8")}`,
  ).join("\n");
}

/** A file of an extension's bundle, by its path under PGlite's installation. */
export interface ExtensionFile {
  path: string;
  data: Uint8Array;
}

/**
 * Every file of the EXTENSIONS' bundles (PGlite's contrib tarballs and pgvector's), unpacked, each
 * a view of memory the database threads share (shared-memory.ts).
 */
export async function extensionFiles(): Promise<ExtensionFile[]> {
  const bundles = new Map<string, URL>();
  for (const extension of Object.values(EXTENSIONS)) {
    if (extension instanceof URL) throw new Error("an extension bundle without a setup");
    // a contrib extension's setup only names its bundle: it needs no PGlite to be asked
    const { bundlePath } = await extension.setup(undefined as never, {});
    // several extensions can share a bundle (spi's four)
    if (bundlePath) bundles.set(bundlePath.href, bundlePath);
  }
  const files: ExtensionFile[] = await Promise.all(
    LOCAL_EXTENSION_FILES.map(async (file) => ({
      path: `share/postgresql/extension/${file}`,
      data: await readShared(new URL(`sql/${file}`, import.meta.url)),
    })),
  );
  for (const tar of await Promise.all([...bundles.values()].map(unpacked)))
    for (const entry of parseTar(tar))
      if (entry.type === "file" && entry.data) files.push({ path: entry.name, data: entry.data });
  return files;
}

/**
 * The tar in a gzipped bundle. Gunzipping pgcrypto's is 25 ms of CPU in every start, when the
 * start is short of cores, so it is done once: the tar is kept in the project's cache
 * (cache-dir.js: node_modules/.cache/supabase-local/extensions), named by a hash of the bundle,
 * and read from there after. A cache that cannot be written only costs the gunzip next time.
 */
async function unpacked(bundlePath: URL): Promise<Uint8Array<SharedArrayBuffer>> {
  const bundle = await readFile(bundlePath);
  const name = createHash("sha256").update(bundle).digest("hex").slice(0, 32);
  const file = join(projectCacheDir(process.cwd()), "extensions", `${name}.tar`);
  try {
    return await readShared(file);
  } catch {
    // not cached yet
  }
  const tar = gunzipSync(bundle);
  // Written aside, then renamed into place: a start reading it at the same moment reads all of it
  // or nothing.
  const partial = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
  try {
    await mkdir(join(file, ".."), { recursive: true });
    await writeFile(partial, tar);
    await rename(partial, file);
  } catch {
    await rm(partial, { force: true });
  }
  return inSharedMemory(tar);
}

import { createHash, randomBytes } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import type { Extensions } from "@electric-sql/pglite";
import { pgcrypto } from "@electric-sql/pglite/contrib/pgcrypto";
import { uuid_ossp } from "@electric-sql/pglite/contrib/uuid_ossp";
import { parseTar } from "nanotar";
import { projectCacheDir } from "../boot/cache-dir.js";

/**
 * The Postgres extensions a new Supabase project has that the backend's PGlite loads: pgcrypto
 * and uuid-ossp, in schema `extensions` (sql/roles.sql), which seeds use to hash passwords as
 * GoTrue stores them and migrations for uuid defaults.
 * The database thread (thread/worker.js) passes their files to PGlite, and their names are part
 * of the start snapshot's key (snapshot.ts): adding one here builds a new snapshot. A PGlite of one's own
 * that prepareDatabase() sets up needs them too: `new PGlite({ extensions: EXTENSIONS })`.
 */
export const EXTENSIONS: Extensions = { pgcrypto, uuid_ossp };

/** A file of an extension's bundle, by its path under PGlite's installation. */
export interface ExtensionFile {
  path: string;
  data: Uint8Array;
}

/** Every file of the EXTENSIONS' bundles (PGlite's contrib tarballs), unpacked. */
export async function extensionFiles(): Promise<ExtensionFile[]> {
  const files: ExtensionFile[] = [];
  for (const extension of Object.values(EXTENSIONS)) {
    if (extension instanceof URL) throw new Error("an extension bundle without a setup");
    // a contrib extension's setup only names its bundle: it needs no PGlite to be asked
    const { bundlePath } = await extension.setup(undefined as never, {});
    if (!bundlePath) continue;
    for (const entry of parseTar(await unpacked(bundlePath)))
      if (entry.type === "file" && entry.data) files.push({ path: entry.name, data: entry.data });
  }
  return files;
}

/**
 * The tar in a gzipped bundle. Gunzipping pgcrypto's is 25 ms of CPU in every start, when the
 * start is short of cores, so it is done once: the tar is kept in the project's cache
 * (cache-dir.js: node_modules/.cache/supabase-local/extensions), named by a hash of the bundle,
 * and read from there after. A cache that cannot be written only costs the gunzip next time.
 */
async function unpacked(bundlePath: URL): Promise<Uint8Array> {
  const bundle = await readFile(bundlePath);
  const name = createHash("sha256").update(bundle).digest("hex").slice(0, 32);
  const file = join(projectCacheDir(process.cwd()), "extensions", `${name}.tar`);
  try {
    return await readFile(file);
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
  return tar;
}

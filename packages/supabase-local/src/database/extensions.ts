import { readFile } from "node:fs/promises";
import { gunzipSync } from "node:zlib";
import type { Extensions } from "@electric-sql/pglite";
import { pgcrypto } from "@electric-sql/pglite/contrib/pgcrypto";
import { uuid_ossp } from "@electric-sql/pglite/contrib/uuid_ossp";
import { parseTar } from "nanotar";

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
    for (const entry of parseTar(gunzipSync(await readFile(bundlePath))))
      if (entry.type === "file" && entry.data) files.push({ path: entry.name, data: entry.data });
  }
  return files;
}

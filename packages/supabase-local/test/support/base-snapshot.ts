// A temporary project starts from its own snapshot cache (node_modules/.cache/supabase-local of the
// project, snapshot.ts). Empty, that cache would run initdb again for every such project, about two
// seconds of CPU each; the base layer (initdb, roles, auth) does not depend on the project, so the
// tests copy in the one the repository's cache holds and the project makes only its own layer.
// Projects without node_modules share one cache (the OS temp directory's) and test files run side
// by side: the copy is put in place as snapshot.ts puts a snapshot it made (putInCache), so no
// start ever copies from a base that is still being written.
import { cp } from "node:fs/promises";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { baseSnapshot, putInCache, snapshotCacheDir } from "../../src/database/snapshot.ts";

const REPOSITORY = fileURLToPath(new URL("../../../..", import.meta.url));

/** Copies the repository's base snapshot into `cacheDir` (default: `projectDir`'s own cache). */
export async function withBaseSnapshot(projectDir: string, cacheDir?: string): Promise<void> {
  const base = await baseSnapshot(snapshotCacheDir(REPOSITORY));
  await putInCache(cacheDir ?? snapshotCacheDir(projectDir), basename(base), (dir) =>
    cp(base, dir, { recursive: true }),
  );
}

// A temporary project starts from its own snapshot cache (node_modules/.cache/supabase-local of the
// project, snapshot.ts). Empty, that cache would run initdb again for every such project, about two
// seconds of CPU each; the base layer (initdb, roles, auth) does not depend on the project, so the
// tests copy in the one the repository's cache holds and the project makes only its own layer.
//
// Projects without node_modules share one cache (the OS temp directory's), and test files run side
// by side: the copy is made in a directory of its own and renamed into place, as snapshot.ts puts
// a snapshot it made, so no start ever copies from a base that is still being written.
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { cp, mkdir, rename, rm } from "node:fs/promises";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { baseSnapshot, snapshotCacheDir } from "../../src/snapshot.ts";

const REPOSITORY = fileURLToPath(new URL("../../../..", import.meta.url));

/** Copies the repository's base snapshot into `cacheDir` (default: `projectDir`'s own cache). */
export async function withBaseSnapshot(projectDir: string, cacheDir?: string): Promise<void> {
  const base = await baseSnapshot(snapshotCacheDir(REPOSITORY));
  const cache = cacheDir ?? snapshotCacheDir(projectDir);
  const target = join(cache, basename(base));
  if (existsSync(join(target, "PG_VERSION"))) return;
  await mkdir(cache, { recursive: true });
  // named as snapshot.ts names its build directories, so a crashed copy is cleaned up the same way
  const copying = join(
    cache,
    `.${basename(base)}.${process.pid}.${randomBytes(4).toString("hex")}`,
  );
  try {
    await cp(base, copying, { recursive: true });
    await rename(copying, target).catch((error) => {
      // another test file put it in place first
      if (!existsSync(join(target, "PG_VERSION"))) throw error;
    });
  } finally {
    await rm(copying, { recursive: true, force: true });
  }
}

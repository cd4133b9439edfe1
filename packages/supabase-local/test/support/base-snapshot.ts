// A temporary project starts from its own snapshot cache (node_modules/.cache/supabase-local of the
// project, snapshot.ts). Empty, that cache would run initdb again for every such project, about two
// seconds of CPU each; the base layer (initdb, roles, auth) does not depend on the project, so the
// tests copy in the one the repository's cache holds and the project makes only its own layer.
// Projects without node_modules share one cache (the OS temp directory's) and test files run side
// by side: the copy is put in place as snapshot.ts puts a snapshot it made (putInCache), so no
// start ever copies from a base that is still being written.
import { mkdtempSync } from "node:fs";
import { cp, mkdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
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

/**
 * A project of a test's own in the OS temp directory: `files` (paths under supabase/: migrations,
 * seed.sql, config.toml) written, and a snapshot cache of its own that starts from the base. The
 * test removes `project` when done.
 */
export async function temporaryProject(
  prefix: string,
  files: Record<string, string>,
): Promise<{ project: string; cacheDir: string }> {
  const project = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const cacheDir = join(project, "cache");
  await mkdir(join(project, "supabase", "migrations"), { recursive: true });
  await withBaseSnapshot(project, cacheDir);
  for (const [path, text] of Object.entries(files)) {
    const file = join(project, "supabase", path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, text);
  }
  return { project, cacheDir };
}

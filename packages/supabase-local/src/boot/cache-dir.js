// Where the package keeps what it can make again: the start snapshots (snapshot.ts), the
// TypeScript it has stripped of its types (typescript-cache.js), the extensions' files unpacked
// (database/extensions.ts) and Node's compiled code of the modules a start loads
// (compile-cache.js). JavaScript, as the TypeScript cache is: it runs
// before any TypeScript loads.
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * The project's node_modules/.cache/supabase-local, as other build tools keep theirs there; the
 * OS temp directory's supabase-local-cache when the project has no node_modules.
 * @param {string} projectDir
 * @returns {string}
 */
export function projectCacheDir(projectDir) {
  const modules = join(projectDir, "node_modules");
  return existsSync(modules)
    ? join(modules, ".cache", "supabase-local")
    : join(tmpdir(), "supabase-local-cache");
}

/**
 * Node's compile cache (compile-cache.js): the project's node_modules/.cache/node-compile-cache,
 * the folder `npm test` keeps it in too; the OS temp directory's node-compile-cache when the
 * project has no node_modules. Node keeps a subfolder per Node version in it.
 * @param {string} projectDir
 * @returns {string}
 */
export function compileCacheDir(projectDir) {
  const modules = join(projectDir, "node_modules");
  return existsSync(modules)
    ? join(modules, ".cache", "node-compile-cache")
    : join(tmpdir(), "node-compile-cache");
}

// Node strips the types from every TypeScript module it loads, and it does so on every start:
// for the backend's 90-odd modules (560 KB) that is about 0.2 s of CPU each time (the stripper,
// amaro, first compiles its own WebAssembly, then works through each file), and a start waits for
// the modules it loads before the database opens. Importing this module registers a loader hook
// (module.registerHooks) that keeps what the stripper makes of each file in the cache directory
// (cache-dir.js: node_modules/.cache/supabase-local/typescript), one entry per file, stamped with
// a hash of Node's version and the file's content. A file that is unchanged since its entry was
// written loads from there, with no stripping. An edited file, or a new Node, misses and is
// stripped again.
//
// What runs is the same JavaScript either way: the same stripper, called as module.
// stripTypeScriptTypes() in the mode Node runs it in ("strip": types become whitespace, so lines
// and columns stay where they were). Only what Node strips itself is cached: modules Node would
// load as TypeScript ("module-typescript"), outside node_modules (Node refuses to strip those, and
// still does). Anything the stripper rejects is left for Node to load and report, as without this.
//
// The command line (bin/supabase-local.js), `npm run dev` and the bench's start timing import it
// before any TypeScript. JavaScript, as it has to be: a .ts module here would start the stripper.
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { registerHooks, stripTypeScriptTypes } from "node:module";
import { join } from "node:path";
import { projectCacheDir } from "./cache-dir.js";

const dir = join(projectCacheDir(process.cwd()), "typescript");

// With --experimental-transform-types Node transforms rather than strips: nothing to cache then.
if (process.features.typescript === "strip") {
  registerHooks({
    load(url, context, nextLoad) {
      const loaded = nextLoad(url, context);
      if (loaded.format !== "module-typescript" || url.includes("/node_modules/")) return loaded;
      const source = loaded.source ?? "";
      const typescript = typeof source === "string" ? source : new TextDecoder().decode(source);
      const javascript = cached(url, typescript);
      return javascript === undefined
        ? loaded
        : { format: "module", source: javascript, shortCircuit: true };
    },
  });
}

/**
 * The JavaScript of the TypeScript module at `url`, from the cache or stripped now (and cached);
 * undefined when the stripper rejects it.
 * @param {string} url
 * @param {string} typescript
 * @returns {string | undefined}
 */
function cached(url, typescript) {
  const stamp = `// ${hash(`${process.version}\0${typescript}`)}\n`;
  const file = join(dir, `${hash(url).slice(0, 32)}.js`);
  try {
    const entry = readFileSync(file, "utf8");
    if (entry.startsWith(stamp)) return entry.slice(stamp.length);
  } catch {
    // not cached yet
  }
  const javascript = strip(typescript);
  if (javascript === undefined) return undefined;
  // Written aside, then renamed into place: a process (or thread) loading the same file at the
  // same moment reads the old entry or the new one, never half of one.
  const partial = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(partial, stamp + javascript);
    renameSync(partial, file);
  } catch {
    // a cache that cannot be written (a read-only project) only costs the stripping next time
    rmSync(partial, { force: true });
  }
  return javascript;
}

/**
 * @param {string} typescript
 * @returns {string | undefined}
 */
function strip(typescript) {
  // Node loading a .ts module runs this stripper without a word; called by name it warns once that
  // it is experimental, which would be a warning about nothing the user did.
  const { emitWarning } = process;
  process.emitWarning = () => {};
  try {
    return stripTypeScriptTypes(typescript, { mode: "strip" });
  } catch {
    return undefined;
  } finally {
    process.emitWarning = emitWarning;
  }
}

/** @param {string} text */
function hash(text) {
  return createHash("sha256").update(text).digest("hex");
}

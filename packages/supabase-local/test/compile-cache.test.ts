// Node's compile cache (src/boot/compile-cache.js), in real Node processes started in a scratch project
// with it imported first, as the command line (bin/supabase-local.js) imports it: on for the
// process and for the threads it starts later (the database thread), kept in the project's
// node_modules/.cache, and a directory NODE_COMPILE_CACHE already names is left as it is.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, test } from "vitest";

const CACHE = fileURLToPath(new URL("../src/boot/compile-cache.js", import.meta.url));

let project: string;
beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), "compile-cache-"));
  writeFileSync(join(project, "package.json"), '{ "type": "module" }');
  mkdirSync(join(project, "node_modules"));
  // a module of some size, loaded by both threads
  writeFileSync(
    join(project, "thread.js"),
    `import { getCompileCacheDir } from "node:module";
    import { parentPort } from "node:worker_threads";
    export const values = [${Array.from({ length: 200 }, (_, i) => `(x) => x * ${i}`).join(", ")}];
    parentPort?.postMessage(getCompileCacheDir() ?? null);`,
  );
  writeFileSync(
    join(project, "main.js"),
    `import ${JSON.stringify(CACHE)};
    import { getCompileCacheDir } from "node:module";
    import { Worker } from "node:worker_threads";
    await import("./thread.js");
    const worker = new Worker(new URL("./thread.js", import.meta.url));
    const inThread = await new Promise((resolve) => worker.once("message", resolve));
    await worker.terminate();
    console.log(JSON.stringify({ main: getCompileCacheDir() ?? null, thread: inThread }));`,
  );
});
afterAll(() => {
  rmSync(project, { recursive: true, force: true });
});

/** A Node process that imports compile-cache.js first (main.js): the compile cache directory of its
 * main thread and of a worker thread it starts afterwards, as JSON. */
function run(env: Record<string, string> = {}) {
  const { NODE_COMPILE_CACHE: _, ...inherited } = process.env;
  const result = spawnSync(process.execPath, ["main.js"], {
    cwd: project,
    encoding: "utf8",
    env: { ...inherited, ...env },
  });
  expect(result.stderr).toBe("");
  expect(result.status).toBe(0);
  return JSON.parse(result.stdout) as { main: string | null; thread: string | null };
}

test("on for the process and its threads, kept in the project's node_modules/.cache", () => {
  const dir = join(project, "node_modules", ".cache", "node-compile-cache");
  const { main, thread } = run();
  // Node keeps a folder per Node version (and V8 flags) in it
  expect(main?.startsWith(`${dir}/v`)).toBe(true);
  expect(thread).toBe(main);
  // and what the two threads compiled is there for the next start
  expect(readdirSync(main as string).length).toBeGreaterThan(0);
});

test("a directory NODE_COMPILE_CACHE already names is kept", () => {
  const elsewhere = join(project, "elsewhere");
  const { main, thread } = run({ NODE_COMPILE_CACHE: elsewhere });
  expect(main?.startsWith(`${elsewhere}/v`)).toBe(true);
  expect(thread).toBe(main);
});

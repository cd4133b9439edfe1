// Starting the database thread: PGlite's engine compiled once per process, and a thread started
// ahead of the open that takes it (Database starts its worker with takeThread).
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { setFlagsFromString } from "node:v8";
import { Worker } from "node:worker_threads";
import { extensionFiles } from "./extensions.ts";
import type { Engine } from "./messages.ts";
import { readShared } from "./shared-memory.ts";
import { WASM_TIERING_BUDGET } from "./thread/settings.js";

let engine: Promise<Engine> | undefined;

/** A database thread started before its open (prestartDatabaseThread), for the next open. */
let spareThread: Worker | undefined;

function startThread(): Worker {
  // None of the process's command-line options: the thread runs this package's JavaScript and
  // PGlite, and a preload (`--import`, as `npm run dev` loads the two caches) would load again
  // in it, 15 to 20 ms of every open.
  return new Worker(new URL("./thread/worker.js", import.meta.url), { execArgv: [] });
}

/**
 * Starts a database thread before the database it will open is known. Node's start of a thread
 * and the thread's loading of PGlite's JavaScript take a tenth of a second or more, and the open
 * waits for both: started early, they overlap what the caller does meanwhile (createLocalBackend:
 * the config, the ports and the keys; the command line: loading the server's modules too). The
 * next open in this process takes it; until then it waits, and keeps no process alive. A thread
 * that stops before that is not used: the open starts one of its own.
 */
export function prestartDatabaseThread(): void {
  if (spareThread) return;
  const thread = startThread();
  thread.unref();
  const drop = () => {
    if (spareThread === thread) spareThread = undefined;
  };
  // a thread that fails is dropped at once: the open starts one of its own, which reports it
  thread.on("error", drop);
  thread.once("exit", drop);
  spareThread = thread;
}

/** The prestarted thread if there is one, or a new one. */
export function takeThread(): Worker {
  const thread = spareThread ?? startThread();
  spareThread = undefined;
  thread.ref();
  return thread;
}

/**
 * PGlite's WebAssembly (9 MB), compiled once per thread that opens databases, with its file bundle
 * and the extensions' files, read once. Each database thread is sent all three as it starts: a
 * compiled module passed to a thread shares its machine code instead of compiling it again, which
 * halves the cost of every open after the first (a restart after a statement timeout, each backend
 * a test starts). Asking early (as createLocalBackend does) lets the compiling overlap other work.
 * The file bundle and the extensions' files are read into shared memory (shared-memory.ts), which
 * a thread is sent without a copy.
 */
export function pgliteEngine(): Promise<Engine> {
  engine ??= (async () => {
    setFlagsFromString(`--wasm-tiering-budget=${WASM_TIERING_BUDGET}`);
    const { resolve } = createRequire(import.meta.url);
    const [wasm, fsBundle] = await Promise.all([
      readFile(resolve("@electric-sql/pglite/pglite.wasm")),
      readShared(resolve("@electric-sql/pglite/pglite.data")),
    ]);
    // the extensions are unpacked on this thread while V8 compiles on its own threads
    const [wasmModule, files] = await Promise.all([WebAssembly.compile(wasm), extensionFiles()]);
    return { wasmModule, fsBundle, extensionFiles: files };
  })();
  return engine;
}

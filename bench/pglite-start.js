// PGlite alone opening a data directory, in a fresh Node process: the floor under the local
// backend's warm start, which opens the same PGlite in a thread of its own and then does its own
// work (its modules, the ports, the setup and migrations checks). `node bench/pglite-start.js
// <dataDir> [setting …]` prints {"totalMs": …}: from loading PGlite's module to PGlite ready (its
// own first query answered), started with the given settings. bench/run.ts passes the backend's
// (START_SETTINGS) and runs it with the backend's WebAssembly tiering budget and Node's compile
// cache (compile-cache.js), as the backend starts. JavaScript, and nothing else of the backend's
// package loaded: the floor pays no type stripping.
export {};

const [dataDir, ...settings] = process.argv.slice(2);
if (!dataDir) throw new Error("usage: node bench/pglite-start.js <dataDir> [setting …]");

const started = performance.now();
const { PGlite } = await import("@electric-sql/pglite");
const db = new PGlite(dataDir, {
  startParams: [...PGlite.defaultStartParams, ...settings.flatMap((s) => ["-c", s])],
});
await db.waitReady;
const totalMs = performance.now() - started;
await db.close();
console.log(JSON.stringify({ totalMs }));

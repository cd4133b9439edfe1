// How the backend starts PGlite: the settings the database thread (worker.js) starts
// Postgres with, and V8's tiering budget for PGlite's WebAssembly. JavaScript, as the database
// thread loads it; `npm run bench` opens PGlite alone with the same two.

/**
 * `-c name=value` settings, as Postgres takes them on its command line, beside PGlite's own
 * (PGlite.defaultStartParams). Postgres' defaults size shared memory for a server (128 MB of
 * buffers for 100 connections), and PGlite zeroes all of it on every start: half a second of a
 * warm start. One session over a database of a few MB needs a fraction of it.
 */
export const START_SETTINGS = [
  "shared_buffers=16MB",
  "max_connections=8",
  // Supabase preloads pg_stat_statements, which turns query ids on (compute_query_id=auto):
  // EXPLAIN VERBOSE, the data API's explain() included, prints Postgres' own Query Identifier.
  "compute_query_id=on",
];

/**
 * V8 optimises a WebAssembly function (TurboFan, on its background threads) once the function has
 * used up its "tiering budget" (calls and loop iterations; V8's default is 1.8 million). Postgres'
 * start runs thousands of functions just long enough for that, and so does Node's type stripper
 * (WebAssembly too) while the backend's modules load: optimising code that had already done its
 * work was 0.3 to 0.5 s of CPU in every start, on the two cores the start itself was waiting for.
 * With a budget a hundred times larger, a start uses a fifth less CPU and takes about a tenth less
 * time. What stays hot is still optimised, later: a database's first ten thousand statements or
 * so run on V8's baseline code, about a third slower each, which neither the test run nor the
 * bench's load arms showed. It is V8's setting for every WebAssembly module of the process, and
 * changes when code is optimised, never what it does. pgliteEngine() (database/engine.ts) sets it, before
 * it compiles PGlite's module.
 */
export const WASM_TIERING_BUDGET = 180_000_000;

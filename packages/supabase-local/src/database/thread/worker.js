// The embedded Postgres (PGlite) in a thread of its own, driven by database/database.ts over messages
// (database/messages.ts). PGlite runs Postgres as synchronous WASM: while a statement runs, nothing
// else in its thread runs either, so Postgres' own statement_timeout (a SIGALRM timer, emulated
// with setTimeout) can never fire. Here the statement may block this thread as long as it likes;
// the main thread keeps the clock and ends this thread when the statement's time is up.
//
// JavaScript, not TypeScript, as is postgres-port.js: a thread that loads a .ts module first starts
// Node's type stripper (amaro, WebAssembly of its own) in that thread, 65 ms of every database open
// (every start of the backend). The types are checked all the same (JSDoc, checkJs).
/** @import { Extension, Extensions, Results } from "@electric-sql/pglite" */
/** @import { ExtensionFile } from "../extensions.ts" */
/** @import { Engine, PortSignal, SerializedError, WorkerMessage, WorkerOptions, WorkerRequest } from "../messages.ts" */
/** @import { PostgresPort } from "./postgres-port.js" */
import { parentPort } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";
import { exec, query } from "./query.js";
import { START_SETTINGS } from "./settings.js";

const port = parentPort;
if (!port) throw new Error("database/thread/worker.js runs as a worker thread");

const ERROR_FIELDS = /** @type {const} */ ([
  "name",
  "code",
  "severity",
  "detail",
  "hint",
  "position",
  "internalPosition",
  "internalQuery",
  "where",
  "schema",
  "table",
  "column",
  "dataType",
  "constraint",
  "file",
  "line",
  "routine",
]);

/**
 * @param {unknown} error
 * @returns {SerializedError}
 */
function serialize(error) {
  if (!(error instanceof Error)) return { message: String(error) };
  /** @type {SerializedError} */
  const out = { message: error.message };
  const fields = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (error));
  for (const key of ERROR_FIELDS) {
    const value = fields[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

// statement_timeout in milliseconds (0 = none), read again after a statement that may have changed
// it (SET, RESET, DISCARD, set_config(...), which is how the data API applies a role's settings)
// and after the end of a transaction in which one ran (SET LOCAL reverts).
const CAN_CHANGE_TIMEOUT =
  /set_config|statement_timeout|^\s*(?:set\s+(?!(?:local\s+|session\s+)?(?:transaction|role)\b)|reset\b|discard\b)/im;
let timeoutMs = 0;
let revertsAtTransactionEnd = false;

/** @type {Record<string, number>} */
const UNIT_MS = {
  us: 0.001,
  ms: 1,
  s: 1000,
  min: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

// SHOW over the simple protocol is the cheapest way to ask; it answers "0", "250ms", "3s", "1min"
const SHOW_TIMEOUT = "SHOW statement_timeout";

/** @param {PGlite} db */
async function readTimeout(db) {
  try {
    const [result] = await exec(db, SHOW_TIMEOUT);
    keepTimeout(result);
  } catch {
    // an aborted transaction answers nothing until its ROLLBACK; keep the value in force
  }
}

/** @param {Results | undefined} shown what SHOW_TIMEOUT answered */
function keepTimeout(shown) {
  const row = /** @type {{ statement_timeout?: string } | undefined} */ (shown?.rows[0]);
  const match = /^(\d+(?:\.\d+)?)\s*(us|ms|s|min|h|d)?$/.exec(
    String(row?.statement_timeout ?? "0"),
  );
  if (match) timeoutMs = Number(match[1]) * (UNIT_MS[match[2] ?? "ms"] ?? 1);
}

/**
 * The session as a database's first statements leave it, in one trip: the search_path from the
 * role's setting (`alter role postgres set search_path = …`, sql/roles.sql), as a Postgres
 * session starts with it, and the statement_timeout in force. PGlite starts its one session with
 * `-c search_path=public`, which outranks role settings, so migrations, seeds and the Postgres
 * port would otherwise miss Supabase's `"$user", public, extensions`. A plain SELECT sets it,
 * only when the role has a setting: a DO block says the same, but its PL/pgSQL is compiled on the
 * database's first call, 25 to 40 ms of every start.
 * @param {PGlite} db
 */
async function startSession(db) {
  const results = await exec(
    db,
    `select set_config('search_path', wanted, false)
     from (
       select substr(c, length('search_path=') + 1) as wanted
       from pg_db_role_setting s, unnest(s.setconfig) c
       where s.setrole = current_user::regrole and c like 'search\\_path=%'
         and s.setdatabase in (0, (select oid from pg_database where datname = current_database()))
       order by s.setdatabase desc limit 1
     ) as role_setting;
     ${SHOW_TIMEOUT}`,
  );
  keepTimeout(results.at(-1));
}

/**
 * @param {PGlite} db
 * @param {string} sql
 * @param {boolean} inTransaction
 */
async function afterStatement(db, sql, inTransaction) {
  if (CAN_CHANGE_TIMEOUT.test(sql)) {
    await readTimeout(db);
    revertsAtTransactionEnd ||= inTransaction;
  } else if (!inTransaction && revertsAtTransactionEnd) {
    await readTimeout(db);
    revertsAtTransactionEnd = false;
  }
}

/** @type {Map<string, () => Promise<void>>} */
const unlisteners = new Map();
/** What a notification on each of those channels is handed to. @type {Map<string, (payload: string) => void>} */
const listeners = new Map();

/**
 * @param {PGlite} db
 * @param {WorkerRequest} request
 * @returns {Promise<unknown>}
 */
async function handle(db, request) {
  switch (request.op) {
    case "query": {
      const { textTypes, ...options } = request.options ?? {};
      /** @param {string} text */
      const asText = (text) => text;
      const parsers = textTypes && Object.fromEntries(textTypes.map((oid) => [oid, asText]));
      return query(db, request.sql, request.params, { ...options, parsers }, request.begin);
    }
    case "exec":
      return exec(db, request.sql, request.begin);
    case "listen": {
      if (!unlisteners.has(request.channel)) {
        const channel = request.channel;
        /** @param {string} payload */
        const listener = (payload) => send({ type: "notification", channel, payload });
        const unlisten = await db.listen(channel, listener);
        unlisteners.set(channel, unlisten);
        listeners.set(channel, listener);
      }
      return null;
    }
    case "unlisten": {
      await unlisteners.get(request.channel)?.();
      unlisteners.delete(request.channel);
      listeners.delete(request.channel);
      return null;
    }
    case "stop-port":
      await postgresPort?.stop();
      return null;
    case "close":
      await postgresPort?.stop();
      await db.close();
      return null;
  }
}

/** @param {WorkerMessage} message */
function send(message) {
  port?.postMessage(message);
}

/**
 * The file bundle as PGlite takes it: an ArrayBuffer of this thread's own, since PGlite's files are
 * views of it and Postgres may write to them. The bundle arrives in memory the threads share
 * (database/shared-memory.ts) and is copied out once. PGlite only ever asks a bundle for its
 * arrayBuffer(): a real Blob would copy the 6 MB in and read them out again through a stream, 15
 * to 20 ms of every open.
 * @param {Uint8Array<SharedArrayBuffer>} bundle
 * @returns {Blob}
 */
function asBlob(bundle) {
  const own = new Uint8Array(bundle.byteLength);
  own.set(bundle);
  return /** @type {Blob} */ (
    /** @type {unknown} */ ({ arrayBuffer: () => Promise.resolve(own.buffer) })
  );
}

/**
 * The extensions' files (extensions.ts), put in place before Postgres starts, but their libraries
 * left for Postgres to load when a query first calls one of their functions, as Postgres does.
 * PGlite's own loader compiles and links each library at every start (pgcrypto's 3.2 MB of
 * WebAssembly: 200 ms of a 700 ms start) though the backend itself never calls it: seeds and
 * migrations do, and they run when a start snapshot is made. The first call in a database's life
 * pays for it instead (about 0.4 s).
 * @param {ExtensionFile[]} files
 * @returns {Extensions}
 */
function linkedOnFirstUse(files) {
  /** @type {Extension} */
  const install = {
    name: "extension files",
    setup: async (_pg, emscriptenOpts) => ({
      emscriptenOpts: {
        ...emscriptenOpts,
        preRun: [
          ...(emscriptenOpts.preRun ?? []),
          /** @param {{ WASM_PREFIX: string, FS: { mkdirTree(path: string): void, writeFile(path: string, data: Uint8Array): void } }} module */
          (module) => {
            const made = new Set();
            for (const { path, data } of files) {
              const target = `${module.WASM_PREFIX}/${path}`;
              const directory = target.slice(0, target.lastIndexOf("/"));
              if (!made.has(directory)) module.FS.mkdirTree(directory);
              made.add(directory);
              // MEMFS keeps a copy of its own (the data is shared with the other threads): it
              // keeps the array itself only when told it may
              module.FS.writeFile(target, data);
            }
          },
        ],
      },
    }),
  };
  return { extensionFiles: install };
}

/** @type {PGlite} */
let db;
/** @type {PostgresPort | undefined} */
let postgresPort;

// The main thread sends one request at a time, after "ready"; the queue only keeps the order if it
// ever does not. The port listens from the start: a thread whose event loop has nothing left to
// wait on stops until V8's background work is done (PGlite's hot functions being optimised), which
// was a third of a second of every start.
/** @type {Promise<void>} */
let queue = Promise.resolve();
// The thread may start before its database is known (prestartDatabaseThread, database/engine.ts): it
// loads its modules, then waits for the engine and the options, and opens the database then.
/** @type {(open: { engine: Engine, options: WorkerOptions }) => void} */
let receiveOpen = () => {};
/** @type {Promise<{ engine: Engine, options: WorkerOptions }>} */
const openArrived = new Promise((resolve) => {
  receiveOpen = resolve;
});
port.on("message", (/** @type {WorkerRequest | PortSignal} */ request) => {
  if ("signal" in request) {
    if (request.signal === "open") receiveOpen(request);
    else if (request.signal === "turn-granted") postgresPort?.granted();
    else postgresPort?.setApiWaiting(request.waiting);
    return;
  }
  queue = queue.then(async () => {
    try {
      const result = await handle(db, request);
      if (request.op === "query" || request.op === "exec")
        await afterStatement(db, request.sql, request.inTransaction);
      send({ type: "result", id: request.id, result, timeoutMs });
    } catch (error) {
      if (request.op === "query" || request.op === "exec")
        await afterStatement(db, request.sql, request.inTransaction);
      send({ type: "error", id: request.id, error: serialize(error), timeoutMs });
    }
  });
});

try {
  const { engine, options } = await openArrived;
  // The Postgres port is optional: its modules load only for a database that serves one, while
  // PGlite starts.
  const portModule = options.postgres ? import("./postgres-port.js") : undefined;
  db = new PGlite(options.dataDir, {
    extensions: linkedOnFirstUse(engine.extensionFiles),
    pgliteWasmModule: engine.wasmModule,
    fsBundle: asBlob(engine.fsBundle),
    startParams: [...PGlite.defaultStartParams, ...START_SETTINGS.flatMap((s) => ["-c", s])],
  });
  await db.waitReady;
  await startSession(db);
  /** @type {number | undefined} */
  let listening;
  if (options.postgres && portModule) {
    const { PostgresPort } = await portModule;
    const started = new PostgresPort(db, {
      ...options.postgres,
      requestTurn: () => send({ type: "turn" }),
      // a commit made through the port reaches the backend's listeners as one made through it
      notified: (channel, payload) => {
        const listener = listeners.get(channel);
        listener?.(payload);
        return listener !== undefined;
      },
      turnOver: () => send({ type: "turn-over", timeoutMs }),
    });
    started.afterTurn = () => readTimeout(db);
    postgresPort = started;
    listening = await started.start();
  }
  send({ type: "ready", timeoutMs, postgresPort: listening });
} catch (error) {
  send({ type: "failed", error: serialize(error) });
  throw error;
}

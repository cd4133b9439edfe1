// The embedded Postgres (PGlite) in a thread of its own, driven by database.ts over
// messages. PGlite runs Postgres as synchronous WASM: while a statement runs, nothing else in its
// thread runs either, so Postgres' own statement_timeout (a SIGALRM timer, emulated with
// setTimeout) can never fire. Here the statement may block this thread as long as it likes; the
// main thread keeps the clock and ends this thread when the statement's time is up.
import { parentPort, workerData } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";
import { type ExtensionFile, linkedOnFirstUse } from "./extensions.ts";
import { PostgresPort } from "./postgres-port.ts";

/** What every database thread's PGlite is made of: its WebAssembly, compiled, and its files. */
export interface Engine {
  wasmModule: WebAssembly.Module;
  fsBundle: ArrayBuffer;
  /** the EXTENSIONS' files (extensions.ts) */
  extensionFiles: ExtensionFile[];
}

/** What the main thread starts the worker with. */
export interface WorkerOptions {
  dataDir: string;
  /** The Postgres port (postgres-port.ts), if one is wanted. */
  postgres?: { port: number; host: string; idleInTransactionTimeout: number };
}

/** What the main thread asks for (each message also carries an `id`, echoed in the answer). */
export type WorkerCall =
  | {
      op: "query";
      sql: string;
      params?: unknown[];
      options?: {
        rowMode?: "array" | "object";
        paramTypes?: number[];
        /** types (OIDs) whose values come back as Postgres's text, for parsers the caller applies */
        textTypes?: number[];
      };
      /** Inside a transaction the main thread opened (its COMMIT/ROLLBACK are sent with false). */
      inTransaction: boolean;
      /** The transaction's first statement: BEGIN runs first, in the same trip. */
      begin?: boolean;
    }
  | { op: "exec"; sql: string; inTransaction: boolean; begin?: boolean }
  | { op: "listen" | "unlisten"; channel: string }
  | { op: "close" }
  /** Ends the Postgres port's connections (before close: they may hold the database). */
  | { op: "stop-port" };

/** What the main thread tells the worker without expecting an answer. */
export type PortSignal =
  /** PGlite's engine (pgliteEngine in database.ts), sent while the thread starts, once the data
   * directory is in place: the database opens when it arrives */
  | { signal: "engine"; engine: Engine }
  /** the database is the port's (the turn it asked for) */
  | { signal: "turn-granted" }
  /** API requests are, or are no longer, waiting for the database */
  | { signal: "api-waiting"; waiting: boolean };

export type WorkerRequest = WorkerCall & { id: number };

export type WorkerMessage =
  | { type: "ready"; timeoutMs: number; postgresPort?: number }
  /** the Postgres port asks for the database / hands it back */
  | { type: "turn" }
  | { type: "turn-over"; timeoutMs: number }
  | { type: "failed"; error: SerializedError }
  | { type: "result"; id: number; result: unknown; timeoutMs: number }
  | { type: "error"; id: number; error: SerializedError; timeoutMs: number }
  | { type: "notification"; channel: string; payload: string };

/** A Postgres error's fields (DatabaseError), as plain data that survives postMessage. */
export type SerializedError = Record<string, unknown> & { message: string };

// Postgres' defaults size shared memory for a server (128 MB of buffers for 100 connections), and
// PGlite zeroes all of it on every start: half a second of a warm start. One session over a
// database of a few MB needs a fraction of it.
const START_SETTINGS = ["shared_buffers=16MB", "max_connections=8"];

const port = parentPort;
if (!port) throw new Error("database-worker.ts runs as a worker thread");

const ERROR_FIELDS = [
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
] as const;

function serialize(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { message: String(error) };
  const out: SerializedError = { message: error.message };
  for (const key of ERROR_FIELDS) {
    const value = (error as unknown as Record<string, unknown>)[key];
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

const UNIT_MS: Record<string, number> = {
  us: 0.001,
  ms: 1,
  s: 1000,
  min: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

async function readTimeout(db: PGlite): Promise<void> {
  try {
    // SHOW over the simple protocol is the cheapest way to ask; it answers "0", "250ms", "3s", "1min"
    const [result] = await db.exec("SHOW statement_timeout");
    const shown = String(result?.rows[0]?.statement_timeout ?? "0");
    const match = /^(\d+(?:\.\d+)?)\s*(us|ms|s|min|h|d)?$/.exec(shown);
    if (match) timeoutMs = Number(match[1]) * (UNIT_MS[match[2] ?? "ms"] ?? 1);
  } catch {
    // an aborted transaction answers nothing until its ROLLBACK; keep the value in force
  }
}

async function afterStatement(db: PGlite, sql: string, inTransaction: boolean): Promise<void> {
  if (CAN_CHANGE_TIMEOUT.test(sql)) {
    await readTimeout(db);
    revertsAtTransactionEnd ||= inTransaction;
  } else if (!inTransaction && revertsAtTransactionEnd) {
    await readTimeout(db);
    revertsAtTransactionEnd = false;
  }
}

const unlisteners = new Map<string, () => Promise<void>>();

async function handle(db: PGlite, request: WorkerRequest): Promise<unknown> {
  if ((request.op === "query" || request.op === "exec") && request.begin) await db.exec("BEGIN");
  switch (request.op) {
    case "query": {
      const { textTypes, ...options } = request.options ?? {};
      const asText = (text: string) => text;
      const parsers = textTypes && Object.fromEntries(textTypes.map((oid) => [oid, asText]));
      return db.query(request.sql, request.params, { ...options, parsers });
    }
    case "exec":
      return db.exec(request.sql);
    case "listen": {
      if (!unlisteners.has(request.channel)) {
        const channel = request.channel;
        const unlisten = await db.listen(channel, (payload) =>
          send({ type: "notification", channel, payload }),
        );
        unlisteners.set(channel, unlisten);
      }
      return null;
    }
    case "unlisten": {
      await unlisteners.get(request.channel)?.();
      unlisteners.delete(request.channel);
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

function send(message: WorkerMessage): void {
  port?.postMessage(message);
}

let db: PGlite;
let postgresPort: PostgresPort | undefined;

// The main thread sends one request at a time, after "ready"; the queue only keeps the order if it
// ever does not. The port listens from the start: a thread whose event loop has nothing left to
// wait on stops until V8's background work is done (PGlite's hot functions being optimised), which
// was a third of a second of every start.
let queue: Promise<void> = Promise.resolve();
let receiveEngine: (engine: Engine) => void = () => {};
const engineArrived = new Promise<Engine>((resolve) => {
  receiveEngine = resolve;
});
port.on("message", (request: WorkerRequest | PortSignal) => {
  if ("signal" in request) {
    if (request.signal === "engine") receiveEngine(request.engine);
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
  const options = workerData as WorkerOptions;
  const engine = await engineArrived;
  db = new PGlite(options.dataDir, {
    extensions: linkedOnFirstUse(engine.extensionFiles),
    pgliteWasmModule: engine.wasmModule,
    fsBundle: new Blob([engine.fsBundle]),
    startParams: [...PGlite.defaultStartParams, ...START_SETTINGS.flatMap((s) => ["-c", s])],
  });
  await db.waitReady;
  await readTimeout(db);
  let port: number | undefined;
  if (options.postgres) {
    postgresPort = new PostgresPort(db, {
      ...options.postgres,
      requestTurn: () => send({ type: "turn" }),
      turnOver: () => send({ type: "turn-over", timeoutMs }),
    });
    postgresPort.afterTurn = () => readTimeout(db);
    port = await postgresPort.start();
  }
  send({ type: "ready", timeoutMs, postgresPort: port });
} catch (error) {
  send({ type: "failed", error: serialize(error) });
  throw error;
}

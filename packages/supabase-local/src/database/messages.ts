// What the main thread (database.ts) and the database thread (thread/worker.js) say to each
// other over postMessage. Types only: the thread is JavaScript (see thread/worker.js) and takes
// these through JSDoc.
import type { ExtensionFile } from "./extensions.ts";

/** What every database thread's PGlite is made of: its WebAssembly, compiled, and its files, in
 * memory the threads share (pgliteEngine in engine.ts). */
export interface Engine {
  wasmModule: WebAssembly.Module;
  fsBundle: Uint8Array<SharedArrayBuffer>;
  /** the EXTENSIONS' files (extensions.ts); each thread's Postgres reads copies of its own */
  extensionFiles: ExtensionFile[];
}

/** Which database a thread opens, and how (sent with the engine: a thread may start before it is
 * known, see prestartDatabaseThread in engine.ts). */
export interface WorkerOptions {
  dataDir: string;
  /** The Postgres port (postgres-port.js), if one is wanted. */
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
  /** PGlite's engine (pgliteEngine in engine.ts) and the database to open with it, sent once the
   * data directory is in place: the database opens when it arrives */
  | { signal: "open"; engine: Engine; options: WorkerOptions }
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

import { createHash, randomBytes } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { mkdtemp, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { Worker } from "node:worker_threads";
import type { PGlite, QueryOptions, Results, Transaction } from "@electric-sql/pglite";
import type {
  Engine,
  PortSignal,
  SerializedError,
  WorkerCall,
  WorkerMessage,
  WorkerOptions,
} from "./database-protocol.ts";
import { WASM_TIERING_BUDGET } from "./database-settings.js";
import { extensionFiles } from "./extensions.ts";

/** The Postgres port (postgres-port.js) a database may open for psql, `pg` and other clients. */
export interface PostgresPortOptions {
  /** 0 = a free port. */
  port: number;
  host?: string;
  /** How long (ms) a connection idle in a transaction may keep API requests waiting. */
  idleInTransactionTimeout?: number;
}

/** How a database opens (openDatabase, Database.open). */
export interface OpenOptions {
  /** A start snapshot (snapshot.ts) a fresh data directory is made from. */
  snapshot?: string;
  /** After a fresh start from `snapshot`, make its spare for the next one (see refillSpare). */
  spare?: boolean;
  postgres?: PostgresPortOptions;
}

const here = new URL("./db/", import.meta.url);

let engine: Promise<Engine> | undefined;

/**
 * A data directory that holds a database Postgres would not start on: damaged (a crash, a full
 * disk) or made by another version of Postgres. The command line and `npm run dev` say so and how
 * to start over, instead of PGlite's bare "failed to initialize".
 */
export class DatabaseOpenError extends Error {
  override name = "DatabaseOpenError";
  readonly dataDir: string;
  constructor(dataDir: string, cause: Error) {
    super(`The database in ${dataDir} could not be opened: ${cause.message}`, { cause });
    this.dataDir = dataDir;
  }
}

/** A database thread started before its open (prestartDatabaseThread), for the next open. */
let spareThread: Worker | undefined;

function startThread(): Worker {
  // None of the process's command-line options: the thread runs this package's JavaScript and
  // PGlite, and a preload (`--import`, as `npm run dev` loads the two caches) would load again
  // in it, 15 to 20 ms of every open.
  return new Worker(new URL("./database-worker.js", import.meta.url), { execArgv: [] });
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
function takeThread(): Worker {
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
 */
export function pgliteEngine(): Promise<Engine> {
  engine ??= (async () => {
    setFlagsFromString(`--wasm-tiering-budget=${WASM_TIERING_BUDGET}`);
    const { resolve } = createRequire(import.meta.url);
    const [wasm, data] = await Promise.all([
      readFile(resolve("@electric-sql/pglite/pglite.wasm")),
      readFile(resolve("@electric-sql/pglite/pglite.data")),
    ]);
    const fsBundle = data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
    return {
      wasmModule: await WebAssembly.compile(wasm),
      fsBundle,
      extensionFiles: await extensionFiles(),
    };
  })();
  return engine;
}

/**
 * Opens the embedded Postgres (PGlite): persisted in `dataDir`, or in a scratch directory removed
 * on close when it is undefined (see scratchDirectory), and brings the API roles and the `auth`
 * schema up to date (skipped when they already are, see prepareDatabase). Postgres runs in a
 * worker thread (see Database) so that statement_timeout is enforced. A `snapshot` (a data
 * directory made by snapshot.ts) is put into a fresh data directory first, instead of initdb: its
 * spare moved there, or a copy (see provideData).
 * With `postgres`, it also serves the wire protocol on that port (postgres-port.js), taking turns
 * with the API.
 */
export async function openDatabase(dataDir?: string, options: OpenOptions = {}): Promise<PGlite> {
  const db = await Database.open(dataDir, options);
  try {
    await prepareDatabase(db);
  } catch (error) {
    await db.close();
    throw error;
  }
  // Database offers what the backend and its tests use of PGlite (query, exec, transaction,
  // listen, unlisten, close); handing it on as PGlite keeps every module's types as they are.
  return db as unknown as PGlite;
}

/** The SQL that sets a database up for Supabase's API: db/roles.sql, then db/auth.sql. Read
 * synchronously, as snapshot.ts reads a snapshot's inputs (snapshotKey says why). */
export async function setupSql(): Promise<{ roles: string; auth: string }> {
  return {
    roles: readFileSync(new URL("roles.sql", here), "utf8"),
    auth: readFileSync(new URL("auth.sql", here), "utf8"),
  };
}

/** Marks a database as set up by this version of roles.sql and auth.sql (a comment on `auth`). */
const SETUP_MARK = "supabase-local setup ";

/**
 * Brings a database up to what Supabase's API expects: the API roles (anon, authenticated,
 * service_role and their grants, db/roles.sql) and the `auth` schema (db/auth.sql). Both are
 * idempotent, but running them takes a few hundred milliseconds, so the hash of the two files is
 * kept as the `auth` schema's comment and a database that already carries it is left alone.
 * openDatabase does this; tests that open a PGlite of their own call it too.
 */
export async function prepareDatabase(db: {
  exec(sql: string): Promise<unknown>;
  query<T>(sql: string, params?: unknown[]): Promise<Results<T>>;
}): Promise<void> {
  const { roles, auth } = await setupSql();
  const mark = `${SETUP_MARK}${createHash("sha256").update(roles).update("\0").update(auth).digest("hex")}`;
  // pg_description itself, not obj_description(): that SQL function is parsed and planned on its
  // first call, and this is one of the first queries a database answers (alone, 19-38 ms against
  // 49-78 ms; within a whole start, lost in the noise).
  const { rows } = await db.query<{ mark: string | null }>(
    `SELECT description AS mark FROM pg_description
     WHERE objoid = to_regnamespace('auth') AND classoid = 'pg_namespace'::regclass AND objsubid = 0`,
  );
  if (rows[0]?.mark === mark) return;
  await db.exec(roles);
  await db.exec(auth);
  await db.exec(`COMMENT ON SCHEMA auth IS '${mark}'`);
}

type Pending = {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  statement: boolean;
  timer?: NodeJS.Timeout;
};

type Statement =
  | { op: "query"; sql: string; params?: unknown[]; options?: QueryOptions }
  | { op: "exec"; sql: string };

/**
 * PGlite in a worker thread, with statement_timeout enforced from outside.
 *
 * PGlite is Postgres compiled to single-threaded WASM: a statement runs to its end before anything
 * else in its thread does, so Postgres' own statement_timeout never fires there (checked: a
 * `SET statement_timeout = 300` session still runs a 4 s regular expression to its end). A runaway
 * statement (a backtracking `~` pattern from a `match` filter, say) would hold the one database,
 * and every request waiting on it, for as long as it runs. So the database lives in a worker
 * thread, one statement at a time, and this side keeps the clock: the worker reports the
 * statement_timeout in force after each statement that may change it (SET, set_config, RESET, the
 * end of a transaction), and a statement that outlives it is answered with Postgres' own error
 * (57014 "canceling statement due to statement timeout") while the worker is ended and started
 * again on the same data directory. Committed data is on disk by then (Postgres replays its WAL on
 * the restart, as after a crash); the cancelled transaction is gone, as Postgres would have rolled
 * it back. Requests queued behind it run on the restarted database.
 *
 * The Postgres port's connections (postgres-port.js, in the worker) take the same lock: the worker
 * asks for a turn, and no query or transaction of this side runs until it hands the turn back.
 * While one waits behind such a turn, the worker is told, so an idle connection gives way.
 */
export class Database {
  readonly dataDir: string;
  /** The scratch directory to remove on close (an unnamed database's). */
  readonly #scratch: string | undefined;
  #worker!: Worker;
  readonly #retired = new WeakSet<Worker>();
  readonly #started = new WeakSet<Worker>();
  #ready: Promise<void> = Promise.resolve();
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #timeoutMs = 0;
  /** Bumped on every restart: a transaction begun before it is over. */
  #generation = 0;
  /** One query or transaction at a time, as PGlite (a single connection) does. */
  #lock: Promise<unknown> = Promise.resolve();
  /** One statement at a time, so a statement's clock starts when it is sent. */
  #statements: Promise<unknown> = Promise.resolve();
  readonly #listeners = new Map<string, Set<(payload: string) => void>>();
  #closed = false;
  readonly #postgres: WorkerOptions["postgres"];
  /** The Postgres port's actual port (after start). */
  #postgresPort: number | undefined;
  /** The snapshot's spare being made after this database's fresh start (awaited by close). */
  #refill: Promise<void> = Promise.resolve();
  /** Ends the Postgres port's turn (set while it holds the lock). */
  #turnOver: (() => void) | undefined;
  /** Queries and transactions waiting for the lock. */
  #waiting = 0;

  private constructor(
    dataDir: string,
    scratch: string | undefined,
    postgres: PostgresPortOptions | undefined,
  ) {
    this.dataDir = dataDir;
    this.#scratch = scratch;
    this.#postgres = postgres && {
      port: postgres.port,
      host: postgres.host ?? "127.0.0.1",
      idleInTransactionTimeout: postgres.idleInTransactionTimeout ?? 10_000,
    };
  }

  /** Opens `dataDir` (a scratch directory when undefined), first putting `snapshot`'s files into
   * it when it holds no database yet (see provideData; with `spare`, a spare copy of the snapshot
   * is made for the next fresh start, see refillSpare); with `postgres`, serving the Postgres port
   * too. */
  static async open(dataDir?: string, options: OpenOptions = {}): Promise<Database> {
    const scratch = dataDir === undefined ? await scratchDirectory() : undefined;
    const db = new Database(
      dataDir ?? join(scratch as string, "pgdata"),
      scratch,
      options.postgres,
    );
    const { snapshot } = options;
    let provided = false;
    try {
      db.#ready = db.#start(() => {
        if (snapshot && !hasDatabase(db.dataDir)) {
          provideData(snapshot, db.dataDir);
          provided = true;
        }
      });
      await db.#ready;
    } catch (error) {
      await db.close();
      // A directory that held a database already, and that Postgres would not start on. (A port
      // the thread could not take has an error code of its own, and a snapshot just copied in is
      // the snapshot's problem.)
      if (dataDir !== undefined && !provided && !(error as NodeJS.ErrnoException).code)
        throw new DatabaseOpenError(dataDir, error as Error);
      throw error;
    }
    if (provided && options.spare && snapshot) db.#refill = refillSpare(snapshot, db.dataDir);
    return db;
  }

  get waitReady(): Promise<void> {
    return this.#ready;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** The port the Postgres wire protocol is served on (undefined: none). */
  get postgresPort(): number | undefined {
    return this.#postgresPort;
  }

  /** statement_timeout in force for the next statement, in milliseconds (0 = none). */
  get statementTimeout(): number {
    return this.#timeoutMs;
  }

  query<T>(sql: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>> {
    return this.#exclusive(() =>
      this.#statement<Results<T>>({ op: "query", sql, params, options }, false),
    ).then((result) => parsed(result, options));
  }

  exec(sql: string, options?: QueryOptions): Promise<Results[]> {
    noOptions(options);
    return this.#exclusive(() => this.#statement({ op: "exec", sql }, false));
  }

  sql<T>(strings: TemplateStringsArray, ...params: unknown[]): Promise<Results<T>> {
    return this.query<T>(templateSql(strings), params);
  }

  transaction<T>(callback: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.#exclusive(async () => {
      const generation = this.#generation;
      let closed = false;
      // BEGIN goes with the first statement, in the same trip to the worker (a trip is about
      // 0.15 ms of CPU, and a data API request is a transaction of two or three statements); a
      // transaction that sends no statement has nothing to begin, commit or roll back.
      let begun = false;
      const inTransaction = <R>(statement: Statement) => {
        const begin = !begun;
        begun = true;
        return this.#statement<R>(statement, true, begin);
      };
      const alive = () => {
        if (closed) throw new Error("Transaction is closed");
        // The engine was restarted under this transaction (its statement ran out of time): as in
        // Postgres, the rest of an aborted transaction is refused.
        if (generation !== this.#generation) throw abortedTransaction();
      };
      const tx: Transaction = {
        query: async <R>(sql: string, params?: unknown[], options?: QueryOptions) => {
          alive();
          return parsed(
            await inTransaction<Results<R>>({ op: "query", sql, params, options }),
            options,
          );
        },
        sql: async <R>(strings: TemplateStringsArray, ...params: unknown[]) => {
          alive();
          return inTransaction<Results<R>>({ op: "query", sql: templateSql(strings), params });
        },
        exec: async (sql: string, options?: QueryOptions) => {
          alive();
          noOptions(options);
          return inTransaction<Results[]>({ op: "exec", sql });
        },
        rollback: async () => {
          alive();
          if (begun) await this.#statement({ op: "exec", sql: "ROLLBACK" }, false);
          closed = true;
        },
        listen: async (channel: string, listener: (payload: string) => void) => {
          alive();
          return this.listen(channel, listener);
        },
        get closed() {
          return closed;
        },
      };
      try {
        const result = await callback(tx);
        if (!closed) {
          closed = true;
          if (generation !== this.#generation) throw abortedTransaction();
          if (begun) {
            const [commit] = await this.#statement<Results[]>({ op: "exec", sql: "COMMIT" }, false);
            // PGlite's own error, as PGlite's transaction() throws it. Its module is the database
            // thread's: this thread loads it only here (40 ms less of every start).
            if (commit?.command === "ROLLBACK")
              throw new (await import("@electric-sql/pglite")).TransactionAbortedError();
          }
        }
        return result;
      } catch (error) {
        if (!closed) {
          closed = true;
          if (begun && generation === this.#generation)
            await this.#statement({ op: "exec", sql: "ROLLBACK" }, false);
        }
        throw error;
      }
    });
  }

  async listen(
    channel: string,
    listener: (payload: string) => void,
  ): Promise<(tx?: Transaction) => Promise<void>> {
    let listeners = this.#listeners.get(channel);
    if (!listeners) {
      listeners = new Set();
      this.#listeners.set(channel, listeners);
      await this.#ready;
      await this.#post({ op: "listen", channel }, false);
    }
    listeners.add(listener);
    return () => this.unlisten(channel, listener);
  }

  async unlisten(channel: string, listener?: (payload: string) => void): Promise<void> {
    const listeners = this.#listeners.get(channel);
    if (!listeners) return;
    if (listener) listeners.delete(listener);
    else listeners.clear();
    if (listeners.size > 0) return;
    this.#listeners.delete(channel);
    await this.#ready;
    await this.#post({ op: "unlisten", channel }, false);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // the Postgres port's connections first: one of them may hold the lock
    if (this.#postgres) await this.#post({ op: "stop-port" }, false).catch(() => {});
    await this.#lock;
    try {
      await this.#ready;
      await this.#post({ op: "close" }, false);
    } catch {
      // a worker that never started or already died has nothing to close
    }
    if (this.#worker) {
      this.#retired.add(this.#worker);
      await this.#worker.terminate();
    }
    if (this.#scratch) {
      await rm(this.#scratch, { recursive: true, force: true });
      openScratch.delete(this.#scratch);
    }
    await this.#refill;
  }

  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    this.#waitingChanged(+1);
    const run = this.#lock.then(() => {
      this.#waitingChanged(-1);
      return fn();
    });
    this.#lock = run.catch(() => {});
    return run;
  }

  /** The Postgres port asked for the database: hold the lock until it hands it back. */
  #portTurn(): void {
    void this.#exclusive(
      () =>
        new Promise<void>((resolve) => {
          this.#turnOver = resolve;
          this.#signal({ signal: "turn-granted" });
          this.#signal({ signal: "api-waiting", waiting: this.#waiting > 0 });
        }),
    );
  }

  #waitingChanged(delta: number): void {
    const before = this.#waiting;
    this.#waiting += delta;
    // the port's idle connection gives way while someone waits behind its turn
    if (this.#turnOver && (before === 0) !== (this.#waiting === 0))
      this.#signal({ signal: "api-waiting", waiting: this.#waiting > 0 });
  }

  #signal(signal: PortSignal): void {
    this.#worker.postMessage(signal);
  }

  #statement<T>(statement: Statement, inTransaction: boolean, begin = false): Promise<T> {
    const call: WorkerCall =
      statement.op === "query"
        ? { ...statement, options: cloneableOptions(statement.options), inTransaction, begin }
        : { ...statement, inTransaction, begin };
    const run = this.#statements.then(async () => {
      if (this.#closed) throw new Error("The database is closed");
      await this.#ready;
      return this.#post(call, true) as Promise<T>;
    });
    this.#statements = run.catch(() => {});
    return run;
  }

  #post(request: WorkerCall, statement: boolean): Promise<unknown> {
    const id = this.#nextId++;
    const worker = this.#worker;
    if (this.#retired.has(worker) && this.#staysStopped(worker))
      return Promise.reject(new Error("The database worker stopped"));
    return new Promise((resolve, reject) => {
      const pending: Pending = { resolve, reject, statement };
      if (statement && this.#timeoutMs > 0)
        pending.timer = setTimeout(() => this.#timedOut(id), this.#timeoutMs);
      this.#pending.set(id, pending);
      worker.ref();
      worker.postMessage({ ...request, id });
    });
  }

  /** Starts a database thread; `prepare` puts the data directory in place meanwhile. */
  #start(prepare?: () => void): Promise<void> {
    const options: WorkerOptions = { dataDir: this.dataDir, postgres: this.#postgres };
    const worker = takeThread();
    this.#worker = worker;
    const started = new Promise<void>((resolve, reject) => {
      worker.on("message", (message: WorkerMessage) => {
        switch (message.type) {
          case "ready":
            this.#timeoutMs = message.timeoutMs;
            this.#postgresPort = message.postgresPort;
            // a restarted worker listens on the same port again
            if (this.#postgres && message.postgresPort) this.#postgres.port = message.postgresPort;
            this.#started.add(worker);
            resolve();
            break;
          case "failed":
            reject(toError(message.error));
            break;
          case "turn":
            this.#portTurn();
            break;
          case "turn-over":
            this.#timeoutMs = message.timeoutMs;
            this.#endTurn();
            break;
          case "notification":
            for (const listener of this.#listeners.get(message.channel) ?? [])
              listener(message.payload);
            break;
          default:
            this.#settle(message);
        }
      });
      worker.on("error", (error) => {
        reject(error);
        this.#lost(worker, error);
      });
      worker.on("exit", (code) => {
        const error = new Error(`The database worker stopped (exit code ${code})`);
        reject(error);
        this.#lost(worker, error);
      });
    });
    // While the thread starts (a tenth of a second or more): the data directory, PGlite's engine.
    const provisioned = (async () => {
      prepare?.();
      this.#signal({ signal: "open", engine: await pgliteEngine(), options });
    })();
    return Promise.all([started, provisioned]).then(async () => {
      for (const channel of this.#listeners.keys())
        await this.#post({ op: "listen", channel }, false);
      if (this.#pending.size === 0) worker.unref();
    });
  }

  #endTurn(): void {
    const over = this.#turnOver;
    this.#turnOver = undefined;
    over?.();
  }

  #settle(message: Extract<WorkerMessage, { type: "result" | "error" }>): void {
    const pending = this.#pending.get(message.id);
    if (!pending) return;
    this.#pending.delete(message.id);
    clearTimeout(pending.timer);
    this.#timeoutMs = message.timeoutMs;
    if (this.#pending.size === 0) this.#worker.unref();
    if (message.type === "result") pending.resolve(message.result);
    else pending.reject(toError(message.error));
  }

  /** The statement `id` ran out of time: answer it with 57014 and start the engine again. */
  #timedOut(id: number): void {
    // After a busy spell of this thread, timers run before the messages that came in meanwhile:
    // let the worker's answer, if it is already here, settle the statement first.
    setImmediate(() => {
      if (this.#pending.has(id)) this.#restart(statementTimeout());
    });
  }

  /** The worker died on its own (out of memory, a crash): fail what it had and start again. */
  #lost(worker: Worker, error: Error): void {
    if (this.#retired.has(worker) || worker !== this.#worker) return;
    this.#retired.add(worker);
    // Nothing sent to a thread that stays stopped will be answered now (say the "stop-port" and
    // "close" of the close() that follows a failed open, as when the Postgres port is taken): it
    // fails with the thread's error instead of waiting forever.
    if (this.#staysStopped(worker)) {
      for (const [id, pending] of this.#pending) {
        clearTimeout(pending.timer);
        this.#pending.delete(id);
        pending.reject(error);
      }
      return;
    }
    console.error(`[local backend] ${error.message}; restarting the database`);
    this.#restart(error, false);
  }

  /**
   * A stopped thread that is not started again: one that never started has failed its start (the
   * caller hears of it, and there are no endless retries), and a closed database stays closed.
   */
  #staysStopped(worker: Worker): boolean {
    return this.#closed || !this.#started.has(worker);
  }

  #restart(error: Error, terminate = true): void {
    const worker = this.#worker;
    this.#retired.add(worker);
    this.#generation++;
    // the port's connections were in the worker: their turn is over
    this.#endTurn();
    for (const [id, pending] of this.#pending) {
      clearTimeout(pending.timer);
      this.#pending.delete(id);
      // a LISTEN/UNLISTEN in flight is redone from #listeners by the restart
      if (pending.statement) pending.reject(error);
      else pending.resolve(null);
    }
    const stopped = terminate ? worker.terminate().then(() => {}) : Promise.resolve();
    this.#ready = stopped.then(() => this.#start());
    this.#ready.catch((startError: unknown) => {
      console.error("[local backend] the database did not start again:", startError);
    });
  }
}

/** Whether `dataDir` holds a Postgres data directory already (PG_VERSION is initdb's first file). */
export function hasDatabase(dataDir: string): boolean {
  return existsSync(join(dataDir, "PG_VERSION"));
}

/**
 * Copies a data directory's files into `dataDir` (which may exist and hold other files, such as
 * the signing key). cpSync copies natively, several times faster than fs.promises.cp's walk; it
 * blocks this thread for a moment before anything listens for the database anyway.
 */
function copyDatabase(from: string, dataDir: string): void {
  cpSync(from, dataDir, { recursive: true, force: false, errorOnExist: false });
}

/** Copies a directory with cpSync (see copyDatabase) in a thread of its own, this one left free. */
function copyInThread(from: string, to: string): Promise<void> {
  const copy = `const { cpSync } = require("node:fs");
    const { workerData } = require("node:worker_threads");
    cpSync(workerData.from, workerData.to, { recursive: true });`;
  return new Promise((resolve, reject) => {
    const worker = new Worker(copy, { eval: true, workerData: { from, to } });
    worker.once("error", reject);
    worker.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))));
  });
}

/** Where a start snapshot's spare lives: beside it, `<snapshot>-spare`. */
export function spareOf(snapshot: string): string {
  return `${snapshot}-spare`;
}

/** A name of this process's own to rename a spare to, claiming it (snapshot.ts's prune removes
 * one left behind by a process that died). */
function claimedName(spare: string): string {
  const suffix = `${process.pid}.${randomBytes(4).toString("hex")}`;
  return join(dirname(spare), `.${basename(spare)}-claimed.${suffix}`);
}

/**
 * Removes a spare. It is claimed first, as a start that takes it claims it: removed in place, a
 * start could claim it halfway through and move in a database with files missing.
 */
export async function discardSpare(spare: string): Promise<void> {
  const claimed = claimedName(spare);
  try {
    await rename(spare, claimed);
  } catch {
    return; // none, or claimed by someone else
  }
  await rm(claimed, { recursive: true, force: true });
}

/**
 * Puts a start snapshot's files into the fresh `dataDir`. Copying them is 1,100 files created one
 * by one: 0.1 s on an idle disk, and a second or more on a VM's disk still writing out earlier
 * data. So when the snapshot has a spare (a copy made after an earlier fresh start, see
 * refillSpare) on the data directory's file system, its two dozen top-level entries are moved
 * into place instead. The spare is first claimed by renaming it, which only one process can do;
 * a process that finds none, or loses the race, copies. PG_VERSION (what makes a directory a
 * database, see hasDatabase) moves last, and files already in `dataDir` (the signing key) stay.
 */
function provideData(snapshot: string, dataDir: string): void {
  mkdirSync(dataDir, { recursive: true });
  const claimed = claimedName(spareOf(snapshot));
  try {
    if (statSync(snapshot).dev !== statSync(dataDir).dev) throw new Error("another file system");
    renameSync(spareOf(snapshot), claimed);
  } catch {
    copyDatabase(snapshot, dataDir);
    return;
  }
  const entries = readdirSync(claimed).sort(
    (a, b) => Number(a === "PG_VERSION") - Number(b === "PG_VERSION"),
  );
  for (const entry of entries)
    if (!existsSync(join(dataDir, entry))) renameSync(join(claimed, entry), join(dataDir, entry));
  rmSync(claimed, { recursive: true, force: true });
}

/**
 * Makes the snapshot's spare, for the next fresh start to move into place (provideData), when
 * it has none and `dataDir` is on its file system (elsewhere it could not be moved). It is copied
 * once the database serves, in a thread of its own, into a directory of this process's own that
 * is renamed into place when whole (snapshot.ts's prune removes one left by a process that died).
 * A spare is 40 MB: one is kept, the most recent snapshot's (the others' are removed here).
 */
async function refillSpare(snapshot: string, dataDir: string): Promise<void> {
  const spare = spareOf(snapshot);
  const cacheDir = dirname(snapshot);
  const building = join(
    cacheDir,
    `.${basename(spare)}.${process.pid}.${randomBytes(4).toString("hex")}`,
  );
  try {
    if (existsSync(spare) || statSync(snapshot).dev !== statSync(dataDir).dev) return;
    for (const name of await readdir(cacheDir))
      if (name.endsWith("-spare") && name !== basename(spare))
        await discardSpare(join(cacheDir, name));
    await copyInThread(snapshot, building);
    // another process's spare may have been put in place meanwhile: then this one goes
    await rename(building, spare).catch(() => {});
  } catch {
    // no spare: the next fresh start copies, as without one
  } finally {
    await rm(building, { recursive: true, force: true });
  }
}

const SCRATCH_PREFIX = "local-backend-";
const openScratch = new Set<string>();
let removeAtExit = false;

/**
 * Where an unnamed database lives while it runs (tmpfs when the machine has one): a directory
 * with the owner's pid, removed on close, at exit, or by the next start if its process is gone.
 */
async function scratchDirectory(): Promise<string> {
  const root = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
  await removeAbandoned(root);
  const dir = await mkdtemp(join(root, SCRATCH_PREFIX));
  await writeFile(join(dir, "owner.pid"), String(process.pid));
  if (!removeAtExit) process.once("exit", removeOpenScratch);
  removeAtExit = true;
  openScratch.add(dir);
  return dir;
}

function removeOpenScratch(): void {
  for (const dir of openScratch) rmSync(dir, { recursive: true, force: true });
  openScratch.clear();
}

async function removeAbandoned(root: string): Promise<void> {
  const names = await readdir(root).catch(() => [] as string[]);
  for (const name of names.filter((n) => n.startsWith(SCRATCH_PREFIX))) {
    const dir = join(root, name);
    const pid = Number(await readFile(join(dir, "owner.pid"), "utf8").catch(() => "NaN"));
    if (Number.isInteger(pid) && pid > 0 && !isAlive(pid))
      await rm(dir, { recursive: true, force: true });
  }
}

/** Whether process `pid` still runs (on this machine). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function toError(serialized: SerializedError): Error {
  return Object.assign(new Error(serialized.message), serialized);
}

function statementTimeout(): Error {
  return Object.assign(new Error("canceling statement due to statement timeout"), {
    name: "error",
    severity: "ERROR",
    code: "57014",
  });
}

function abortedTransaction(): Error {
  return Object.assign(
    new Error("current transaction is aborted, commands ignored until end of transaction block"),
    { name: "error", severity: "ERROR", code: "25P02" },
  );
}

/**
 * Only plain-data options cross to the worker. Parsers are functions: the worker sends their
 * types back as text and parsed() applies them here. Serializers are not supported.
 */
function cloneableOptions(options: QueryOptions | undefined) {
  if (!options) return undefined;
  const { rowMode, paramTypes, parsers, ...rest } = options;
  noOptions(rest);
  return { rowMode, paramTypes, textTypes: parsers && Object.keys(parsers).map(Number) };
}

/** The caller's parsers applied to the values of their types (sent back as text). */
function parsed<T>(result: Results<T>, options: QueryOptions | undefined): Results<T> {
  const parsers = options?.parsers;
  if (!parsers) return result;
  const columns = result.fields.flatMap((field, index) => {
    const parse = parsers[field.dataTypeID];
    return parse ? [{ key: options.rowMode === "array" ? index : field.name, parse }] : [];
  });
  if (columns.length === 0) return result;
  const rows = result.rows.map((row) => {
    const copy = (Array.isArray(row) ? [...row] : { ...row }) as Record<string | number, unknown>;
    for (const { key, parse } of columns) {
      const value = copy[key];
      if (typeof value === "string") copy[key] = parse(value);
    }
    return copy as T;
  });
  return { ...result, rows };
}

function noOptions(options: object | undefined): void {
  if (options && Object.values(options).some((v) => v !== undefined))
    throw new Error(`query options ${Object.keys(options).join(", ")} are not supported here`);
}

function templateSql(strings: TemplateStringsArray): string {
  return strings.reduce((sql, part, i) => `${sql}$${i}${part}`);
}

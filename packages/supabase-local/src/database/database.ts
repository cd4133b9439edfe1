// The Database class: PGlite in its own thread, with statement_timeout kept from this side.
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { Worker } from "node:worker_threads";
import type { QueryOptions, Results, Transaction } from "@electric-sql/pglite";
import {
  hasDatabase,
  openScratch,
  provideData,
  refillSpare,
  scratchDirectory,
} from "./data-dir.ts";
import { pgliteEngine, takeThread } from "./engine.ts";
import type {
  PortSignal,
  SerializedError,
  WorkerCall,
  WorkerMessage,
  WorkerOptions,
} from "./messages.ts";

/** The Postgres port (postgres-port.js) a database may open for psql, `pg` and other clients. */
export interface PostgresPortRequest {
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
  postgres?: PostgresPortRequest;
}

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
    postgres: PostgresPortRequest | undefined,
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

  /**
   * Where Storage keeps this database's bytes: storage/ in the data directory (removed by a reset
   * with the database), or in the scratch directory of an unnamed one (removed on close).
   */
  get storageDir(): string {
    return join(this.#scratch ?? this.dataDir, "storage");
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
      try {
        worker.postMessage({ ...request, id });
      } catch (error) {
        // a parameter nested deeper than this thread's stack lets it copy: never sent
        this.#settle({ type: "error", id, error: tooDeep(error), timeoutMs: this.#timeoutMs });
      }
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
      // An answer this thread cannot copy in (a value nested deeper than its stack allows, where
      // the worker's larger stack wrote it): dropped by Node, so answered here. The worker answers
      // in order, so it is the oldest one waiting.
      worker.on("messageerror", (error) => {
        const [oldest] = this.#pending.keys();
        if (oldest !== undefined)
          this.#settle({
            type: "error",
            id: oldest,
            error: tooDeep(error),
            timeoutMs: this.#timeoutMs,
          });
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

/** Postgres's own refusal of a value nested too deep (a jsonb past max_stack_depth). */
function tooDeep(error: unknown): SerializedError {
  return {
    name: "error",
    severity: "ERROR",
    code: "54001",
    message: "stack depth limit exceeded",
    detail: error instanceof Error ? error.message : undefined,
  };
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

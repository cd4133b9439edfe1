// The Postgres port (config.toml [db] port, 54322): psql, `pg`, ORMs and `supabase gen types
// --db-url` talk to the same PGlite the APIs use. Runs inside the database worker, beside PGlite.
//
// @electric-sql/pglite-socket's PGLiteSocketHandler reads each connection's wire messages (startup,
// SSL refusal, cancel requests, framing); this module decides when they run. PGlite is one
// Postgres backend, so the connections and the APIs take turns on it:
//
// - A connection's turn is the database's lock on the main thread (database.ts): it asks for it,
//   and no API query or transaction runs until it hands it back. Inside its turn its messages run
//   in order, so an extended-protocol sequence (Parse/Bind/Execute/Sync) or a transaction is never
//   split by anyone else's statements (pglite-socket's own queue takes turns per message and keeps
//   only explicit transactions together; its unnamed statement could be replaced between Parse and
//   Bind by another connection's).
// - While nobody else wants the database, a connection keeps its turn between statements. When the
//   API or another connection wants it, a connection idle outside a transaction gives it up at
//   once; one idle inside a transaction (or in the middle of a sequence) has
//   `idleInTransactionTimeout` ms to finish, then it is ended as Postgres ends it under
//   idle_in_transaction_session_timeout (FATAL 25P03) and its transaction is rolled back.
// - Session state does not leak: when a connection hands its turn back, the settings it changed
//   (SET, set_config, SET ROLE, the startup packet's options) are saved, the API's are put back,
//   and its own are restored when its next turn begins. So `set role authenticated` in psql never
//   reaches an API request, and the API's per-request settings never reach psql.
//
// JavaScript for the reason database-worker.js gives (the database thread loads it).
/** @import { Server, Socket } from "node:net" */
/** @import { PGlite, Results } from "@electric-sql/pglite" */
/** @import { PGLiteSocketHandlerOptions } from "@electric-sql/pglite-socket" */
import { createServer } from "node:net";
import { PGLiteSocketHandler } from "@electric-sql/pglite-socket";
import { listenOnceFree } from "./port-in-use.js";

/**
 * @typedef {object} PostgresPortOptions
 * @property {number} port
 * @property {string} host
 * @property {number} idleInTransactionTimeout How long a connection idle inside a transaction may
 *   keep others waiting (ms).
 * @property {() => void} requestTurn Ask the main thread for the database; `granted()` is called
 *   when it is this side's.
 * @property {() => void} turnOver Hand the database back to the main thread.
 */

/**
 * @typedef {object} Pending
 * @property {Uint8Array} message
 * @property {(data: Uint8Array) => void} onData
 * @property {(bytes: number) => void} resolve
 * @property {(error: Error) => void} reject
 */

/** @typedef {[name: string, value: string]} Setting */

/**
 * @typedef {object} Session
 * @property {number} id
 * @property {Socket} socket
 * @property {Pending[]} queue
 * @property {"I" | "T" | "E"} status The transaction status of the last ReadyForQuery (I idle, T in
 *   a transaction, E failed).
 * @property {boolean} midSequence A message ran since the last ReadyForQuery: an extended-protocol
 *   sequence is open.
 * @property {Set<string>} customNames Custom settings (request.jwt.claims…) this session set:
 *   pg_settings does not list them.
 * @property {Setting[]} saved Its settings while another has the database (role included).
 * @property {boolean} closed
 */

const TERMINATE = 0x58; // 'X'
const QUERY = 0x51; // 'Q'
const PARSE = 0x50; // 'P'
const SYNC = new Uint8Array([0x53, 0, 0, 0, 4]);

/** The settings a session can change for itself (not the transaction's own). */
const SETTINGS_SQL = `select name, setting from pg_settings
  where context in ('user', 'superuser') and name not like 'transaction\\_%'
  union all select 'role', current_setting('role')`;

export class PostgresPort {
  /** @type {PGlite} */
  #db;
  /** @type {PostgresPortOptions} */
  #options;
  /** @type {Server | undefined} */
  #server;
  /** @type {Map<number, Session>} */
  #sessions = new Map();
  /** Sessions with messages waiting and no turn, first come first served. @type {Session[]} */
  #waiting = [];
  /** The session whose turn it is (the main thread's lock is held for it). @type {Session | undefined} */
  #holder;
  #asked = false;
  #running = false;
  #apiWaiting = false;
  /** @type {NodeJS.Timeout | undefined} */
  #idleTimer;
  /**
   * The API's settings (the database's defaults), put back after every turn. Read at the first
   * turn, not at start: reading pg_settings cold is 50 to 120 ms that every start of the backend
   * would wait for, and the API changes no session setting before then (its settings are the
   * transaction's own).
   * @type {Map<string, string> | undefined}
   */
  #defaults;
  /** Called after a turn ends with the API's settings back (statement_timeout re-read). @type {() => Promise<void>} */
  afterTurn = async () => {};

  /**
   * @param {PGlite} db
   * @param {PostgresPortOptions} options
   */
  constructor(db, options) {
    this.#db = db;
    this.#options = options;
  }

  /**
   * Listens, once connections that still hold the port let go (port-in-use.js); resolves with the
   * port (0 picks a free one). @returns {Promise<number>}
   */
  async start() {
    const server = createServer((socket) => this.#connect(socket));
    this.#server = server;
    const { port, host } = this.#options;
    await listenOnceFree(
      () =>
        new Promise((resolve, reject) => {
          server.once("error", reject);
          server.listen(port, host, () => {
            server.off("error", reject);
            resolve(undefined);
          });
        }),
      port,
    );
    const address = server.address();
    return typeof address === "object" && address ? address.port : this.#options.port;
  }

  /** The main thread granted the turn asked for. */
  granted() {
    this.#asked = false;
    const next = this.#waiting.shift();
    if (!next) {
      this.#options.turnOver();
      return;
    }
    this.#holder = next;
    this.#running = true;
    void this.#readDefaults()
      .then(() => this.#apply(next.saved))
      .catch((error) => console.error("[local backend] restoring a Postgres session:", error))
      .finally(() => {
        this.#running = false;
        this.#schedule();
      });
  }

  /** Whether API requests wait for the database (the main thread tells). @param {boolean} waiting */
  setApiWaiting(waiting) {
    this.#apiWaiting = waiting;
    this.#schedule();
  }

  /** Ends every connection (rolling back an open transaction) and stops listening. */
  async stop() {
    const server = this.#server;
    this.#server = undefined;
    const closed = server
      ? new Promise((resolve) => server.close(() => resolve(undefined)))
      : Promise.resolve();
    for (const session of [...this.#sessions.values()]) this.#end(session);
    while (this.#holder) await new Promise((r) => setTimeout(r, 5));
    await closed;
  }

  /** @param {Socket} socket */
  #connect(socket) {
    const queue = {
      /** @type {(id: number, message: Uint8Array, onData: (data: Uint8Array) => void) => Promise<number>} */
      enqueue: (id, message, onData) => this.#enqueue(id, message, onData),
      /** @param {number} id */
      clearQueueForHandler: (id) => this.#drop(id),
      /** @param {number} id */
      clearTransactionIfNeeded: async (id) => {
        const session = this.#sessions.get(id);
        if (session) this.#end(session);
      },
    };
    const handler = new PGLiteSocketHandler({
      // pglite-socket's handler takes any queue with its queue's three methods (this one decides
      // turns with the main thread, see above).
      queryQueue: /** @type {PGLiteSocketHandlerOptions["queryQueue"]} */ (
        /** @type {unknown} */ (queue)
      ),
      closeOnDetach: true,
    });
    this.#sessions.set(handler.handlerId, {
      id: handler.handlerId,
      socket,
      queue: [],
      status: "I",
      midSequence: false,
      customNames: new Set(),
      saved: [],
      closed: false,
    });
    void handler.attach(socket);
  }

  /**
   * @param {number} id
   * @param {Uint8Array} message
   * @param {(data: Uint8Array) => void} onData
   * @returns {Promise<number>}
   */
  #enqueue(id, message, onData) {
    const session = this.#sessions.get(id);
    if (!session || session.closed) return Promise.resolve(0);
    return new Promise((resolve, reject) => {
      session.queue.push({ message, onData, resolve, reject });
      if (session !== this.#holder && !this.#waiting.includes(session)) this.#waiting.push(session);
      this.#schedule();
    });
  }

  /** @param {number} id */
  #drop(id) {
    const session = this.#sessions.get(id);
    if (!session) return;
    for (const pending of session.queue.splice(0))
      pending.reject(new Error("Handler disconnected"));
    this.#waiting = this.#waiting.filter((s) => s !== session);
  }

  /** Runs the holder's next message, hands the turn on, or asks for one. */
  #schedule() {
    if (this.#running) return;
    const holder = this.#holder;
    if (!holder) {
      if (this.#waiting.length > 0 && !this.#asked) {
        this.#asked = true;
        this.#options.requestTurn();
      }
      return;
    }
    if (holder.closed) {
      void this.#release(holder);
      return;
    }
    if (holder.queue.length > 0) {
      clearTimeout(this.#idleTimer);
      this.#idleTimer = undefined;
      void this.#runNext(holder);
      return;
    }
    // the holder is idle: keep the turn unless someone else wants the database
    const contended = this.#apiWaiting || this.#waiting.length > 0;
    if (!contended) return;
    if (holder.status === "I" && !holder.midSequence) {
      void this.#handBack(holder);
    } else if (!this.#idleTimer) {
      this.#idleTimer = setTimeout(() => {
        this.#idleTimer = undefined;
        if (this.#holder === holder && holder.queue.length === 0 && !this.#running)
          this.#terminateIdle(holder);
      }, this.#options.idleInTransactionTimeout);
    }
  }

  /** @param {Session} session */
  async #runNext(session) {
    this.#running = true;
    const pending = /** @type {Pending} */ (session.queue.shift());
    try {
      if (pending.message[0] === TERMINATE) {
        pending.resolve(0);
        this.#end(session);
        return;
      }
      this.#noteCustomSettings(session, pending.message);
      let bytes = 0;
      /** @type {Uint8Array} */
      let tail = new Uint8Array(0);
      await this.#db.runExclusive(() =>
        this.#db.execProtocolRawStream(pending.message, {
          onRawData: (data) => {
            bytes += data.length;
            tail = lastBytes(tail, data, 6);
            pending.onData(data);
          },
        }),
      );
      const status = readyForQuery(tail);
      if (status) {
        session.status = status;
        session.midSequence = false;
      } else if (pending.message[0] !== undefined && pending.message[0] >= 0x41) {
        // a typed message with no ReadyForQuery yet (Parse, Bind, Execute… before Sync)
        session.midSequence = true;
      }
      pending.resolve(bytes);
    } catch (error) {
      pending.reject(/** @type {Error} */ (error));
    } finally {
      this.#running = false;
      this.#schedule();
    }
  }

  /** Idle in a transaction past the limit while others wait: end it as Postgres would. */
  /** @param {Session} session */
  #terminateIdle(session) {
    if (session.socket.writable)
      session.socket.write(
        errorResponse(
          "FATAL",
          "25P03",
          "terminating connection due to idle-in-transaction timeout",
        ),
      );
    this.#end(session);
  }

  /** The session is over: close its socket; its turn, if it has it, is released (#release). */
  /** @param {Session} session */
  #end(session) {
    if (session.closed) return;
    session.closed = true;
    this.#sessions.delete(session.id);
    this.#drop(session.id);
    if (!session.socket.destroyed) session.socket.end();
    this.#schedule();
  }

  /** A closed session's turn: roll back what it left open, hand the database back. */
  /** @param {Session} session */
  async #release(session) {
    this.#running = true;
    clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    try {
      // a sequence left without its Sync, then whatever transaction it had open
      if (session.midSequence) await this.#db.runExclusive(() => this.#db.execProtocolRaw(SYNC));
      if (session.status !== "I" || session.midSequence) await this.#db.exec("ROLLBACK");
    } catch (error) {
      console.error("[local backend] ending a Postgres session:", error);
    } finally {
      this.#running = false;
    }
    await this.#handBack(session, false);
  }

  /** Saves the holder's settings (unless it is gone), puts the API's back, ends the turn. */
  /**
   * @param {Session} session
   * @param {boolean} [save]
   */
  async #handBack(session, save = true) {
    if (this.#holder !== session || this.#running) return;
    this.#running = true;
    try {
      // settings that exist only since the API's were read (an extension loaded since) are at
      // their defaults unless the session set them: compared with what the API has, not reset
      const defaults = this.#defaults ?? new Map();
      const changed = (await this.#settings()).filter(
        ([name, value]) => defaults.has(name) && defaults.get(name) !== value,
      );
      /** @type {Setting[]} */
      const custom = [];
      for (const name of session.customNames) {
        const { rows } = /** @type {Results<{ v: string | null }>} */ (
          await this.#db.query("select current_setting($1, true) as v", [name])
        );
        if (rows[0]?.v) custom.push([name, rows[0].v]);
      }
      if (save) session.saved = [...changed, ...custom];
      /** @type {Setting[]} */
      const reset = [
        ...changed.map(([name]) => /** @type {Setting} */ ([name, defaults.get(name) ?? ""])),
        ...custom.map(([name]) => /** @type {Setting} */ ([name, ""])),
      ];
      await this.#apply(reset);
      await this.afterTurn();
    } catch (error) {
      console.error(
        "[local backend] the Postgres port could not put the API's settings back:",
        error,
      );
    } finally {
      this.#holder = undefined;
      this.#running = false;
      this.#options.turnOver();
      this.#schedule();
    }
  }

  async #readDefaults() {
    this.#defaults ??= new Map(await this.#settings());
  }

  /** @param {Setting[]} settings */
  async #apply(settings) {
    if (settings.length === 0) return;
    await this.#db.query(
      "select set_config(name, value, false) from unnest($1::text[], $2::text[]) as s (name, value)",
      [settings.map(([n]) => n), settings.map(([, v]) => v)],
    );
  }

  /** @returns {Promise<Setting[]>} */
  async #settings() {
    const { rows } = /** @type {Results<{ name: string, setting: string }>} */ (
      await this.#db.query(SETTINGS_SQL)
    );
    return rows.map((r) => [r.name, r.setting]);
  }

  /** Remembers the custom (dotted) settings a query sets, to save and reset them later. */
  /**
   * @param {Session} session
   * @param {Uint8Array} message
   */
  #noteCustomSettings(session, message) {
    if (message[0] !== QUERY && message[0] !== PARSE) return;
    // Query: type, length, the SQL; Parse: type, length, the statement's name, the SQL
    const body = Buffer.from(message.subarray(5));
    const sql = (message[0] === PARSE ? body.subarray(body.indexOf(0) + 1) : body).toString("utf8");
    for (const match of sql.matchAll(
      /\bset\s+(?:session\s+)?"?([a-z_][\w$]*\.[\w$.]+)"?|set_config\s*\(\s*'([^']+\.[^']+)'/gi,
    ))
      session.customNames.add((match[1] ?? match[2] ?? "").toLowerCase());
  }
}

/**
 * The last `n` bytes of what came before plus `data`.
 * @param {Uint8Array} before
 * @param {Uint8Array} data
 * @param {number} n
 * @returns {Uint8Array}
 */
function lastBytes(before, data, n) {
  if (data.length >= n) return data.slice(data.length - n);
  const joined = new Uint8Array(before.length + data.length);
  joined.set(before);
  joined.set(data, before.length);
  return joined.slice(Math.max(0, joined.length - n));
}

/**
 * The status of a ReadyForQuery ('Z', length 5, status) that ends the output, if it does.
 * @param {Uint8Array} tail
 * @returns {"I" | "T" | "E" | undefined}
 */
function readyForQuery(tail) {
  if (tail.length !== 6 || tail[0] !== 0x5a || tail[4] !== 5) return undefined;
  if (tail[1] !== 0 || tail[2] !== 0 || tail[3] !== 0) return undefined;
  const status = String.fromCharCode(/** @type {number} */ (tail[5]));
  return status === "I" || status === "T" || status === "E" ? status : undefined;
}

/**
 * A wire-protocol ErrorResponse.
 * @param {string} severity
 * @param {string} code
 * @param {string} message
 * @returns {Buffer}
 */
function errorResponse(severity, code, message) {
  const fields = Buffer.concat([
    field("S", severity),
    field("V", severity),
    field("C", code),
    field("M", message),
    Buffer.from([0]),
  ]);
  const header = Buffer.alloc(5);
  header.write("E", 0);
  header.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([header, fields]);
}

/**
 * @param {string} type
 * @param {string} value
 * @returns {Buffer}
 */
function field(type, value) {
  return Buffer.concat([Buffer.from(type), Buffer.from(value, "utf8"), Buffer.from([0])]);
}

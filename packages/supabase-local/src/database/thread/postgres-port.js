// The Postgres port (config.toml [db] port, 54322): psql, `pg`, ORMs and `supabase gen types
// --db-url` talk to the same PGlite the APIs use. Runs inside the database worker, beside PGlite.
//
// A connection logs in as the CLI's Postgres asks: user `postgres`, password `postgres`, over
// SCRAM-SHA-256 (postgres-scram.js); a wrong password or another user is FATAL 28P01. Its messages
// are read with Postgres's own size limits (postgres-wire.js): a startup packet over 10 000 bytes,
// or a message over its type's limit, is logged and the connection closed without reading the
// rest. Only then does PGlite see the startup packet, and it answers it (AuthenticationOk, the
// ParameterStatus messages, ReadyForQuery) as the end of the login.
//
// PGlite is one Postgres backend, so the connections and the APIs take turns on it:
//
// - A connection's turn is the database's lock on the main thread (database/database.ts): it asks for it,
//   and no API query or transaction runs until it hands it back. Inside its turn its messages run
//   in order, so an extended-protocol sequence (Parse/Bind/Execute/Sync) or a transaction is never
//   split by anyone else's statements (pglite-socket's own queue takes turns per message and keeps
//   only explicit transactions together; its unnamed statement could be replaced between Parse and
//   Bind by another connection's). A connection's messages are read one at a time: while one
//   waits or runs, reading pauses once 1 MiB more is waiting.
// - While nobody else wants the database, a connection keeps its turn between statements. When the
//   API or another connection wants it, a connection idle outside a transaction gives it up at
//   once; one idle inside a transaction (or in the middle of a sequence) has
//   `idleInTransactionTimeout` ms to finish, then it is ended as Postgres ends it under
//   idle_in_transaction_session_timeout (FATAL 25P03) and its transaction is rolled back.
// - Session state does not leak: when a connection hands its turn back, the settings it changed
//   (SET, set_config, SET ROLE, the startup packet's options) are saved, the API's are put back,
//   and its own are restored when its next turn begins. So `set role authenticated` in psql never
//   reaches an API request, and the API's per-request settings never reach psql.
// - Notifications do not leak either: one on a channel the backend listens on (Realtime's change
//   feed and broadcasts), raised by a connection's commit, goes to the backend, not to the
//   connection (postgres-notifications.js).
//
// JavaScript for the reason worker.js gives (the database thread loads it).
/** @import { Server, Socket } from "node:net" */
/** @import { PGlite, Results } from "@electric-sql/pglite" */
/** @import { Verifier } from "./postgres-scram.js" */
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { listenOnceFree } from "./port-in-use.js";
import { BackendNotifications } from "./postgres-notifications.js";
import { mockVerifier, SCRAM_SHA_256, ScramExchange, scramVerifier } from "./postgres-scram.js";
import {
  authenticationMessage,
  CANCEL_REQUEST_CODE,
  errorResponse,
  FrontendReader,
  GSSENC_REQUEST_CODE,
  parseStartupPacket,
  SSL_REQUEST_CODE,
  WireError,
} from "./postgres-wire.js";

/**
 * @typedef {object} PostgresPortOptions
 * @property {number} port
 * @property {string} host
 * @property {number} idleInTransactionTimeout How long a connection idle inside a transaction may
 *   keep others waiting (ms).
 * @property {() => void} requestTurn Ask the main thread for the database; `granted()` is called
 *   when it is this side's.
 * @property {() => void} turnOver Hand the database back to the main thread.
 * @property {(channel: string, payload: string) => boolean} [notified] Delivers a notification
 *   on a channel the backend itself listens on, and says whether it was one
 *   (postgres-notifications.js).
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
 * @property {BackendNotifications} notifications Its answers' notifications for the backend.
 * @property {boolean} closed
 */

/** The CLI's login (the URL `supabase status` prints): the only one the port accepts. */
const USER = "postgres";
const PASSWORD = "postgres";
/** authentication_timeout's default: a client not logged in by then is closed. */
const AUTHENTICATION_TIMEOUT_MS = 60_000;
/** How much more a connection may send while its message waits or runs before reading pauses. */
const READ_AHEAD_BYTES = 1 << 20;

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
  #nextId = 1;
  /** Every open connection, logged in or not. @type {Set<Socket>} */
  #sockets = new Set();
  /** The password's SCRAM verifier, made at the first login. @type {Verifier | undefined} */
  #verifier;
  /** Salts the made-up verifiers of other users. */
  #mockSecret = randomBytes(32);
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
    for (const socket of this.#sockets) socket.destroy();
    while (this.#holder) await new Promise((r) => setTimeout(r, 5));
    await closed;
  }

  /**
   * One connection: the startup packet, the SCRAM exchange, then its messages in turn. Whatever
   * Postgres would refuse is logged in one line and the connection closed (with a FATAL error
   * where Postgres sends one).
   * @param {Socket} socket
   */
  #connect(socket) {
    socket.setNoDelay(true);
    this.#sockets.add(socket);
    const reader = new FrontendReader();
    /** @type {Session | undefined} */
    let session;
    /** @type {ScramExchange | undefined} */
    let scram;
    /** @type {Buffer | undefined} */
    let startup;
    let user = "";
    let busy = false;
    let closing = false;
    const timer = setTimeout(() => {
      console.error("[local backend] Postgres port: canceling authentication due to timeout");
      socket.destroy();
    }, AUTHENTICATION_TIMEOUT_MS);
    /** @param {Uint8Array} data PGlite's output (a view it reuses: copied) */
    const write = (data) => {
      if (data.length > 0 && socket.writable) socket.write(Buffer.from(data));
    };

    /** @param {import("./postgres-wire.js").Frame} frame */
    const handle = async (frame) => {
      if (frame.kind === "startup") {
        const code = frame.packet.readInt32BE(4);
        // no TLS and no GSSAPI encryption: the client goes on in the clear
        if (code === SSL_REQUEST_CODE || code === GSSENC_REQUEST_CODE) {
          socket.write("N");
          return;
        }
        // PGlite has no backend process to signal: the request is read and dropped
        if (code === CANCEL_REQUEST_CODE) {
          closing = true;
          socket.end();
          return;
        }
        const { major, minor, params } = parseStartupPacket(frame.packet);
        if (major !== 3) {
          throw new WireError(
            `unsupported frontend protocol ${major}.${minor}: server supports 3.0 to 3.0`,
            { code: "0A000" },
          );
        }
        user = params.get("user") ?? "";
        if (user === "") {
          throw new WireError("no PostgreSQL user name specified in startup packet", {
            code: "28000",
          });
        }
        startup = frame.packet;
        this.#verifier ??= scramVerifier(PASSWORD);
        const known = user === USER;
        scram = new ScramExchange(
          known ? this.#verifier : mockVerifier(this.#mockSecret, user),
          known,
        );
        reader.startupDone();
        socket.write(authenticationMessage(10, Buffer.from(`${SCRAM_SHA_256}\0\0`)));
        return;
      }
      if (!session) {
        const exchange = /** @type {ScramExchange} */ (scram);
        if (!startup) throw new WireError("unexpected message before the startup packet");
        if (exchange.started) {
          const final = exchange.final(frame.message);
          if (!final) {
            throw new WireError(`password authentication failed for user "${user}"`, {
              code: "28P01",
            });
          }
          socket.write(authenticationMessage(12, final));
          clearTimeout(timer);
          reader.authenticated();
          session = this.#open(socket);
          // PGlite's answer ends the login: AuthenticationOk, ParameterStatus…, ReadyForQuery
          await this.#enqueue(session, startup, write);
        } else {
          socket.write(authenticationMessage(11, exchange.first(frame.message)));
        }
        return;
      }
      await this.#enqueue(session, frame.message, write);
    };

    const pump = async () => {
      if (busy || closing) return;
      busy = true;
      try {
        for (let frame = reader.next(); frame && !closing; frame = reader.next()) {
          await handle(frame);
        }
      } catch (error) {
        closing = true;
        if (error instanceof WireError) {
          console.error(`[local backend] Postgres port: ${error.message}; connection closed`);
          if (error.fatal && socket.writable) {
            const { code, detail } = error.fatal;
            socket.end(errorResponse("FATAL", code, error.message, detail));
          } else {
            socket.destroy();
          }
        } else {
          // a session dropped while its message waited (the connection ended) is no news
          if (!session?.closed) console.error("[local backend] Postgres port:", error);
          socket.destroy();
        }
      } finally {
        busy = false;
        if (socket.isPaused() && !closing) socket.resume();
      }
    };

    socket.on("data", (data) => {
      if (closing) return;
      reader.push(data);
      if (busy && reader.buffered > READ_AHEAD_BYTES) socket.pause();
      void pump();
    });
    socket.on("error", () => socket.destroy());
    socket.on("close", () => {
      closing = true;
      clearTimeout(timer);
      this.#sockets.delete(socket);
      if (session) this.#end(session);
    });
  }

  /**
   * A logged-in connection's session, to take turns with.
   * @param {Socket} socket
   * @returns {Session}
   */
  #open(socket) {
    /** @type {Session} */
    const session = {
      id: this.#nextId++,
      socket,
      queue: [],
      status: "I",
      midSequence: false,
      customNames: new Set(),
      saved: [],
      notifications: new BackendNotifications(this.#options.notified ?? (() => false)),
      closed: false,
    };
    this.#sessions.set(session.id, session);
    return session;
  }

  /**
   * @param {Session} session
   * @param {Uint8Array} message
   * @param {(data: Uint8Array) => void} onData
   * @returns {Promise<number>}
   */
  #enqueue(session, message, onData) {
    if (session.closed) return Promise.reject(new Error("Handler disconnected"));
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
            for (const part of session.notifications.pass(data)) {
              bytes += part.length;
              tail = lastBytes(tail, part, 6);
              pending.onData(part);
            }
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

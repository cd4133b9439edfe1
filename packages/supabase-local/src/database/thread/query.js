// A statement in as few trips into Postgres as it needs, and parsed once per session. PGlite's
// query() makes six calls into its WebAssembly for one statement with parameters (Parse; Describe
// the statement, for its parameters' types; Bind; Describe the portal; Execute; Sync), and exec()
// two (Query; Sync), each with its own buffers, parser and checks. For the data API's short
// statements those calls cost more than Postgres' own work: a primary-key lookup took 0.58 ms
// through query() and 0.26 ms as one batch of the same messages. Postgres takes such a batch as it
// would from a socket, and answers with the same messages, which PGlite's own parseResults() turns
// into the same Results.
//
// - Each statement is prepared under a name of its own the first time it runs, and later runs only
//   bind and execute it, as PostgREST's and most drivers' statement caches do: Postgres then skips
//   parsing and analysing it, and plans it from its cache (a primary-key lookup through the
//   database thread: about 0.48 ms unprepared, 0.31 ms prepared). Postgres keeps the cached plans
//   right: it plans again after DDL, or for another role or search_path. A prepared statement
//   that is gone (DEALLOCATE or DISCARD, say from psql on the Postgres port) or whose result
//   columns changed is prepared afresh and run again, outside a transaction; inside one, its error
//   stands, as it would for a driver.
// - Parameters that are all text or NULL need no types: Postgres reads text the way it reads a
//   literal. Any other value (a number, a Date, an array, an object) is written by PGlite's
//   serializer for the type Postgres infers for its parameter, so a new statement is described
//   first: two trips the first time, one after.
// - The transaction's BEGIN rides in the same trip as its first statement.
//
// JavaScript, as everything the database thread loads (see worker.js).
/** @import { PGlite, QueryOptions, Results } from "@electric-sql/pglite" */
/** @typedef {import("@electric-sql/pglite").messages.BackendMessage} BackendMessage */
import { parse, protocol } from "@electric-sql/pglite";

const { serialize } = protocol;

const BEGIN = serialize.query("BEGIN");
const SYNC = serialize.sync();
const DESCRIBE_PORTAL = serialize.describe({ type: "P" });
const EXECUTE = serialize.execute({});

/** How many prepared statements a session keeps (the most recently used). */
const KEEP_PREPARED = 500;

/**
 * @typedef {object} Prepared
 * @property {string} name
 * @property {number[]} [types] its parameters' types, once described
 */

/** This session's prepared statements, by SQL and declared parameter types, oldest used first. */
const prepared = /** @type {Map<string, Prepared>} */ (new Map());
let statements = 0;
/** Close messages for evicted statements, sent with the next trip. @type {Uint8Array[]} */
let closing = [];

/**
 * Postgres' errors for a prepared statement that cannot be run as prepared: it no longer exists
 * (26000), or what it returns changed under it (0A000, "cached plan must not change result type").
 */
const STALE = new Set(["26000", "0A000"]);

/**
 * PGlite's `db.query()`, in one or two trips.
 * @param {PGlite} db
 * @param {string} sql
 * @param {unknown[]} params
 * @param {QueryOptions} options
 * @param {boolean} begin start a transaction first
 * @returns {Promise<Results>}
 */
export async function query(db, sql, params = [], options = {}, begin = false) {
  const key = options.paramTypes ? `${sql}\0${options.paramTypes.join(",")}` : sql;
  const known = prepared.get(key);
  let messages;
  try {
    messages = await run(db, key, sql, params, options, begin, known);
  } catch (error) {
    const stale = known && STALE.has(/** @type {{ code?: string }} */ (error).code ?? "");
    if (!stale) throw error;
    forget(key);
    if (begin || db.isInTransaction()) throw error;
    messages = await run(db, key, sql, params, options, false, undefined);
  }
  await db.syncToFs();
  const results = parse.parseResults(messages, db.parsers, options);
  return /** @type {Results} */ (results.at(-1));
}

/**
 * Binds and executes `known`, or prepares `sql` first (remembering it under `key` once Postgres
 * parsed it, whatever happens next).
 * @param {PGlite} db
 * @param {string} key
 * @param {string} sql
 * @param {unknown[]} params
 * @param {QueryOptions} options
 * @param {boolean} begin
 * @param {Prepared | undefined} known
 * @returns {Promise<BackendMessage[]>}
 */
async function run(db, key, sql, params, options, begin, known) {
  const statement = known ?? { name: `_supabase_local_${++statements}` };
  if (known) {
    prepared.delete(key);
    prepared.set(key, known);
  }
  // a session at its limit closes the statement it used longest ago, in the same trip; statements
  // forgotten since the last trip are closed first (after BEGIN: only extended-protocol messages
  // between it and the Sync)
  if (!known && prepared.size >= KEEP_PREPARED) {
    const [oldest] = prepared.keys();
    if (oldest !== undefined) forget(oldest);
  }
  const head = [...(begin ? [BEGIN] : []), ...closing];
  closing = [];
  if (!known)
    head.push(serialize.parse({ name: statement.name, text: sql, types: options.paramTypes }));
  const textOnly = params.every(
    (value) => value === null || value === undefined || typeof value === "string",
  );
  /** @type {BackendMessage[]} */
  let described = [];
  if (!textOnly && !statement.types) {
    head.push(serialize.describe({ type: "S", name: statement.name }));
    described = await trip(db, head, false, () => prepared.set(key, statement));
    statement.types = parse.parseDescribeStatementResults(described);
    head.length = 0;
  }
  /** @type {(string | null)[]} */
  let values;
  try {
    values = params.map((value, i) => {
      if (value === null || value === undefined) return null;
      if (textOnly) return /** @type {string} */ (value);
      const type = statement.types?.[i];
      const write =
        type === undefined ? undefined : (options.serializers?.[type] ?? db.serializers[type]);
      return write ? write(value) : String(value);
    });
  } catch (error) {
    // a value its type's serializer refuses: Sync ends what the described statement began (its
    // implicit transaction), as PGlite's query() does
    if (described.length > 0) await db.execProtocol(SYNC, { syncToFs: false, throwOnError: false });
    throw error;
  }
  const bound = concat([
    serialize.bind({ statement: statement.name, values }),
    DESCRIBE_PORTAL,
    EXECUTE,
    SYNC,
  ]);
  const answer = await trip(db, [...head, bound], true, () => prepared.set(key, statement));
  return [...described, ...answer];
}

/** @param {string} key */
function forget(key) {
  const statement = prepared.get(key);
  if (!statement) return;
  prepared.delete(key);
  closing.push(serialize.close({ type: "S", name: statement.name }));
}

/**
 * PGlite's `db.exec()` (the simple protocol: any number of statements, no parameters), in one trip.
 * @param {PGlite} db
 * @param {string} sql
 * @param {boolean} begin start a transaction first
 * @returns {Promise<Results[]>}
 */
export async function exec(db, sql, begin = false) {
  const messages = await trip(db, [...(begin ? [BEGIN] : []), serialize.query(sql)]);
  await db.syncToFs();
  const results = parse.parseResults(messages, db.parsers);
  return begin ? results.slice(1) : results;
}

/**
 * One call into Postgres with `parts` as one message; throws Postgres' error, as PGlite does.
 * `parsed` is called when Postgres parsed a named statement in it, even if what followed failed.
 * A trip that does not end in Sync (a statement described before its parameters are written) is
 * synced after an error, so that the session takes the next statement.
 * @param {PGlite} db
 * @param {Uint8Array[]} parts
 * @param {boolean} synced whether the last part is a Sync
 * @param {() => void} [parsed]
 * @returns {Promise<BackendMessage[]>}
 */
async function trip(db, parts, synced = true, parsed) {
  const { messages } = await db.execProtocol(concat(parts), {
    syncToFs: false,
    throwOnError: false,
  });
  if (parsed && messages.some((m) => m.name === "parseComplete")) parsed();
  const error = messages.find((m) => m.name === "error");
  if (error) {
    if (!synced) await db.execProtocol(SYNC, { syncToFs: false, throwOnError: false });
    throw error;
  }
  return messages;
}

/** @param {Uint8Array[]} parts */
function concat(parts) {
  if (parts.length === 1) return /** @type {Uint8Array} */ (parts[0]);
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

// A statement in as few trips into Postgres as it needs. PGlite's query() makes six calls into its
// WebAssembly for one statement with parameters (Parse; Describe the statement, for its
// parameters' types; Bind; Describe the portal; Execute; Sync), and exec() two (Query; Sync), each
// with its own buffers, parser and checks. For the data API's short statements those calls cost
// more than Postgres' own work: a primary-key lookup took 0.58 ms through query() and 0.26 ms as
// one batch of the same messages. Postgres takes such a batch as it would from a socket, and
// answers with the same messages, which PGlite's own parseResults() turns into the same Results.
//
// - Parameters that are all text or NULL go in one trip: Postgres reads text the way it reads a
//   literal, so they need no type. Any other value (a number, a Date, an array, an object) is
//   written by PGlite's serializer for the type Postgres infers for its parameter, so the statement
//   is described first: two trips, still four calls fewer.
// - The transaction's BEGIN rides in the same trip as its first statement.
//
// JavaScript, as everything the database thread loads (see database-worker.js).
/** @import { PGlite, QueryOptions, Results } from "@electric-sql/pglite" */
import { parse, protocol } from "@electric-sql/pglite";

const { serialize } = protocol;

const BEGIN = serialize.query("BEGIN");
const SYNC = serialize.sync();
const DESCRIBE_PORTAL = serialize.describe({ type: "P" });
const DESCRIBE_STATEMENT = serialize.describe({ type: "S" });
const EXECUTE = serialize.execute({});

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
  const head = [
    ...(begin ? [BEGIN] : []),
    serialize.parse({ text: sql, types: options.paramTypes }),
  ];
  /** @type {import("@electric-sql/pglite").messages.BackendMessage[]} */
  let messages;
  if (params.every((value) => value === null || value === undefined || typeof value === "string")) {
    const values = params.map((value) => value ?? null);
    messages = await trip(db, [...head, bindExecute(/** @type {(string | null)[]} */ (values))]);
  } else {
    const described = await trip(db, [...head, DESCRIBE_STATEMENT], false);
    const types = parse.parseDescribeStatementResults(described);
    /** @type {(string | null)[]} */
    let values;
    try {
      values = params.map((value, i) => {
        const type = types[i];
        if (value === null || value === undefined) return null;
        const write =
          type === undefined ? undefined : (options.serializers?.[type] ?? db.serializers[type]);
        return write ? write(value) : String(value);
      });
    } catch (error) {
      // a value its type's serializer refuses: Sync ends what the described statement began (its
      // implicit transaction), as PGlite's query() does
      await db.execProtocol(SYNC, { syncToFs: false, throwOnError: false });
      throw error;
    }
    messages = [...described, ...(await trip(db, [bindExecute(values)]))];
  }
  await db.syncToFs();
  const results = parse.parseResults(messages, db.parsers, options);
  return /** @type {Results} */ (results.at(-1));
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
 * Bind, describe and execute the unnamed statement, then Sync.
 * @param {(string | null)[]} values
 */
function bindExecute(values) {
  return concat([serialize.bind({ values }), DESCRIBE_PORTAL, EXECUTE, SYNC]);
}

/**
 * One call into Postgres with `parts` as one message; throws Postgres' error, as PGlite does. A
 * trip that does not end in Sync (a statement described before its parameters are written) is
 * synced after an error, so that the session takes the next statement.
 * @param {PGlite} db
 * @param {Uint8Array[]} parts
 * @param {boolean} synced whether the last part is a Sync
 */
async function trip(db, parts, synced = true) {
  const message = concat(parts);
  try {
    return (await db.execProtocol(message, { syncToFs: false })).messages;
  } catch (error) {
    if (!synced) await db.execProtocol(SYNC, { syncToFs: false, throwOnError: false });
    throw error;
  }
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

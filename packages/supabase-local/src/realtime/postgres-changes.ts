// postgres_changes, as upstream's PostgresCdcRls extension: a channel's bindings parsed as its
// Subscriptions.parse_subscription_params does, one realtime.subscription row per binding and
// published table (the database checks the filters, sql/realtime.sql), and the change feed: the
// database announces committed changes (NOTIFY supabase_local_changes, no payload), this module
// reads the changes after the last it saw, with the subscriptions that may see each one
// (realtime.supabase_local_list_changes: filters and RLS per subscriber), and hands each channel
// its own: {ids: [its bindings' ids], data: {schema, table, commit_timestamp, type, record,
// old_record, columns, errors}}. Decision 027 says why it is built this way.
import type { PGlite } from "@electric-sql/pglite";
import type { Claims } from "../http/jwt.ts";
import type { RateCounter } from "./limits.ts";

/** A channel that subscribes to changes: where its changes go. */
export interface ChangeSubscriber {
  /**
   * One change (its JSON, encoded once for all), with the ids of this channel's bindings that
   * see it and its type (INSERT, UPDATE, DELETE).
   */
  change(ids: number[], dataJson: string, type: string): void;
}

/** One binding of a join's config.postgres_changes, with its ids. */
export interface Binding {
  /** What the client sent ({event, schema, table, filter, select}). */
  params: Record<string, unknown>;
  /** The id the join reply and each event carry: a hash of the params, as upstream's phash2. */
  id: number;
  /** The realtime.subscription rows' subscription_id. */
  subscriptionId: string;
}

interface SubscriptionParams {
  action: string;
  schema: string;
  table: string;
  /** Column, operator, value and whether `not.` negates it (upstream's 4-tuple). */
  filters: Filter[];
  select: string[] | null;
}

/** Upstream's poll_max_changes and poll_max_record_bytes defaults. */
const MAX_CHANGES = 100;
export const MAX_RECORD_BYTES = 1024 * 1024;

const FILTER_TYPES = new Set([
  "eq",
  "neq",
  "lt",
  "lte",
  "gt",
  "gte",
  "in",
  "like",
  "ilike",
  "is",
  "match",
  "imatch",
  "isdistinct",
]);
const NO_PARAMS =
  "No subscription params provided. Please provide at least a `schema` or `table` to subscribe to: ";

export function bindings(list: Array<Record<string, unknown>>): Binding[] {
  return list.map((params) => ({
    params,
    id: bindingId(params),
    subscriptionId: crypto.randomUUID(),
  }));
}

/** A stable 27-bit id of a binding's params (upstream: :erlang.phash2(params), same range). */
function bindingId(params: Record<string, unknown>): number {
  let hash = 0x811c9dc5;
  for (const char of canonical(params)) {
    hash ^= char.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash & 0x7ffffff;
}

/** JSON with each object's keys in order. */
function canonical(value: unknown): string {
  return write(value, {
    list: ["[", "]"],
    map: ["{", "}"],
    separator: ",",
    key: (k) => `${JSON.stringify(k)}:`,
    scalar: (v) => JSON.stringify(v) ?? "null",
  });
}

/** How a nested value is written: its brackets, separator, a key's prefix, a scalar. */
interface Notation {
  list: [string, string];
  map: [string, string];
  separator: string;
  key(key: string): string;
  scalar(value: unknown): string;
}

/**
 * A value written out in a notation, maps' keys in order, without recursion: a binding's value
 * nested thousands deep (any the serializer could read) is written like any other.
 */
function write(root: unknown, notation: Notation): string {
  const out: string[] = [];
  // what is left, the next last: a value to write, or text as it is
  const todo: Array<{ value: unknown } | string> = [{ value: root }];
  for (let item = todo.pop(); item !== undefined; item = todo.pop()) {
    if (typeof item === "string") {
      out.push(item);
      continue;
    }
    const { value } = item;
    let parts: Array<{ value: unknown } | string>;
    if (Array.isArray(value)) {
      parts = [notation.list[0]];
      for (const [i, v] of value.entries()) {
        if (i > 0) parts.push(notation.separator);
        parts.push({ value: v });
      }
      parts.push(notation.list[1]);
    } else if (value !== null && typeof value === "object") {
      const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1));
      parts = [notation.map[0]];
      for (const [i, [k, v]] of entries.entries()) {
        if (i > 0) parts.push(notation.separator);
        parts.push(notation.key(k), { value: v });
      }
      parts.push(notation.map[1]);
    } else {
      out.push(notation.scalar(value));
      continue;
    }
    for (let i = parts.length - 1; i >= 0; i--) todo.push(parts[i] as { value: unknown } | string);
  }
  return out.join("");
}

type Parsed = { ok: true; value: SubscriptionParams } | { ok: false; error: string };

type Filter = [column: string, op: string, value: string, negate: boolean];

/** A binding's params as upstream's parse_subscription_params reads them, in its words. */
export function parseSubscriptionParams(params: Record<string, unknown>): Parsed {
  const action = actionFilter(params.event);
  let select: string[] | null = null;
  if (Array.isArray(params.select)) {
    const columns = params.select.filter((c): c is string => typeof c === "string");
    select = columns.length > 0 ? columns : null;
  } else if (typeof params.select === "string") {
    return {
      ok: false,
      error:
        'Error parsing `select` params: expected a list of column name strings, e.g. select: ["col1", "col2"]',
    };
  }
  const { schema, table, filter } = params;
  const has = (key: string) => Object.hasOwn(params, key);
  let target: { schema: string; table: string; filter?: string } | undefined;
  if (typeof schema === "string" && typeof table === "string" && typeof filter === "string") {
    target = { schema, table, filter };
  } else if (typeof schema === "string" && typeof table === "string" && !has("filter")) {
    target = { schema, table };
  } else if (typeof schema === "string" && !has("table") && !has("filter")) {
    target = { schema, table: "*" };
  } else if (typeof table === "string" && !has("schema") && !has("filter")) {
    target = { schema: "public", table };
  }
  if (!target) {
    const shown = has("user_token") || has("auth_token") ? "<redacted>" : inspect(params);
    return { ok: false, error: `${NO_PARAMS}${shown}` };
  }
  let filters: Filter[] = [];
  if (target.filter !== undefined) {
    const parsed = parseFilters(target.filter);
    if (typeof parsed === "string") {
      return { ok: false, error: `Error parsing \`filter\` params: ${parsed}` };
    }
    filters = parsed;
  }
  if (select && (target.schema === "*" || target.table === "*")) {
    return {
      ok: false,
      error:
        "Column selection is not supported for wildcard subscriptions. Provide an explicit schema and table name.",
    };
  }
  return {
    ok: true,
    value: { action, schema: target.schema, table: target.table, filters, select },
  };
}

function actionFilter(event: unknown): string {
  if (typeof event !== "string") return "*";
  const upper = event.toUpperCase();
  return upper === "INSERT" || upper === "UPDATE" || upper === "DELETE" ? upper : "*";
}

/**
 * `col=[not.]op.value` segments joined by commas outside parentheses and double quotes (AND), as
 * upstream's parse_filters; an error's text otherwise. A value in double quotes (after `.`, `(` or
 * `,`) may hold commas and parentheses; its quotes and backslash escapes are taken off.
 */
function parseFilters(filter: string): Filter[] | string {
  const trimmed = filter.trim();
  if (trimmed === "") return [];
  const filters: Filter[] = [];
  for (const raw of splitTopLevel(trimmed)) {
    const segment = raw.trim();
    if (segment === "") return "filter must not contain empty segments (check for extra commas)";
    const eq = segment.indexOf("=");
    if (eq < 0) return inspect([segment]);
    const column = segment.slice(0, eq);
    let rest = segment.slice(eq + 1);
    const negate = rest.startsWith("not.");
    if (negate) rest = rest.slice("not.".length);
    const dot = rest.indexOf(".");
    const type = dot < 0 ? rest : rest.slice(0, dot);
    if (dot < 0 || !FILTER_TYPES.has(type))
      return inspect(dot < 0 ? [rest] : [type, rest.slice(dot + 1)]);
    let value = rest.slice(dot + 1);
    if (type === "in") {
      if (value.length < 2 || !value.startsWith("(") || !value.endsWith(")")) {
        return "`in` filter value must be wrapped by parentheses";
      }
      value = `{${value.slice(1, -1)}}`;
    } else {
      value = unquoted(value);
    }
    filters.push([column, type, value, negate]);
  }
  return filters;
}

/** The filter's segments: split at commas outside parentheses and quoted values. */
function splitTopLevel(filter: string): string[] {
  const segments: string[] = [];
  let depth = 0;
  let quoted = false;
  let previous = "";
  let current = "";
  for (let i = 0; i < filter.length; i++) {
    const char = filter[i] as string;
    if (quoted) {
      if (char === "\\" && i + 1 < filter.length) {
        current += char + filter[++i];
        previous = filter[i] as string;
        continue;
      }
      if (char === '"') quoted = false;
    } else if (char === '"' && (previous === "." || previous === "(" || previous === ",")) {
      quoted = true;
    } else if (char === "(") {
      depth++;
    } else if (char === ")") {
      depth = Math.max(0, depth - 1);
    } else if (char === "," && depth === 0) {
      segments.push(current);
      current = "";
      previous = "";
      continue;
    }
    current += char;
    previous = char;
  }
  segments.push(current);
  return segments;
}

/** A value in double quotes without them, escapes resolved; any other value as it is. */
function unquoted(value: string): string {
  if (!value.startsWith('"')) return value;
  let out = "";
  for (let i = 1; i < value.length; i++) {
    const char = value[i] as string;
    if (char === "\\") {
      if (i + 1 >= value.length) return value;
      out += value[++i];
    } else if (char === '"') {
      return i === value.length - 1 ? out : value;
    } else {
      out += char;
    }
  }
  return value;
}

/** A value as Elixir's inspect/1 prints it (upstream's messages show params that way). */
function inspect(value: unknown): string {
  return write(value, {
    list: ["[", "]"],
    map: ["%{", "}"],
    separator: ", ",
    key: (k) => `${JSON.stringify(k)} => `,
    scalar: (v) => {
      if (v === null || v === undefined) return "nil";
      return typeof v === "string" ? JSON.stringify(v) : String(v);
    },
  });
}

/** The params as upstream's params_to_log shows them in a refused subscription's message. */
function paramsToLog(p: SubscriptionParams): string {
  const filters = `[${p.filters.map((f) => `{${f.map((v) => JSON.stringify(v)).join(", ")}}`).join(", ")}]`;
  return `event: ${p.action}, schema: ${p.schema}, table: ${p.table}, filters: ${filters}, select: ${inspect(p.select)}`;
}

/** Postgrex's Exception.message: `ERROR <code> (<condition>) <message>`. */
function postgresError(error: unknown): string {
  const { code, message } = error as { code?: string; message?: string };
  const condition = code ? CONDITIONS[code] : undefined;
  return `ERROR ${code ?? "XX000"} ${condition ? `(${condition}) ` : ""}${message ?? String(error)}`;
}

const CONDITIONS: Record<string, string> = {
  P0001: "raise_exception",
  "22P02": "invalid_text_representation",
  "22003": "numeric_value_out_of_range",
  "22007": "invalid_datetime_format",
  "22008": "datetime_field_overflow",
  "22023": "invalid_parameter_value",
  "42703": "undefined_column",
  "42704": "undefined_object",
  "42P01": "undefined_table",
};

class Refused extends Error {}

type Subscribing = { binding: Binding; params: SubscriptionParams };

function noTableMessage(params: SubscriptionParams): string {
  return `Unable to subscribe to changes with given parameters. Please check Realtime is enabled for the given connect parameters: [${paramsToLog(params)}]`;
}

/** Upstream's way: one insert per binding, refused (Refused) at the first that raises or makes no row. */
async function insertOneByOne(
  tx: Pick<PGlite, "query">,
  list: Subscribing[],
  claims: Claims,
): Promise<void> {
  for (const one of list) {
    let made: number;
    try {
      made = (await subscribeMany(tx, [one], claims)).size;
    } catch (error) {
      throw new Refused(
        `Unable to subscribe to changes with given parameters. An exception happened so please check your connect parameters: [${paramsToLog(one.params)}]. Exception: ${postgresError(error)}`,
      );
    }
    if (made === 0) throw new Refused(noTableMessage(one.params));
  }
}

/** SUBSCRIBE_MANY for `list`: the ordinals (from 1) of the bindings that made a row. */
async function subscribeMany(
  tx: Pick<PGlite, "query">,
  list: Subscribing[],
  claims: Claims,
): Promise<Set<number>> {
  const rows = list.map(({ binding, params }) => ({
    id: binding.subscriptionId,
    schema: params.schema,
    table: params.table,
    filters: params.filters,
    action: params.action,
    select: params.select,
  }));
  const result = await tx.query<{ ord: number }>(SUBSCRIBE_MANY, [
    JSON.stringify(rows),
    JSON.stringify(claims),
  ]);
  return new Set(result.rows.map((row) => Number(row.ord)));
}

/**
 * Bindings' subscriptions in one statement, as upstream inserts each (a row per published table it
 * names; the same binding again takes the new claims): the ordinal (from 1, in the list given) of
 * every binding that made a row.
 */
const SUBSCRIBE_MANY = `
  with wanted as (
    select b.ord, b.value ->> 'schema' as schema_name, b.value ->> 'table' as table_name,
      (b.value ->> 'id')::uuid as subscription_id,
      (select coalesce(array_agg(
          (f ->> 0, f ->> 1, f ->> 2, (f ->> 3)::boolean)::realtime.user_defined_filter), '{}')
         from jsonb_array_elements(b.value -> 'filters') f) as filters,
      b.value ->> 'action' as action_filter,
      case when jsonb_typeof(b.value -> 'select') = 'array'
        then array(select jsonb_array_elements_text(b.value -> 'select')) end as selected_columns
    from jsonb_array_elements($1::jsonb) with ordinality as b(value, ord)
  ), published as materialized (
    select schemaname, tablename from pg_publication_tables where pubname = 'supabase_realtime'
  ), inserted as (
    insert into realtime.subscription as x
      (subscription_id, entity, filters, claims, action_filter, selected_columns)
    select w.subscription_id, format('%I.%I', pt.schemaname, pt.tablename)::regclass,
      w.filters, $2::jsonb, w.action_filter, w.selected_columns
    from wanted w
    join published pt
      on pt.schemaname like (case w.schema_name when '*' then '%' else w.schema_name end) escape ''
      and pt.tablename like (case w.table_name when '*' then '%' else w.table_name end) escape ''
    order by w.ord
    on conflict (subscription_id, entity, filters, action_filter, coalesce(selected_columns, '{}'))
    do update set claims = excluded.claims, created_at = now()
    returning subscription_id
  )
  select distinct w.ord::int as ord from wanted w join inserted i using (subscription_id)`;

/** Bindings per statement: a join's subscriptions go in statements of this many. */
const SUBSCRIBE_CHUNK = 500;

/**
 * Upstream's transaction timeout for a join's subscriptions (Subscriptions.create, 10 s), and the
 * system error its channel then sends: the reason, as Elixir inspects the error it got.
 */
export const SUBSCRIBE_TIMEOUT_MS = 10_000;
export const DATABASE_TIMEOUT = '{:error, "Too many database timeouts"}';

/** The change feed: subscriptions in the database, changes read after their commit, fanned out. */

/** The event's fields before the row (upstream's order), as SQL over a change `c`. */
const COMMON = `'schema', wal->'schema', 'table', wal->'table',
  'commit_timestamp', coalesce(wal->'commit_timestamp', 'null'), 'type', wal->'type',
  'columns', coalesce(wal->'columns', '[]'),
  'errors', case when cardinality(errors) > 0 then to_jsonb(errors) else 'null' end`;

export class ChangeFeed {
  readonly #db: PGlite;
  readonly #maxRecordBytes: number;
  /** How long a join's subscriptions may take before the rest are given up (upstream's 10 s). */
  readonly #subscribeTimeoutMs: number;
  /** Upstream's db_events counter: deliveries counted; over the limit, changes are dropped. */
  readonly #limit: RateCounter | undefined;
  /** subscription_id -> the channel and the binding id it stands for */
  readonly #subscriptions = new Map<string, { owner: ChangeSubscriber; id: number }>();
  #started: Promise<void> | undefined;
  /** The last change read (changes are numbered in commit order). */
  #cursor = "0";
  #draining = false;
  #again = false;
  constructor(
    db: PGlite,
    limit?: RateCounter,
    maxRecordBytes = MAX_RECORD_BYTES,
    subscribeTimeoutMs = SUBSCRIBE_TIMEOUT_MS,
  ) {
    this.#db = db;
    this.#subscribeTimeoutMs = subscribeTimeoutMs;
    this.#limit = limit;
    this.#maxRecordBytes = maxRecordBytes;
  }

  /**
   * The channel's bindings subscribed with its claims (again, with new claims, after a new token):
   * undefined, or the message of upstream's system error.
   */
  async subscribe(
    owner: ChangeSubscriber,
    list: Binding[],
    claims: Claims,
  ): Promise<string | undefined> {
    const parsed: Subscribing[] = [];
    for (const binding of list) {
      const result = parseSubscriptionParams(binding.params);
      if (!result.ok) return result.error;
      parsed.push({ binding, params: result.value });
    }
    await this.#start();
    await this.#db.query("select realtime.supabase_local_sync_triggers()");
    const refusal = await this.#insert(parsed, claims);
    if (refusal) return refusal;
    for (const binding of list) {
      this.#subscriptions.set(binding.subscriptionId, { owner, id: binding.id });
    }
    return undefined;
  }

  /**
   * A join's subscriptions, all or none, in one transaction as upstream's: undefined, or the
   * message of the first binding in the client's order that made no row (no published table it
   * names) or raised (a filter the database refuses), where upstream's one insert per binding
   * stops. PGlite is the one database every request waits for, so the bindings go
   * SUBSCRIBE_CHUNK to a statement, and past upstream's deadline the rest are not tried.
   */
  async #insert(parsed: Subscribing[], claims: Claims): Promise<string | undefined> {
    const started = performance.now();
    try {
      await this.#db.transaction(async (tx) => {
        for (let from = 0; from < parsed.length; from += SUBSCRIBE_CHUNK) {
          if (performance.now() - started > this.#subscribeTimeoutMs) {
            throw new Refused(DATABASE_TIMEOUT);
          }
          const chunk = parsed.slice(from, from + SUBSCRIBE_CHUNK);
          await tx.exec("savepoint subscribe_chunk");
          let made: Set<number>;
          try {
            made = await subscribeMany(tx, chunk, claims);
          } catch (error) {
            // one of them raised: which one, inserting them one at a time as upstream does
            await tx.exec("rollback to savepoint subscribe_chunk");
            await insertOneByOne(tx, chunk, claims);
            throw error;
          }
          const missing = chunk.find((_, index) => !made.has(index + 1));
          if (missing) throw new Refused(noTableMessage(missing.params));
        }
      });
    } catch (error) {
      if (error instanceof Refused) return error.message;
      throw error;
    }
    return undefined;
  }

  /** Deletes every subscription and queued change (a previous run's: none are this one's yet). */
  forgetPreviousRun(): void {
    this.#db
      .exec("delete from realtime.subscription; delete from realtime.supabase_local_changes;")
      .catch(() => {});
  }

  /** The channel ended: its rows go (upstream's subscription manager deletes them). */
  async unsubscribe(list: Binding[]): Promise<void> {
    if (list.length === 0) return;
    const ids = list.map((b) => b.subscriptionId);
    for (const id of ids) this.#subscriptions.delete(id);
    await this.#db
      .query("delete from realtime.subscription where subscription_id = any($1::uuid[])", [ids])
      .catch(() => {});
  }

  /** From the first subscription on: the changes after those already queued. */
  #start(): Promise<void> {
    this.#started ??= (async () => {
      const { rows } = await this.#db.query<{ last: string }>(
        "select coalesce(max(id), 0)::text as last from realtime.supabase_local_changes",
      );
      this.#cursor = rows[0]?.last ?? "0";
      await this.#db.listen("supabase_local_changes", () => this.#drain());
    })();
    return this.#started;
  }

  /** Reads what was committed since the last read; one read at a time, again if announced meanwhile. */
  #drain(): void {
    if (this.#draining) {
      this.#again = true;
      return;
    }
    this.#draining = true;
    void (async () => {
      do {
        this.#again = false;
        await this.#read().catch((error) => {
          console.error("[supabase-local] realtime change feed:", error);
        });
      } while (this.#again);
      this.#draining = false;
    })();
  }

  async #read(): Promise<void> {
    for (;;) {
      // Each change's event comes out of the database as JSON text, made there (Postgres writes
      // a space after each colon and comma; clients parse it alike): the main thread neither
      // rebuilds the row as objects nor writes it out again. A jsonb value thousands of levels
      // deep was too deep for both (the read failed, and was tried again at every change for
      // good); it now goes out whole.
      const { rows } = await this.#db.query<{
        change_id: string;
        type: string | null;
        data: string | null;
        subscription_ids: string[] | null;
      }>(
        `select change_id::text, type, subscription_ids,
           case type
             when 'INSERT' then json_build_object(${COMMON}, 'record', record)
             when 'DELETE' then json_build_object(${COMMON}, 'old_record', old_record)
             else json_build_object(${COMMON}, 'record', record, 'old_record', old_record)
           end::text as data
         from (
           select change_id, wal, errors, subscription_ids, wal->>'type' as type,
             coalesce(wal->'record', '{}') as record, coalesce(wal->'old_record', '{}') as old_record
           from realtime.supabase_local_list_changes($1::bigint, $2, $3)
         ) as c`,
        [this.#cursor, MAX_CHANGES, this.#maxRecordBytes],
      );
      const changes = new Set<string>();
      for (const row of rows) {
        changes.add(row.change_id);
        this.#cursor = row.change_id;
        if (row.data && row.type && row.subscription_ids)
          this.#dispatch(row.data, row.type, row.subscription_ids);
      }
      if (changes.size < MAX_CHANGES) return;
    }
  }

  #dispatch(dataJson: string, type: string, subscriptionIds: string[]): void {
    const perChannel = new Map<ChangeSubscriber, number[]>();
    let delivered = 0;
    for (const subscriptionId of subscriptionIds) {
      const subscription = this.#subscriptions.get(subscriptionId);
      if (!subscription) continue;
      delivered++;
      const ids = perChannel.get(subscription.owner);
      if (ids) ids.push(subscription.id);
      else perChannel.set(subscription.owner, [subscription.id]);
    }
    for (const [owner, ids] of perChannel) owner.change(ids, dataJson, type);
    this.#limit?.add(delivered);
  }
}

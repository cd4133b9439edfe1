/**
 * ApiRequest + schema cache -> Plan: names resolved to relations, columns, relationships and
 * functions, and every decision about the answer taken here (limits after Range and max_rows,
 * content negotiation, return preference, counts, transaction, status codes, Location), so the
 * Plan is all sql.ts and execute.ts need. Pure; never changes the ApiRequest. Errors are
 * PostgREST's schema-cache errors (PGRST2xx) and embedding errors (PGRST1xx).
 */
import type {
  Aggregate,
  ApiRequest,
  ArgOrFilter,
  Condition,
  ExplainRequest,
  Field,
  MediaType,
  OrderTerm,
  Scoped,
  SelectItem,
} from "./api-request.ts";
import { errors, RestError } from "./errors.ts";
import { closest } from "./fuzzy.ts";
import { findRoutine } from "./routines.ts";
import {
  type ForeignKey,
  qualified,
  type Relation,
  type RoutineDef,
  type SchemaCache,
} from "./schema-cache.ts";

export interface Relationship {
  readonly toOne: boolean;
  /** a computed relationship: the function called with the parent row gives the rows */
  readonly computed?: { readonly schema: string; readonly name: string };
  /** parent column = child column */
  readonly pairs: readonly (readonly [string, string])[];
  readonly junction?: {
    readonly relation: Relation;
    /** parent column = junction column */
    readonly parentPairs: readonly (readonly [string, string])[];
    /** child column = junction column */
    readonly childPairs: readonly (readonly [string, string])[];
  };
}

export type Output =
  | {
      readonly kind: "column";
      readonly field: Field;
      readonly cast?: string;
      readonly name: string;
      /** count(), sum()…: the rows are grouped by the other columns */
      readonly aggregate?: Aggregate;
      /** the row itself (a to-one spread's count(), counted by the parent) */
      readonly wholeRow?: boolean;
    }
  | { readonly kind: "embed"; readonly index: number; readonly name: string }
  | {
      readonly kind: "spread";
      readonly index: number;
      readonly names: readonly string[];
      /** per name: the aggregate hoisted from a to-one spread, applied at this level */
      readonly aggregates?: readonly (Aggregate | undefined)[];
    }
  /** every column of a relation the cache has no columns for (a function's record result) */
  | { readonly kind: "all" };

export interface EmbedNode {
  readonly relationship: Relationship;
  readonly node: ReadNode;
  /** the name filters, orders and the output use */
  readonly name: string;
  readonly inner: boolean;
  /** a to-many spread: each of these output names becomes an array of the rows' values */
  readonly spreadMany?: readonly string[];
}

export interface ResolvedOrder extends OrderTerm {
  readonly embedIndex?: number;
}

export interface ReadNode {
  readonly relation: Relation;
  readonly outputs: readonly Output[];
  readonly embeds: readonly EmbedNode[];
  readonly conditions: readonly Condition[];
  readonly order: readonly ResolvedOrder[];
  /** for the root: after the Range header and max_rows */
  readonly limit?: number;
  readonly offset?: number;
}

/** How the statement's rows become the HTTP answer; execute.ts follows it without deciding. */
export interface ResponsePlan {
  /** negotiated from Accept: a JSON array, one JSON object (vnd.pgrst.object) or CSV */
  readonly media: MediaType;
  /** Accept: ...;nulls=stripped */
  readonly stripNulls: boolean;
  /** answer with the first row (or null) instead of the array */
  readonly unwrap: boolean;
  /** 406 PGRST116 unless the statement gives exactly one row */
  readonly exactlyOne: boolean;
  /** Prefer: handling=strict, max-affected=n: 400 PGRST124 past n rows */
  readonly maxAffected?: number;
  /** HEAD: the headers without the body */
  readonly head: boolean;
  /** the Preference-Applied header, when a preference was honoured */
  readonly preferenceApplied?: string;
  /** answer with the statement's execution plan instead (db-plan-enabled) */
  readonly explain?: ExplainRequest;
  readonly status: StatusPlan;
}

export type StatusPlan =
  /**
   * Rows read (a table, a view, a function's result): 200, or 206 for part of a counted total,
   * 416 PGRST103 for an offset past it; Content-Range counts from `offset`.
   */
  | { readonly kind: "rows"; readonly offset: number }
  /**
   * A write: `status` with the rows when `body`, otherwise `emptyStatus` and no body.
   * Content-Range: the affected range when `range` (`*` for inserts), over the row count when
   * `count` (Prefer: count), `*` otherwise. `location`: the first row's keys as a Location.
   */
  | {
      readonly kind: "write";
      readonly status: 200 | 201;
      readonly body: boolean;
      readonly emptyStatus: 200 | 201 | 204;
      readonly range: boolean;
      readonly count: boolean;
      readonly location?: { readonly path: string; readonly keys: readonly string[] };
      /**
       * a merge upsert of `offered` rows: 201 if it inserted one, 200 if it only updated (each
       * row updated instead of inserted counts down pgrst.updated)
       */
      readonly mergeStatus?: { readonly offered: number };
    }
  /** a function returning void: 204 */
  | { readonly kind: "no-content" };

interface PlanBase {
  readonly schema: string;
  /** GET/HEAD: SET TRANSACTION READ ONLY */
  readonly readOnly: boolean;
  /** end the transaction with a rollback: db-tx-end, or Prefer: tx= where it may override it */
  readonly rollback: boolean;
  /** Prefer: timezone=, when the database knows the timezone: the transaction's TimeZone */
  readonly timezone?: string;
  /**
   * "exact": the statement also counts every row (Prefer: count=exact/estimated on reads and
   * functions); "planned": the planner's estimate, EXPLAIN of the rows (reads).
   */
  readonly count: "none" | "exact" | "planned";
  readonly response: ResponsePlan;
}

export interface ReadPlan extends PlanBase {
  readonly kind: "read";
  readonly root: ReadNode;
}

export interface MutatePlan extends PlanBase {
  readonly kind: "mutate";
  readonly action: "insert" | "update" | "delete";
  readonly relation: Relation;
  readonly columns: readonly string[];
  readonly onConflict?: readonly string[];
  /** Prefer: resolution= (upsert) */
  readonly resolution?: "merge-duplicates" | "ignore-duplicates";
  /** Prefer: missing=default: keys absent from an object take the column default */
  readonly missingDefault: boolean;
  readonly conditions: readonly Condition[];
  /** the read over the written rows (RETURNING), when `returning` */
  readonly root: ReadNode;
  /** the statement returns the written rows (representation, headers-only, vnd.pgrst.object) */
  readonly returning: boolean;
  /** the JSON body */
  readonly payload: unknown;
}

export interface CallPlan extends PlanBase {
  readonly kind: "call";
  readonly routine: RoutineDef;
  /** argument names given, in the routine's order */
  readonly args: readonly string[];
  /** the whole body goes to the single unnamed parameter (json/jsonb, text, xml or bytea) */
  readonly single: boolean;
  /** the arguments: the JSON body, or for GET/HEAD the query string's argument params */
  readonly payload: unknown;
  /**
   * the read over the function's result (its rows, or its scalars as the column pgrst_scalar,
   * see resultRelation); none for void
   */
  readonly root?: ReadNode;
}

export type Plan = ReadPlan | MutatePlan | CallPlan;

export interface PlanOptions {
  /** db-max-rows (config.toml [api] max_rows): the most rows one read returns */
  maxRows?: number;
  /** db-aggregates-enabled: count(), sum()… allowed in select (else PGRST123) */
  aggregatesEnabled?: boolean;
  /** db-plan-enabled: Accept: application/vnd.pgrst.plan answers with the EXPLAIN output */
  planEnabled?: boolean;
  /** db-tx-end (default commit, no override: Prefer: tx= is ignored) */
  txEnd?: { readonly rollback: boolean; readonly allowOverride: boolean };
}

const CASTS: Record<string, string> = {
  integer: "int4",
  int: "int4",
  bigint: "int8",
  smallint: "int2",
  boolean: "bool",
  real: "float4",
  float: "float8",
  double: "float8",
  decimal: "numeric",
};
export const castName = (cast: string) => CASTS[cast] ?? cast;

/**
 * Plans a parsed request. `schema` and `payload` default to the request's own (tests that build
 * an ApiRequest without a body hand the payload here).
 */
export function planRequest(
  request: ApiRequest,
  cache: SchemaCache,
  schema: string = request.schema,
  payload: unknown = request.payload,
  options: PlanOptions = {},
): Plan {
  // the plan media type exists only with db-plan-enabled: otherwise it is not available (PGRST107)
  if (request.explain && !options.planEnabled) throw errors.mediaType([request.explain.mime]);
  const page = rootPage(request, options.maxRows);
  const prefer = honoured(request, cache, options);
  if (request.action === "call")
    return planCall(
      request,
      cache,
      schema,
      payload,
      page,
      options.aggregatesEnabled ?? false,
      prefer,
    );
  const relation = cache.relations.get(qualified(schema, request.target));
  if (!relation)
    throw errors.tableNotFound(
      schema,
      request.target,
      closest(
        [...cache.relations.values()].filter((r) => r.schema === schema).map((r) => r.name),
        request.target,
        0.75,
      ) ?? null,
    );
  const root = {
    ...planNode(
      relation,
      request.select,
      [],
      request.scopes,
      cache,
      schema,
      options.aggregatesEnabled ?? false,
    ),
    ...page,
  };
  checkScopes(request.scopes, root);
  if (request.action === "read") {
    strictPreferences(prefer);
    return {
      kind: "read",
      ...common(
        request,
        schema,
        request.prefer.count === "planned" ? "planned" : countInQuery(request),
        prefer,
      ),
      root,
      response: {
        ...negotiated(request, prefer),
        unwrap: request.media === "object",
        exactlyOne: request.media === "object",
        status: { kind: "rows", offset: page.offset ?? 0 },
      },
    };
  }
  if (request.action === "upsert")
    throw errors.notImplemented(
      "PUT is not supported by the local data API; use POST with on_conflict",
    );
  const action = request.action;
  if (action !== "insert" && (page.limit !== undefined || page.offset !== undefined))
    throw errors.notImplemented(
      "limit/offset on PATCH and DELETE are not supported by the local data API",
    );
  const columns = mutationColumns(request, relation, payload);
  // on_conflict's columns are not looked up: Postgres refuses an unknown one (42703), as it does
  // for PostgREST; without Prefer: resolution they are not used at all
  const onConflict =
    request.onConflict ?? (request.prefer.resolution ? relation.primaryKey : undefined);
  strictPreferences(prefer);

  const ret = request.prefer.return ?? "minimal";
  const object = request.media === "object";
  const headersOnly = ret === "headers-only";
  const keys = relation.primaryKey;
  const returned: ReadNode = {
    ...root,
    conditions: [],
    order: [],
    limit: undefined,
    offset: undefined,
  };
  return {
    kind: "mutate",
    ...common(request, schema, "none", prefer),
    action,
    relation,
    columns,
    onConflict,
    resolution: request.prefer.resolution,
    missingDefault: request.prefer.missing === "default",
    conditions: request.scopes.get("")?.conditions ?? [],
    // headers-only returns the primary key alone (for Location)
    root:
      headersOnly && keys.length
        ? {
            ...returned,
            embeds: [],
            outputs: keys.map((name) => ({ kind: "column", field: { name, json: [] }, name })),
          }
        : returned,
    returning: ret === "representation" || headersOnly || object,
    payload,
    response: {
      ...negotiated(request, prefer, {
        resolution: action === "insert" && (keys.length > 0 || request.onConflict !== undefined),
      }),
      unwrap: object,
      exactlyOne: object,
      status: {
        kind: "write",
        status: action === "insert" ? 201 : 200,
        body: ret === "representation" || object,
        emptyStatus: action === "insert" ? 201 : 204,
        range: action !== "insert",
        count: request.prefer.count !== undefined,
        location:
          headersOnly && action === "insert" && keys.length
            ? { path: `/${encodeURIComponent(relation.name)}`, keys }
            : undefined,
        mergeStatus:
          action === "insert" &&
          request.prefer.resolution === "merge-duplicates" &&
          onConflict?.length
            ? { offered: Array.isArray(payload) ? payload.length : 1 }
            : undefined,
      },
    },
  };
}

/** The root's limit and offset (the Range header's already in them); max_rows caps reads. */
function rootPage(
  request: ApiRequest,
  maxRows: number | undefined,
): { limit?: number; offset?: number } {
  const root = request.scopes.get("");
  let limit = root?.limit;
  const offset = root?.offset;
  if (
    maxRows !== undefined &&
    maxRows > 0 &&
    (request.action === "read" || request.action === "call")
  )
    limit = Math.min(limit ?? maxRows, maxRows);
  return { limit, offset };
}

const countInQuery = (request: ApiRequest) =>
  request.prefer.count === "exact" || request.prefer.count === "estimated" ? "exact" : "none";

/**
 * The preferences in force, as PostgREST's Preferences: tx= only where db-tx-end allows an
 * override (the Supabase CLI's PostgREST does not: it is ignored, and the transaction commits),
 * timezone= only for a timezone the database knows; the entries that remain invalid.
 */
interface Honoured {
  readonly tx?: "commit" | "rollback";
  readonly timezone?: string;
  readonly rollbackAll: boolean;
  readonly handling?: "strict" | "lenient";
  readonly invalid: readonly string[];
}

function honoured(request: ApiRequest, cache: SchemaCache, options: PlanOptions): Honoured {
  const { prefer } = request;
  const txEnd = options.txEnd ?? { rollback: false, allowOverride: false };
  const timezone =
    prefer.timezone !== undefined && cache.timezones?.has(prefer.timezone)
      ? prefer.timezone
      : undefined;
  return {
    tx: txEnd.allowOverride ? prefer.tx : undefined,
    timezone,
    rollbackAll: txEnd.rollback,
    handling: prefer.handling,
    // every timezone= entry is acceptable once the first one names a known timezone
    invalid: prefer.invalid.filter((p) => !(timezone !== undefined && p.startsWith("timezone="))),
  };
}

/** handling=strict: 400 PGRST122 for any preference PostgREST does not accept. */
function strictPreferences(prefer: Honoured) {
  if (prefer.handling === "strict" && prefer.invalid.length > 0)
    throw errors.invalidPreferences([...prefer.invalid]);
}

/** What every plan carries: the schema, the transaction and the count. */
function common(request: ApiRequest, schema: string, count: PlanBase["count"], prefer: Honoured) {
  return {
    schema,
    readOnly: request.method === "GET" || request.method === "HEAD",
    rollback: prefer.tx === "rollback" || (prefer.rollbackAll && prefer.tx !== "commit"),
    timezone: prefer.timezone,
    count,
  };
}

/**
 * The parts of the answer fixed by the request's headers alone. Preference-Applied lists what
 * PostgREST's responsePreferences keeps for the action, in its order: resolution (an insert into
 * a table with a primary key or on_conflict), missing (insert, update), return (writes), count,
 * tx, handling, timezone, then max-affected (update, delete, function calls; with
 * handling=strict), which is also the only place max-affected is enforced.
 */
function negotiated(
  request: ApiRequest,
  honouredPrefer: Honoured,
  write: { resolution: boolean } = { resolution: false },
) {
  const { prefer, action } = request;
  const mutation = action === "insert" || action === "update" || action === "delete";
  const limited = action === "update" || action === "delete" || action === "call";
  const strict = prefer.handling === "strict";
  const maxAffected = limited && strict ? prefer.maxAffected : undefined;
  const applied = [
    write.resolution && prefer.resolution && `resolution=${prefer.resolution}`,
    (action === "insert" || action === "update") && prefer.missing && `missing=${prefer.missing}`,
    mutation && prefer.return && `return=${prefer.return}`,
    prefer.count && `count=${prefer.count}`,
    honouredPrefer.tx && `tx=${honouredPrefer.tx}`,
    prefer.handling && `handling=${prefer.handling}`,
    honouredPrefer.timezone !== undefined && `timezone=${honouredPrefer.timezone}`,
    maxAffected !== undefined && `max-affected=${maxAffected}`,
  ].filter((p): p is string => typeof p === "string");
  return {
    preferenceApplied: applied.length ? applied.join(", ") : undefined,
    explain: request.explain,
    media: request.media,
    stripNulls: request.stripNulls,
    maxAffected,
    head: request.method === "HEAD",
  };
}

function mutationColumns(
  request: ApiRequest,
  relation: Relation,
  body: unknown,
): readonly string[] {
  if (request.action === "delete") return [];
  let columns: readonly string[];
  if (request.columns) columns = request.columns;
  else if (Array.isArray(body)) {
    const first = body[0];
    columns = first && typeof first === "object" ? Object.keys(first) : [];
    const key = [...columns].sort().join("\u0000");
    for (const row of body)
      if (
        !row ||
        typeof row !== "object" ||
        Array.isArray(row) ||
        Object.keys(row).sort().join("\u0000") !== key
      )
        throw errors.invalidBody("All object keys must match");
  } else columns = body && typeof body === "object" ? Object.keys(body) : [];
  for (const c of columns)
    if (!relation.columns.has(c)) throw errors.columnNotFound(relation.name, c);
  return columns;
}

function planNode(
  relation: Relation,
  select: readonly SelectItem[],
  path: string[],
  scopes: ReadonlyMap<string, Scoped>,
  cache: SchemaCache,
  schema: string,
  aggregates: boolean,
): ReadNode {
  const scoped = scopes.get(path.join(".")) ?? { conditions: [] };
  const outputs: Output[] = [];
  const embeds: EmbedNode[] = [];
  for (const item of select) {
    if (item.type === "star") {
      if (relation.columns.size === 0) outputs.push({ kind: "all" });
      for (const name of relation.columns.keys())
        outputs.push({ kind: "column", field: { name, json: [] }, name });
    } else if (item.type === "column") {
      if (item.aggregate && !aggregates) throw errors.aggregatesNotAllowed();
      const last = item.field.json.at(-1);
      const name = item.alias ?? item.aggregate?.fn ?? (last ? String(last.key) : item.field.name);
      outputs.push({
        kind: "column",
        field: item.field,
        cast: item.cast ? castName(item.cast) : undefined,
        name,
        aggregate: item.aggregate && {
          fn: item.aggregate.fn,
          cast: item.aggregate.cast ? castName(item.aggregate.cast) : undefined,
        },
      });
    } else {
      const { relationship, target } = resolveEmbed(relation, item.name, item.hint, cache, schema);
      const name = item.alias ?? item.name;
      const child = planNode(
        target,
        item.select,
        [...path, name],
        scopes,
        cache,
        schema,
        aggregates,
      );
      const index = embeds.length;
      const names = outputNames(child);
      const spreadMany = item.spread && !relationship.toOne;
      if (spreadMany && hasAggregates(child))
        throw errors.notImplemented(
          "Aggregates are not implemented for one-to-many or many-to-many spreads.",
        );
      // a to-one spread's aggregates are computed by this level, over its rows (PostgREST hoists them)
      const hoisted = item.spread && !spreadMany ? hoistAggregates(child) : undefined;
      embeds.push({
        relationship,
        node: hoisted?.node ?? child,
        name,
        inner: item.join === "inner",
        spreadMany: spreadMany ? names : undefined,
      });
      if (item.spread)
        outputs.push({ kind: "spread", index, names, aggregates: hoisted?.aggregates });
      else if (item.select.length > 0) outputs.push({ kind: "embed", index, name });
    }
  }
  const order = (scoped.order ?? []).map((term): ResolvedOrder => {
    if (!term.relation) return term;
    const embedIndex = embeds.findIndex((e) => e.name === term.relation);
    const embed = embeds[embedIndex];
    if (!embed) throw errors.notEmbedded(term.relation);
    if (!embed.relationship.toOne) throw errors.relatedOrderNotToOne(relation.name, term.relation);
    return { ...term, embedIndex };
  });
  const node: ReadNode = {
    relation,
    // PostgREST's select list: the columns, then the embeds and spreads, each in request order
    outputs: [
      ...outputs.filter((o) => o.kind === "column" || o.kind === "all"),
      ...outputs.filter((o) => o.kind === "embed" || o.kind === "spread"),
    ],
    embeds,
    conditions: scoped.conditions,
    order,
    limit: scoped.limit,
    offset: scoped.offset,
  };
  for (const cond of node.conditions) checkEmbedFilter(cond, node);
  return node;
}

function hasAggregates(node: ReadNode): boolean {
  return node.outputs.some(
    (o) =>
      (o.kind === "column" && o.aggregate) || (o.kind === "spread" && o.aggregates?.some((a) => a)),
  );
}

/**
 * A to-one spread's aggregates, lifted out of its node: the node selects the plain values (the
 * row itself for count()) under the aggregates' names, and the parent applies the aggregates (in
 * outputNames order) grouped by its other columns, as PostgREST's hoistSpreadAggFunctions does.
 * Those the node took from to-one spreads of its own go up with them.
 */
function hoistAggregates(node: ReadNode): {
  node: ReadNode;
  aggregates?: (Aggregate | undefined)[];
} {
  if (!hasAggregates(node)) return { node };
  const aggregates: (Aggregate | undefined)[] = [];
  const outputs = node.outputs.map((o): Output => {
    if (o.kind === "column") {
      aggregates.push(o.aggregate);
      if (!o.aggregate) return o;
      const { aggregate: _, ...plain } = o;
      return o.field.name === "*" ? { ...plain, wholeRow: true } : plain;
    }
    if (o.kind === "spread") {
      aggregates.push(...o.names.map((_, i) => o.aggregates?.[i]));
      return { ...o, aggregates: undefined };
    }
    if (o.kind === "embed") aggregates.push(undefined);
    return o;
  });
  return { node: { ...node, outputs }, aggregates };
}

/** Filters naming an embedded resource only take is.null / not.is.null. */
function checkEmbedFilter(cond: Condition, node: ReadNode) {
  if (cond.type === "logic") {
    for (const c of cond.children) checkEmbedFilter(c, node);
    return;
  }
  const embed = node.embeds.find((e) => e.name === cond.field.name);
  if (!embed || node.relation.columns.has(cond.field.name)) return;
  const v = cond.value;
  if (cond.op !== "is" || v.kind !== "is" || !["null", "not_null"].includes(v.value)) {
    const err = errors.unacceptableFilter(cond.field.name);
    throw new RestError(
      err.status,
      err.code,
      err.message,
      "Only is null or not is null filters are allowed on embedded resources",
    );
  }
}

export function outputNames(node: ReadNode): string[] {
  return node.outputs.flatMap((o) =>
    o.kind === "spread" ? o.names : o.kind === "all" ? [] : [o.name],
  );
}

function checkScopes(scopes: ReadonlyMap<string, Scoped>, root: ReadNode) {
  for (const key of scopes.keys()) {
    if (key === "") continue;
    let node: ReadNode | undefined = root;
    for (const part of key.split(".")) {
      const next: EmbedNode | undefined = node?.embeds.find((e) => e.name === part);
      if (!next) throw errors.notEmbedded(part);
      node = next.node;
    }
  }
}

// ---------------------------------------------------------------- relationships

/** One relationship of a table, as PostgREST's schema cache holds it. */
interface Candidate {
  relationship: Relationship;
  target: Relation;
  cardinality: "many-to-one" | "one-to-many" | "one-to-one" | "many-to-many";
  /** the foreign key's name (the junction's name for many-to-many) */
  constraint: string;
  /** origin column, target column (junction columns for many-to-many) */
  columns: readonly (readonly [string, string])[];
  isSelf: boolean;
  /** "…using…" for PGRST201's details */
  label: string;
  computed?: boolean;
}

function resolveEmbed(
  parent: Relation,
  name: string,
  hint: string | undefined,
  cache: SchemaCache,
  schema: string,
): { relationship: Relationship; target: Relation } {
  let candidates = relationshipsOf(parent, cache, schema).filter((c) => matches(c, name, hint));
  // a computed relationship overrides the detected ones of the same name
  if (candidates.some((c) => c.computed)) candidates = candidates.filter((c) => c.computed);
  if (candidates.length === 0)
    throw errors.noRelationship(
      parent.name,
      name,
      hint ?? null,
      schema,
      relationshipHint(parent, name, cache, schema),
    );
  if (candidates.length > 1)
    throw errors.ambiguousRelationship(
      parent.name,
      name,
      candidates.map((c) => ({
        cardinality: c.cardinality,
        embedding: `${parent.name} with ${c.target.name}`,
        relationship: c.label,
      })),
      candidates.map((c) => `'${c.target.name}!${c.constraint}'`),
    );
  const only = candidates[0] as Candidate;
  return { relationship: only.relationship, target: only.target };
}

/**
 * PostgREST's findRel: which relationships an embed `name!hint` means. In a self-relationship
 * the table's name means the children (one-to-many), the foreign key column the parent
 * (many-to-one), and a hint names the children's foreign key column.
 */
function matches(c: Candidate, name: string, hint: string | undefined): boolean {
  if (c.computed) return name === c.constraint;
  const single = c.columns.length === 1 ? (c.columns[0] as readonly [string, string]) : undefined;
  const toTarget = name === c.target.name;
  if (c.isSelf)
    return hint === undefined
      ? (toTarget && c.cardinality === "one-to-many") ||
          (c.cardinality === "many-to-one" && single?.[0] === name)
      : toTarget && c.cardinality === "one-to-many" && single?.[1] === hint;
  if (hint === undefined)
    return (
      toTarget ||
      (c.cardinality !== "many-to-many" &&
        !c.target.isView &&
        (name === c.constraint || single?.[0] === name))
    );
  return (
    toTarget &&
    (c.cardinality === "many-to-many"
      ? hint === c.constraint
      : hint === c.constraint || single?.[0] === hint || single?.[1] === hint)
  );
}

/**
 * PostgREST's noRelBetweenHint: a close name among the parent's related tables (when it has
 * relationships), else among the tables that have relationships.
 */
function relationshipHint(
  parent: Relation,
  child: string,
  cache: SchemaCache,
  schema: string,
): string | null {
  const related = relationshipsOf(parent, cache, schema).filter((c) => !c.computed);
  if (related.length) {
    const names = related.map((c) => c.target.name).filter((n) => n !== child);
    const best = closest(names, child);
    return best ? `Perhaps you meant '${best}' instead of '${child}'.` : null;
  }
  const withRelationships = cache.foreignKeys.flatMap((fk) =>
    [
      [fk.schema, fk.table],
      [fk.refSchema, fk.refTable],
    ]
      .filter(([s]) => s === schema)
      .map(([, t]) => t as string),
  );
  const best = closest(withRelationships, parent.name);
  return best && best !== parent.name
    ? `Perhaps you meant '${best}' instead of '${parent.name}'.`
    : null;
}

const isUnique = (rel: Relation, cols: readonly string[]) =>
  rel.uniques.some((u) => u.length === cols.length && u.every((c) => cols.includes(c)));
const within = (cols: string[], pk: string[]) => pk.length > 0 && cols.every((c) => pk.includes(c));
const fmtCols = (rel: string, cols: readonly string[]) => `${rel}(${cols.join(", ")})`;

/** Every relationship of `parent`: foreign keys both ways, junctions, computed relationships. */
function relationshipsOf(parent: Relation, cache: SchemaCache, schema: string): Candidate[] {
  const out: Candidate[] = [];
  const fks = cache.foreignKeys;
  const from = (fk: ForeignKey, rel: Relation) => fk.schema === rel.schema && fk.table === rel.name;
  const to = (fk: ForeignKey, rel: Relation) =>
    fk.refSchema === rel.schema && fk.refTable === rel.name;
  const direct = (
    cardinality: Candidate["cardinality"],
    fk: ForeignKey,
    target: Relation,
    columns: [string, string][],
    toOne: boolean,
  ): Candidate => ({
    relationship: { toOne, pairs: columns },
    target,
    cardinality,
    constraint: fk.name,
    columns,
    isSelf: target.schema === parent.schema && target.name === parent.name,
    label: `${fk.name} using ${fmtCols(
      parent.name,
      columns.map((c) => c[0]),
    )} and ${fmtCols(
      target.name,
      columns.map((c) => c[1]),
    )}`,
  });
  // computed relationships: functions of the parent's row returning rows of a table
  for (const [key, routines] of cache.routines) {
    if (!key.startsWith(`${schema}.`)) continue;
    for (const r of routines) {
      const target =
        r.returnRelation &&
        cache.relations.get(qualified(r.returnRelation.schema, r.returnRelation.name));
      if (!target || r.rowArg?.schema !== parent.schema || r.rowArg.name !== parent.name) continue;
      out.push({
        relationship: {
          toOne: !r.returnsSet,
          pairs: [],
          computed: { schema: r.schema, name: r.name },
        },
        target,
        cardinality: r.returnsSet ? "one-to-many" : "many-to-one",
        constraint: r.name,
        columns: [],
        isSelf: false,
        label: `${r.schema}.${r.name}`,
        computed: true,
      });
    }
  }
  for (const fk of fks) {
    if (from(fk, parent)) {
      const target = cache.relations.get(qualified(fk.refSchema, fk.refTable));
      const cols = fk.columns.map((c, i): [string, string] => [c, fk.refColumns[i] as string]);
      if (target)
        out.push(
          direct(
            isUnique(parent, fk.columns) ? "one-to-one" : "many-to-one",
            fk,
            target,
            cols,
            true,
          ),
        );
    }
    if (to(fk, parent)) {
      const target = cache.relations.get(qualified(fk.schema, fk.table));
      const cols = fk.refColumns.map((c, i): [string, string] => [c, fk.columns[i] as string]);
      if (target) {
        const toOne = isUnique(target, fk.columns);
        out.push(direct(toOne ? "one-to-one" : "one-to-many", fk, target, cols, toOne));
      }
    }
  }
  // many-to-many through a junction whose foreign key columns are part of its primary key
  for (const j of cache.relations.values()) {
    if (j.schema !== schema) continue;
    for (const a of fks.filter((fk) => from(fk, j) && to(fk, parent)))
      for (const b of fks.filter((fk) => from(fk, j) && fk !== a)) {
        const target = cache.relations.get(qualified(b.refSchema, b.refTable));
        if (!target || !within(a.columns, j.primaryKey) || !within(b.columns, j.primaryKey))
          continue;
        out.push({
          relationship: {
            toOne: false,
            pairs: [],
            junction: {
              relation: j,
              parentPairs: a.refColumns.map((c, i) => [c, a.columns[i] as string]),
              childPairs: b.refColumns.map((c, i) => [c, b.columns[i] as string]),
            },
          },
          target,
          cardinality: "many-to-many",
          constraint: j.name,
          columns: [],
          isSelf: false,
          label: `${j.name} using ${fmtCols(a.name, a.columns)} and ${fmtCols(b.name, b.columns)}`,
        });
      }
  }
  return out;
}

// ---------------------------------------------------------------- functions

function planCall(
  request: ApiRequest,
  cache: SchemaCache,
  schema: string,
  body: unknown,
  page: { limit?: number; offset?: number },
  aggregates: boolean,
  prefer: Honoured,
): Plan {
  const readLike = request.method === "GET" || request.method === "HEAD";
  let keys: Set<string>;
  let payload = body;
  let scopes = request.scopes;
  if (readLike) {
    // the query string's params: a value that reads as a filter (op.value) filters the result,
    // any other is an argument (PostgREST's rule, whatever the function's parameters are)
    const args = request.argsOrFilters.filter((p) => "error" in p.filter);
    scopes = withFilters(
      request.scopes,
      request.argsOrFilters.filter((p) => !("error" in p.filter)),
    );
    keys = new Set(args.map((p) => p.key));
    payload = Object.fromEntries(args.map((p) => [p.key, p.value]));
  } else if (request.columns) keys = new Set(request.columns);
  else {
    const first = Array.isArray(body) ? body[0] : body;
    keys = new Set(first && typeof first === "object" ? Object.keys(first as object) : []);
  }
  const { routine, single } = findRoutine(
    cache,
    schema,
    request.target,
    keys,
    readLike ? undefined : request.contentType,
  );
  let root: ReadNode | undefined;
  if (routine.returnKind !== "void") {
    root = {
      ...planNode(
        resultRelation(routine, cache, schema),
        request.select,
        [],
        scopes,
        cache,
        schema,
        aggregates,
      ),
      ...page,
    };
    checkScopes(scopes, root);
  }
  strictPreferences(prefer);
  if (
    request.prefer.handling === "strict" &&
    request.prefer.maxAffected !== undefined &&
    !routine.returnsSet
  )
    throw errors.maxAffectedNotSetof();
  const object = request.media === "object";
  // one row of a composite type is answered as an object, not an array of one
  const singleComposite = !routine.returnsSet && routine.returnKind !== "scalar";
  return {
    kind: "call",
    ...common(request, schema, countInQuery(request), prefer),
    // POST runs stable and immutable functions in a read-only transaction too
    readOnly: readLike || routine.volatility !== "volatile",
    routine,
    args: single ? [] : routine.args.filter((a) => keys.has(a.name)).map((a) => a.name),
    single,
    payload,
    root,
    response: {
      ...negotiated(request, prefer),
      unwrap: object || singleComposite,
      exactlyOne: object && routine.returnsSet,
      status:
        !root && routine.returnKind === "void"
          ? { kind: "no-content" }
          : { kind: "rows", offset: page.offset ?? 0 },
    },
  };
}

/** The column a function's scalar results are read from, as PostgREST names it. */
export const SCALAR_COLUMN = "pgrst_scalar";

/**
 * What a function's result is read as: the table it returns rows of, its columns (a composite
 * type, OUT/TABLE parameters), or for a scalar or a set of scalars one column, pgrst_scalar, as
 * PostgREST's call reads it (`SELECT fn(…) pgrst_scalar`): select, filters and order apply to it
 * like to any relation, and another column is one Postgres does not find (42703).
 */
function resultRelation(routine: RoutineDef, cache: SchemaCache, schema: string): Relation {
  const returned =
    routine.returnRelation &&
    cache.relations.get(qualified(routine.returnRelation.schema, routine.returnRelation.name));
  if (returned) return returned;
  const columns =
    routine.returnKind === "scalar"
      ? [{ name: SCALAR_COLUMN, type: routine.returnType, nullable: true, hasDefault: false }]
      : (routine.columns ?? []);
  return {
    schema,
    name: routine.name,
    isView: false,
    columns: new Map(columns.map((c) => [c.name, c])),
    primaryKey: [],
    uniques: [],
  };
}

/** The request's scopes with the GET /rpc params that are filters added (a new map). */
function withFilters(
  scopes: ReadonlyMap<string, Scoped>,
  filters: readonly ArgOrFilter[],
): ReadonlyMap<string, Scoped> {
  const out = new Map(scopes);
  for (const { filter } of filters) {
    if ("error" in filter) throw filter.error;
    const s = out.get(filter.scope) ?? { conditions: [] };
    out.set(filter.scope, { ...s, conditions: [...s.conditions, filter.condition] });
  }
  return out;
}

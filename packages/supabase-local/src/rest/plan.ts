/**
 * ApiRequest + schema cache -> Plan: names resolved to relations, columns, relationships and
 * functions, and every decision about the answer taken here (limits after Range and max_rows,
 * content negotiation, return preference, counts, transaction, status codes, Location), so the
 * Plan is all sql.ts and execute.ts need. Pure; never changes the ApiRequest. Errors are
 * PostgREST's schema-cache errors (PGRST2xx) and embedding errors (PGRST1xx).
 */
import type {
  ApiRequest,
  ArgOrFilter,
  Condition,
  Field,
  MediaType,
  OrderTerm,
  Scoped,
  SelectItem,
} from "./api-request.ts";
import { errors, RestError } from "./errors.ts";
import {
  type ForeignKey,
  qualified,
  type Relation,
  type RoutineDef,
  type SchemaCache,
} from "./schema-cache.ts";

export interface Relationship {
  readonly toOne: boolean;
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
    }
  | { readonly kind: "embed"; readonly index: number; readonly name: string }
  | { readonly kind: "spread"; readonly index: number; readonly names: readonly string[] }
  /** every column of a relation the cache has no columns for (a function's record result) */
  | { readonly kind: "all" };

export interface EmbedNode {
  readonly relationship: Relationship;
  readonly node: ReadNode;
  /** the name filters, orders and the output use */
  readonly name: string;
  readonly inner: boolean;
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
      readonly emptyStatus: 201 | 204;
      readonly range: boolean;
      readonly count: boolean;
      readonly location?: { readonly path: string; readonly keys: readonly string[] };
    }
  /** a function returning void: 204 */
  | { readonly kind: "no-content" };

interface PlanBase {
  readonly schema: string;
  /** GET/HEAD: SET TRANSACTION READ ONLY */
  readonly readOnly: boolean;
  /** Prefer: tx=rollback */
  readonly rollback: boolean;
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
  /** the whole payload goes to a single unnamed json parameter */
  readonly singleJson: boolean;
  /** the arguments: the JSON body, or for GET/HEAD the query string's argument params */
  readonly payload: unknown;
  /** for functions returning rows: the read over the function's result */
  readonly root?: ReadNode;
}

export type Plan = ReadPlan | MutatePlan | CallPlan;

export interface PlanOptions {
  /** config.toml [api] max_rows: the most rows one read returns (Supabase's default is 1000) */
  maxRows?: number;
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
  const page = rootPage(request, options.maxRows);
  if (request.action === "call") return planCall(request, cache, schema, payload, page);
  const relation = cache.relations.get(qualified(schema, request.target));
  if (!relation) throw errors.tableNotFound(schema, request.target);
  const root = {
    ...planNode(relation, request.select, [], request.scopes, cache, schema),
    ...page,
  };
  checkScopes(request.scopes, root);
  if (request.action === "read")
    return {
      kind: "read",
      ...common(
        request,
        schema,
        request.prefer.count === "planned" ? "planned" : countInQuery(request),
      ),
      root,
      response: {
        ...negotiated(request),
        unwrap: request.media === "object",
        exactlyOne: request.media === "object",
        status: { kind: "rows", offset: page.offset ?? 0 },
      },
    };
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
  const onConflict =
    request.onConflict ?? (request.prefer.resolution ? relation.primaryKey : undefined);
  for (const c of onConflict ?? [])
    if (!relation.columns.has(c)) throw errors.columnNotFound(relation.name, c);

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
    ...common(request, schema, "none"),
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
      ...negotiated(request),
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
      },
    },
  };
}

/** The root's limit and offset: the URL's, else the Range header's; max_rows caps reads. */
function rootPage(
  request: ApiRequest,
  maxRows: number | undefined,
): { limit?: number; offset?: number } {
  const root = request.scopes.get("");
  let limit = root?.limit;
  let offset = root?.offset;
  if (request.range && limit === undefined && offset === undefined) {
    offset = request.range.from;
    if (request.range.to !== undefined) limit = request.range.to - request.range.from + 1;
  }
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

/** What every plan carries: the schema, the transaction and the count. */
function common(request: ApiRequest, schema: string, count: PlanBase["count"]) {
  return {
    schema,
    readOnly: request.method === "GET" || request.method === "HEAD",
    rollback: request.prefer.tx === "rollback",
    count,
  };
}

/** The parts of the answer fixed by the request's headers alone. */
function negotiated(request: ApiRequest) {
  const { prefer } = request;
  const mutation = request.action !== "read" && request.action !== "call";
  const applied: string[] = [];
  if (mutation && prefer.return) applied.push(`return=${prefer.return}`);
  if (prefer.count) applied.push(`count=${prefer.count}`);
  if (mutation && prefer.resolution) applied.push(`resolution=${prefer.resolution}`);
  if (prefer.tx) applied.push(`tx=${prefer.tx}`);
  if (prefer.missing) applied.push(`missing=${prefer.missing}`);
  return {
    preferenceApplied: applied.length ? applied.join(", ") : undefined,
    media: request.media,
    stripNulls: request.stripNulls,
    maxAffected: prefer.handling === "strict" ? prefer.maxAffected : undefined,
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
      const last = item.field.json.at(-1);
      const name = item.alias ?? (last ? String(last.key) : item.field.name);
      outputs.push({
        kind: "column",
        field: item.field,
        cast: item.cast ? castName(item.cast) : undefined,
        name,
      });
    } else {
      const { relationship, target } = resolveEmbed(relation, item.name, item.hint, cache, schema);
      const name = item.alias ?? item.name;
      const child = planNode(target, item.select, [...path, name], scopes, cache, schema);
      const index = embeds.length;
      embeds.push({ relationship, node: child, name, inner: item.join === "inner" });
      if (item.spread) {
        if (!relationship.toOne)
          throw errors.notImplemented("spreading a to-many embedded resource is not supported");
        outputs.push({ kind: "spread", index, names: outputNames(child) });
      } else if (item.select.length > 0) outputs.push({ kind: "embed", index, name });
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
    outputs,
    embeds,
    conditions: scoped.conditions,
    order,
    limit: scoped.limit,
    offset: scoped.offset,
  };
  for (const cond of node.conditions) checkEmbedFilter(cond, node);
  return node;
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

interface Candidate {
  relationship: Relationship;
  target: Relation;
  cardinality: string;
  label: string;
  hintName: string;
  matches: (hint: string) => boolean;
}

function resolveEmbed(
  parent: Relation,
  name: string,
  hint: string | undefined,
  cache: SchemaCache,
  schema: string,
): { relationship: Relationship; target: Relation } {
  let candidates = candidatesFor(parent, name, cache, schema);
  if (hint) candidates = candidates.filter((c) => c.matches(hint));
  if (candidates.length === 0) throw errors.noRelationship(parent.name, name, hint ?? null, schema);
  if (candidates.length > 1) {
    // a direct relationship wins over ones through a junction only when the hint chose none
    throw errors.ambiguousRelationship(
      parent.name,
      name,
      candidates.map((c) => ({
        cardinality: c.cardinality,
        embedding: `${parent.name} with ${c.target.name}`,
        relationship: c.label,
      })),
      candidates.map((c) => `'${name}!${c.hintName}'`),
    );
  }
  const only = candidates[0] as Candidate;
  return { relationship: only.relationship, target: only.target };
}

const isUnique = (rel: Relation, cols: string[]) =>
  rel.uniques.some((u) => u.length === cols.length && u.every((c) => cols.includes(c)));
const within = (cols: string[], pk: string[]) => pk.length > 0 && cols.every((c) => pk.includes(c));
const fmtCols = (rel: string, cols: string[]) => `${rel}(${cols.join(", ")})`;

function candidatesFor(
  parent: Relation,
  name: string,
  cache: SchemaCache,
  schema: string,
): Candidate[] {
  const out: Candidate[] = [];
  const target = cache.relations.get(qualified(schema, name));
  const fks = cache.foreignKeys;
  const is = (fk: ForeignKey, side: "from" | "to", rel: Relation) =>
    side === "from"
      ? fk.schema === rel.schema && fk.table === rel.name
      : fk.refSchema === rel.schema && fk.refTable === rel.name;
  const manyToOne = (fk: ForeignKey, tgt: Relation): Candidate => ({
    relationship: { toOne: true, pairs: fk.columns.map((c, i) => [c, fk.refColumns[i] as string]) },
    target: tgt,
    cardinality: "many-to-one",
    label: `${fk.name} using ${fmtCols(parent.name, fk.columns)} and ${fmtCols(tgt.name, fk.refColumns)}`,
    hintName: fk.name,
    matches: (h) =>
      h === fk.name || (fk.columns.length === 1 && fk.columns[0] === h) || h === tgt.name,
  });
  if (target) {
    for (const fk of fks) {
      if (is(fk, "from", parent) && is(fk, "to", target)) out.push(manyToOne(fk, target));
      if (is(fk, "from", target) && is(fk, "to", parent)) {
        const toOne = isUnique(target, fk.columns);
        out.push({
          relationship: {
            toOne,
            pairs: fk.refColumns.map((c, i) => [c, fk.columns[i] as string]),
          },
          target,
          cardinality: toOne ? "one-to-one" : "one-to-many",
          label: `${fk.name} using ${fmtCols(target.name, fk.columns)} and ${fmtCols(parent.name, fk.refColumns)}`,
          hintName: fk.name,
          matches: (h) =>
            h === fk.name || (fk.columns.length === 1 && fk.columns[0] === h) || h === target.name,
        });
      }
    }
    // many-to-many through a junction whose foreign key columns are part of its primary key
    for (const j of cache.relations.values()) {
      if (j.schema !== schema) continue;
      const toParent = fks.filter((fk) => is(fk, "from", j) && is(fk, "to", parent));
      const toTarget = fks.filter((fk) => is(fk, "from", j) && is(fk, "to", target));
      for (const a of toParent)
        for (const b of toTarget) {
          if (a === b || !within(a.columns, j.primaryKey) || !within(b.columns, j.primaryKey))
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
            label: `${fmtCols(j.name, [...a.columns, ...b.columns])}`,
            hintName: j.name,
            matches: (h) => h === j.name || h === a.name || h === b.name,
          });
        }
    }
  }
  if (out.length === 0) {
    // embedding by foreign key column name or constraint name: select=author_id(*), fk_name(*)
    for (const fk of fks) {
      if (!is(fk, "from", parent)) continue;
      if (fk.name === name || (fk.columns.length === 1 && fk.columns[0] === name)) {
        const tgt = cache.relations.get(qualified(fk.refSchema, fk.refTable));
        if (tgt) out.push(manyToOne(fk, tgt));
      }
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
): Plan {
  const overloads = cache.routines.get(qualified(schema, request.target)) ?? [];
  const readLike = request.method === "GET" || request.method === "HEAD";
  let given: string[];
  let payload = body;
  let scopes = request.scopes;
  if (readLike) {
    // the query string's params: the function's arguments, and filters on its result
    const argNames = new Set(overloads.flatMap((o) => o.args.map((a) => a.name)));
    const args = request.argsOrFilters.filter((p) => argNames.has(p.key));
    scopes = withFilters(
      request.scopes,
      request.argsOrFilters.filter((p) => !argNames.has(p.key)),
    );
    given = args.map((p) => p.key);
    payload = Object.fromEntries(args.map((p) => [p.key, p.value]));
  } else {
    given =
      body && typeof body === "object" && !Array.isArray(body) ? Object.keys(body as object) : [];
  }
  const keys = [...new Set(given)];
  const fits = (r: RoutineDef) =>
    keys.every((k) => r.args.some((a) => a.name === k)) &&
    r.args.every((a) => a.hasDefault || keys.includes(a.name));
  let routine = overloads.find(fits);
  let singleJson = false;
  if (!routine && !readLike) {
    routine = overloads.find(
      (r) => r.args.length === 1 && r.args[0]?.name === "" && /^jsonb?$/.test(r.args[0].type),
    );
    singleJson = routine !== undefined;
  }
  if (!routine) throw errors.noFunction(schema, request.target, [...keys].sort());
  if (request.prefer.params === "single-object" && routine.args.length === 1) singleJson = true;
  let root: ReadNode | undefined;
  if (routine.returnKind === "composite" || routine.returnRelation) {
    const relation: Relation = (routine.returnRelation &&
      cache.relations.get(
        qualified(routine.returnRelation.schema, routine.returnRelation.name),
      )) || {
      schema,
      name: routine.name,
      isView: false,
      columns: new Map(),
      primaryKey: [],
      uniques: [],
    };
    // Without ?select= every output column, as PostgREST answers (`*` over the function's result).
    root = { ...planNode(relation, request.select, [], scopes, cache, schema), ...page };
    checkScopes(scopes, root);
  }
  const object = request.media === "object";
  // one row of a composite type is answered as an object, not an array of one
  const singleComposite = !routine.returnsSet && routine.returnKind !== "scalar";
  return {
    kind: "call",
    ...common(request, schema, countInQuery(request)),
    routine,
    args: singleJson ? [] : routine.args.filter((a) => keys.includes(a.name)).map((a) => a.name),
    singleJson,
    payload,
    root,
    response: {
      ...negotiated(request),
      unwrap: object || singleComposite,
      exactlyOne: object && routine.returnsSet,
      status:
        !root && routine.returnKind === "void"
          ? { kind: "no-content" }
          : { kind: "rows", offset: page.offset ?? 0 },
    },
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

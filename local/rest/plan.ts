/**
 * ApiRequest + schema cache -> Plan: names resolved to relations, columns and relationships.
 * Pure. Errors are PostgREST's schema-cache errors (PGRST2xx) and embedding errors (PGRST1xx).
 */
import { errors, RestError } from "./errors.ts";
import type { ApiRequest, Condition, Field, OrderTerm, Scoped, SelectItem } from "./parse.ts";
import { parseFilterParams } from "./parse.ts";
import {
  type ForeignKey,
  qualified,
  type Relation,
  type RoutineDef,
  type SchemaCache,
} from "./schema-cache.ts";

export interface Relationship {
  toOne: boolean;
  /** parent column = child column */
  pairs: [string, string][];
  junction?: {
    relation: Relation;
    /** parent column = junction column */
    parentPairs: [string, string][];
    /** child column = junction column */
    childPairs: [string, string][];
  };
}

export type Output =
  | { kind: "column"; field: Field; cast?: string; name: string }
  | { kind: "embed"; index: number; name: string }
  | { kind: "spread"; index: number; names: string[] }
  /** every column of a relation the cache has no columns for (a function's record result) */
  | { kind: "all" };

export interface EmbedNode {
  relationship: Relationship;
  node: ReadNode;
  /** the name filters, orders and the output use */
  name: string;
  inner: boolean;
}

export interface ResolvedOrder extends OrderTerm {
  embedIndex?: number;
}

export interface ReadNode {
  relation: Relation;
  outputs: Output[];
  embeds: EmbedNode[];
  conditions: Condition[];
  order: ResolvedOrder[];
  limit?: number;
  offset?: number;
}

export type Plan =
  | { kind: "read"; schema: string; root: ReadNode; request: ApiRequest }
  | {
      kind: "mutate";
      schema: string;
      action: "insert" | "update" | "delete";
      relation: Relation;
      columns: string[];
      onConflict?: string[];
      conditions: Condition[];
      root: ReadNode;
      request: ApiRequest;
    }
  | {
      kind: "call";
      schema: string;
      routine: RoutineDef;
      /** argument names given, in the routine's order */
      args: string[];
      /** the whole body goes to a single unnamed json parameter */
      singleJson: boolean;
      /** arguments from the query string (GET/HEAD), in place of a body */
      queryArgs?: Record<string, string>;
      /** for functions returning rows: the read over the function's result */
      root?: ReadNode;
      request: ApiRequest;
    };

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

export function planRequest(
  request: ApiRequest,
  cache: SchemaCache,
  schema: string,
  body?: unknown,
): Plan {
  if (request.action === "call") return planCall(request, cache, schema, body);
  const relation = cache.relations.get(qualified(schema, request.target));
  if (!relation) throw errors.tableNotFound(schema, request.target);
  const root = planNode(relation, request.select, [], request.scopes, cache, schema);
  checkScopes(request.scopes, root);
  if (request.action === "read") return { kind: "read", schema, root, request };
  if (request.action === "upsert")
    throw errors.notImplemented(
      "PUT is not supported by the local data API; use POST with on_conflict",
    );
  const rootScope = request.scopes.get("") as Scoped;
  if (
    request.action !== "insert" &&
    (rootScope.limit !== undefined || rootScope.offset !== undefined)
  )
    throw errors.notImplemented(
      "limit/offset on PATCH and DELETE are not supported by the local data API",
    );
  const columns = mutationColumns(request, relation, body);
  const onConflict =
    request.onConflict ?? (request.prefer.resolution ? relation.primaryKey : undefined);
  for (const c of onConflict ?? [])
    if (!relation.columns.has(c)) throw errors.columnNotFound(relation.name, c);
  return {
    kind: "mutate",
    schema,
    action: request.action,
    relation,
    columns,
    onConflict,
    conditions: rootScope.conditions,
    root: { ...root, conditions: [], order: [], limit: undefined, offset: undefined },
    request,
  };
}

function mutationColumns(request: ApiRequest, relation: Relation, body: unknown): string[] {
  if (request.action === "delete") return [];
  let columns: string[];
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
  select: SelectItem[],
  path: string[],
  scopes: Map<string, Scoped>,
  cache: SchemaCache,
  schema: string,
): ReadNode {
  const scoped = scopes.get(path.join(".")) ?? { conditions: [] };
  const node: ReadNode = {
    relation,
    outputs: [],
    embeds: [],
    conditions: scoped.conditions,
    order: [],
    limit: scoped.limit,
    offset: scoped.offset,
  };
  for (const item of select) {
    if (item.type === "star") {
      if (relation.columns.size === 0) node.outputs.push({ kind: "all" });
      for (const name of relation.columns.keys())
        node.outputs.push({ kind: "column", field: { name, json: [] }, name });
    } else if (item.type === "column") {
      const last = item.field.json.at(-1);
      const name = item.alias ?? (last ? String(last.key) : item.field.name);
      node.outputs.push({
        kind: "column",
        field: item.field,
        cast: item.cast ? castName(item.cast) : undefined,
        name,
      });
    } else {
      const { relationship, target } = resolveEmbed(relation, item.name, item.hint, cache, schema);
      const name = item.alias ?? item.name;
      const child = planNode(target, item.select, [...path, name], scopes, cache, schema);
      const index = node.embeds.length;
      node.embeds.push({ relationship, node: child, name, inner: item.join === "inner" });
      if (item.spread) {
        if (!relationship.toOne)
          throw errors.notImplemented("spreading a to-many embedded resource is not supported");
        node.outputs.push({ kind: "spread", index, names: outputNames(child) });
      } else if (item.select.length > 0) node.outputs.push({ kind: "embed", index, name });
    }
  }
  node.order = (scoped.order ?? []).map((term) => {
    if (!term.relation) return term;
    const embedIndex = node.embeds.findIndex((e) => e.name === term.relation);
    const embed = node.embeds[embedIndex];
    if (!embed) throw errors.notEmbedded(term.relation);
    if (!embed.relationship.toOne) throw errors.relatedOrderNotToOne(relation.name, term.relation);
    return { ...term, embedIndex };
  });
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

function checkScopes(scopes: Map<string, Scoped>, root: ReadNode) {
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

function planCall(request: ApiRequest, cache: SchemaCache, schema: string, body: unknown): Plan {
  const overloads = cache.routines.get(qualified(schema, request.target)) ?? [];
  const readLike = request.method === "GET" || request.method === "HEAD";
  let given: string[];
  let queryArgs: Record<string, string> | undefined;
  if (readLike) {
    const argNames = new Set(overloads.flatMap((o) => o.args.map((a) => a.name)));
    const argPairs = request.rawParams.filter(([k]) => argNames.has(k));
    const filterPairs = request.rawParams.filter(([k]) => !argNames.has(k));
    parseFilterParams(filterPairs, request.scopes);
    given = argPairs.map(([k]) => k);
    queryArgs = Object.fromEntries(argPairs);
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
    const select: SelectItem[] =
      relation.columns.size === 0 && !request.selectGiven ? [] : request.select;
    root = planNode(relation, select, [], request.scopes, cache, schema);
    checkScopes(request.scopes, root);
  }
  return {
    kind: "call",
    schema,
    routine,
    args: singleJson ? [] : routine.args.filter((a) => keys.includes(a.name)).map((a) => a.name),
    singleJson,
    queryArgs,
    root,
    request,
  };
}

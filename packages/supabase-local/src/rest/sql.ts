/**
 * Plan -> Query: SQL text + bound parameters, from the plan alone. Pure. Every identifier goes
 * through ident() (quoted), every value from the request is a $n parameter; type names come only
 * from the catalog or the cast allow-list in parse.ts, and are quoted too where they come from
 * the request.
 */
import type { Aggregate, Condition, Field, Filter } from "./api-request.ts";
import { RestError } from "./errors.ts";
import {
  type EmbedNode,
  type MutatePlan,
  type Plan,
  type ReadNode,
  SCALAR_COLUMN,
} from "./plan.ts";
import type { Relation } from "./schema-cache.ts";

export interface Sql {
  text: string;
  params: (string | null)[];
}

export function ident(name: string): string {
  if (name.includes("\u0000"))
    throw new RestError(400, "PGRST100", "Identifiers cannot contain the NUL character");
  return `"${name.replace(/"/g, '""')}"`;
}

const rel = (schema: string, name: string) => `${ident(schema)}.${ident(name)}`;

class Builder {
  params: (string | null)[] = [];
  /** the body as CSV (Accept: text/csv) instead of JSON */
  csv = false;
  /** the body is the first row (or null) instead of the array */
  unwrap = false;
  private aliases = 0;
  p(value: string | null): string {
    if (typeof value === "string" && value.includes("\u0000"))
      throw new RestError(400, "22021", 'invalid byte sequence for encoding "UTF8": 0x00');
    this.params.push(value);
    return `$${this.params.length}`;
  }
  alias(base: string): string {
    this.aliases += 1;
    return ident(`${base}_${this.aliases}`);
  }
}

/** A PostgreSQL array literal holding the given strings. */
export function arrayLiteral(values: readonly string[]): string {
  return `{${values.map((v) => `"${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`).join(",")}}`;
}

function fieldExpr(b: Builder, base: string, field: Field): string {
  let expr = base;
  for (const step of field.json)
    expr = `(${expr}${step.arrow}${typeof step.key === "number" ? `${b.p(String(step.key))}::int` : `${b.p(step.key)}::text`})`;
  return expr;
}

const SIMPLE: Record<string, string> = {
  eq: "=",
  neq: "<>",
  gt: ">",
  gte: ">=",
  lt: "<",
  lte: "<=",
  like: "LIKE",
  ilike: "ILIKE",
  match: "~",
  imatch: "~*",
  isdistinct: "IS DISTINCT FROM",
  cs: "@>",
  cd: "<@",
  ov: "&&",
  sl: "<<",
  sr: ">>",
  nxr: "&<",
  nxl: "&>",
  adj: "-|-",
};
const TSQUERY: Record<string, string> = {
  fts: "to_tsquery",
  plfts: "plainto_tsquery",
  phfts: "phraseto_tsquery",
  wfts: "websearch_to_tsquery",
};

interface Scope {
  alias: string;
  node: ReadNode;
  embedAliases: string[];
}

function filterSql(b: Builder, f: Filter, scope: Scope): string {
  const embedIndex = scope.node.relation.columns.has(f.field.name)
    ? -1
    : scope.node.embeds.findIndex((e) => e.name === f.field.name);
  let sql: string;
  if (embedIndex >= 0 && f.value.kind === "is") {
    const e = scope.embedAliases[embedIndex] as string;
    const embed = scope.node.embeds[embedIndex] as EmbedNode;
    sql = `${embedValue(e, embed)} IS ${f.value.value === "null" ? "" : "NOT "}NULL`;
  } else {
    const expr = fieldExpr(b, `${scope.alias}.${ident(f.field.name)}`, f.field);
    const v = f.value;
    if (v.kind === "is") {
      const word = {
        null: "NULL",
        not_null: "NOT NULL",
        true: "TRUE",
        false: "FALSE",
        unknown: "UNKNOWN",
      }[v.value];
      sql = `${expr} IS ${word}`;
    } else if (v.kind === "list") sql = `${expr} = ANY(${b.p(arrayLiteral(v.values))})`;
    else if (v.kind === "fts") {
      const fn = TSQUERY[f.op] as string;
      sql = v.language
        ? `${expr} @@ ${fn}(${b.p(v.language)}::regconfig, ${b.p(v.query)})`
        : `${expr} @@ ${fn}(${b.p(v.query)})`;
    } else {
      const op = SIMPLE[f.op] as string;
      const isLike = f.op === "like" || f.op === "ilike";
      const value = isLike ? v.value.replace(/\*/g, "%") : v.value;
      sql = f.quantifier
        ? `${expr} ${op} ${f.quantifier.toUpperCase()}(${b.p(value)})`
        : `${expr} ${op} ${b.p(value)}`;
    }
  }
  return f.negate ? `NOT (${sql})` : sql;
}

function conditionSql(b: Builder, c: Condition, scope: Scope): string {
  if (c.type === "filter") return filterSql(b, c, scope);
  const parts = c.children.map((child) => conditionSql(b, child, scope));
  const joined = parts.length
    ? parts.join(c.op === "and" ? " AND " : " OR ")
    : c.op === "and"
      ? "TRUE"
      : "FALSE";
  return c.negate ? `NOT (${joined})` : `(${joined})`;
}

interface RowOptions {
  /** FROM clause including the alias */
  from: string;
  alias: string;
  where: string[];
  paginate: boolean;
  ordered: boolean;
  /** ORDER BY when the request gives none (mutations keep RETURNING's order) */
  fallbackOrder?: string;
}

/** count(), sum()… of a value, then the cast after it (`col.sum()::text`). */
function aggregateSql(aggregate: Aggregate, value: string) {
  return `${aggregate.fn.toUpperCase()}(${value})${castSql(aggregate.cast)}`;
}

function castSql(cast: string | undefined) {
  return cast ? `::${cast.endsWith("[]") ? `${ident(cast.slice(0, -2))}[]` : ident(cast)}` : "";
}

/** SELECT for one level of the tree: its columns, its embeds as lateral joins, filters, order. */
export function rowQuery(b: Builder, node: ReadNode, o: RowOptions): string {
  const embedAliases = node.embeds.map((e) => b.alias(e.node.relation.name.slice(0, 40)));
  const scope: Scope = { alias: o.alias, node, embedAliases };
  const laterals = node.embeds.map((e, i) => lateral(b, e, o.alias, embedAliases[i] as string));
  // embedded objects and arrays are jsonb, as in PostgREST (so their keys come out in jsonb's
  // order); with aggregates, the rows are grouped by every other projection
  const grouped = node.outputs.some(
    (out) =>
      (out.kind === "column" && out.aggregate) ||
      (out.kind === "spread" && out.aggregates?.some((a) => a)),
  );
  const projections = node.outputs.flatMap((out): (string | { aggregate: string })[] => {
    if (out.kind === "column") {
      const value = out.wholeRow
        ? o.alias
        : out.field.name === "*" && out.aggregate
          ? "*"
          : `${fieldExpr(b, `${o.alias}.${ident(out.field.name)}`, out.field)}${castSql(out.cast)}`;
      if (!out.aggregate) return [`${value} AS ${ident(out.name)}`];
      return [{ aggregate: `${aggregateSql(out.aggregate, value)} AS ${ident(out.name)}` }];
    }
    if (out.kind === "all") return [`${o.alias}.*`];
    const e = embedAliases[out.index] as string;
    const embed = node.embeds[out.index] as EmbedNode;
    if (out.kind === "spread")
      return out.names.map((n, i) => {
        const value = embed.spreadMany ? `${e}.${ident(n)}` : `(${e}."r").${ident(n)}`;
        const hoisted = out.aggregates?.[i];
        return hoisted
          ? { aggregate: `${aggregateSql(hoisted, value)} AS ${ident(n)}` }
          : `${value} AS ${ident(n)}`;
      });
    return [
      embed.relationship.toOne
        ? `row_to_json(${e}."r")::jsonb AS ${ident(out.name)}`
        : `coalesce(${e}."r", '[]') AS ${ident(out.name)}`,
    ];
  });
  const groupBy: number[] = [];
  const selectList = projections.map((p, i) => {
    if (typeof p === "string") {
      groupBy.push(i + 1);
      return p;
    }
    return p.aggregate;
  });
  const where = [...o.where];
  for (const c of node.conditions) where.push(conditionSql(b, c, scope));
  node.embeds.forEach((e, i) => {
    if (e.inner) where.push(`${embedValue(embedAliases[i] as string, e)} IS NOT NULL`);
  });
  let sql = `SELECT ${selectList.join(", ")} FROM ${o.from}${laterals.map((l) => ` ${l}`).join("")}`;
  if (where.length) sql += ` WHERE ${where.join(" AND ")}`;
  if (grouped && groupBy.length) sql += ` GROUP BY ${groupBy.join(", ")}`;
  if (o.ordered && node.order.length) {
    const terms = node.order.map((t) => {
      const base =
        t.embedIndex !== undefined
          ? relatedColumn(
              b,
              node.embeds[t.embedIndex] as EmbedNode,
              embedAliases[t.embedIndex] as string,
              o.alias,
              t.field.name,
            )
          : `${o.alias}.${ident(t.field.name)}`;
      let term = fieldExpr(b, base, t.field);
      if (t.direction) term += ` ${t.direction.toUpperCase()}`;
      if (t.nulls) term += ` NULLS ${t.nulls.toUpperCase()}`;
      return term;
    });
    sql += ` ORDER BY ${terms.join(", ")}`;
  } else if (o.ordered && o.fallbackOrder) sql += ` ORDER BY ${o.fallbackOrder}`;
  if (o.paginate && node.limit !== undefined) sql += ` LIMIT ${b.p(String(node.limit))}::bigint`;
  if (o.paginate && node.offset !== undefined && node.offset > 0)
    sql += ` OFFSET ${b.p(String(node.offset))}::bigint`;
  return sql;
}

/**
 * An embed's value, NULL only when nothing was embedded. A to-one embed is a row, and a row
 * IS NULL when all its columns are, IS NOT NULL only when none is: an embedded row with a null
 * column would count as missing. As JSON it is NULL only when there is no row.
 */
function embedValue(eAlias: string, e: EmbedNode): string {
  return e.relationship.toOne ? `row_to_json(${eAlias}."r")` : `${eAlias}."r"`;
}

/** A to-one embed's column for ORDER BY: from the embedded row when selected, else looked up. */
function relatedColumn(
  b: Builder,
  e: EmbedNode,
  eAlias: string,
  parentAlias: string,
  column: string,
) {
  const selected = e.node.outputs.some(
    (out) =>
      out.kind === "column" && out.name === column && out.field.json.length === 0 && !out.cast,
  );
  if (selected) return `(${eAlias}."r").${ident(column)}`;
  const child = e.node.relation;
  const alias = b.alias(child.name.slice(0, 40));
  const on = e.relationship.pairs
    .map(([p, c]) => `${alias}.${ident(c)} = ${parentAlias}.${ident(p)}`)
    .join(" AND ");
  return `(SELECT ${alias}.${ident(column)} FROM ${rel(child.schema, child.name)} AS ${alias} WHERE ${on})`;
}

function lateral(b: Builder, e: EmbedNode, parentAlias: string, eAlias: string): string {
  const child = e.node.relation;
  const childAlias = b.alias(child.name.slice(0, 40));
  const r = e.relationship;
  let from = `${rel(child.schema, child.name)} AS ${childAlias}`;
  let where: string[];
  if (r.computed) {
    // a computed relationship: the function of the parent row gives the rows
    from = `${rel(r.computed.schema, r.computed.name)}(${parentAlias}) AS ${childAlias}`;
    where = [];
  } else if (r.junction) {
    const j = r.junction;
    const jAlias = b.alias(j.relation.name.slice(0, 40));
    from += ` JOIN ${rel(j.relation.schema, j.relation.name)} AS ${jAlias} ON ${j.childPairs
      .map(([c, jc]) => `${jAlias}.${ident(jc)} = ${childAlias}.${ident(c)}`)
      .join(" AND ")}`;
    where = j.parentPairs.map(([p, jc]) => `${jAlias}.${ident(jc)} = ${parentAlias}.${ident(p)}`);
  } else where = r.pairs.map(([p, c]) => `${childAlias}.${ident(c)} = ${parentAlias}.${ident(p)}`);
  const inner = rowQuery(b, e.node, {
    from,
    alias: childAlias,
    where,
    paginate: !r.toOne,
    ordered: true,
  });
  let body: string;
  if (r.toOne) body = `SELECT _s AS "r" FROM (${inner}) _s`;
  else if (e.spreadMany) {
    // a to-many spread: one array per output column, in the rows' order
    const arrays = e.spreadMany.map(
      (n) => `coalesce(json_agg(_s.${ident(n)}), '[]')::jsonb AS ${ident(n)}`,
    );
    body = `SELECT json_agg(_s)::jsonb AS "r"${arrays.map((a) => `, ${a}`).join("")} FROM (${inner}) _s`;
  } else body = `SELECT json_agg(_s)::jsonb AS "r" FROM (${inner}) _s`;
  return `LEFT JOIN LATERAL (${body}) AS ${eAlias} ON TRUE`;
}

/** Only the rows without pagination, for Prefer: count=planned (EXPLAIN of this). */
export function countSourceSql(root: ReadNode): Sql {
  const b = new Builder();
  const r = root.relation;
  const alias = ident(r.name);
  const text = rowQuery(b, root, {
    from: `${rel(r.schema, r.name)} AS ${alias}`,
    alias,
    where: [],
    paginate: false,
    ordered: false,
  });
  return { text, params: b.params };
}

export interface ReadSql extends Sql {
  /** the rows without pagination, for Prefer: count=planned (EXPLAIN) */
  countSource: string;
}

/**
 * How a function's scalar results are answered (PostgREST's asJsonF): the values of the column
 * pgrst_scalar of its rows (`_postgrest_t`, PostgREST's name, so a select without that column
 * fails as there), the first one for a single scalar, which always counts as one row.
 */
interface ScalarResult {
  set: boolean;
}

function aggregate(b: Builder, stripNulls: boolean, scalar?: ScalarResult) {
  const rows = scalar ? "_postgrest_t" : "_s";
  const n = scalar && !scalar.set ? "1 AS n" : "count(*)::int AS n";
  if (b.csv)
    // PostgREST's CSV: the first row's keys, then each row's record text without its parentheses
    return `coalesce((SELECT string_agg(k, ',') FROM json_object_keys((array_agg(row_to_json(${rows})))[1]) k), '') || E'\\n' || coalesce(string_agg(substring(${rows}::text, 2, length(${rows}::text) - 2), E'\\n'), '') AS body, ${n}`;
  if (scalar) {
    const values = `json_agg(_postgrest_t.${ident(SCALAR_COLUMN)})`;
    const body = scalar.set
      ? jsonBody(b, values, stripNulls)
      : `coalesce(${stripNulls ? `json_strip_nulls(${values}->0)` : `${values}->0`}, 'null')`;
    return `${body}::text AS body, ${n}`;
  }
  return `${jsonBody(b, "json_agg(_s)", stripNulls)}::text AS body, ${n}`;
}

/** The rows' json_agg as the body: the array, or its first element for an object (as PostgREST). */
function jsonBody(b: Builder, agg: string, stripNulls: boolean) {
  const value = b.unwrap ? `${agg}->0` : agg;
  return `coalesce(${stripNulls ? `json_strip_nulls(${value})` : value}, '${b.unwrap ? "null" : "[]"}')`;
}

/** The read: body (JSON text), n (rows in this page) and total (when counting exactly). */
export function readSql(
  root: ReadNode,
  from: string,
  alias: string,
  opts: {
    stripNulls: boolean;
    count: boolean;
    b?: Builder;
    fallbackOrder?: string;
    scalar?: ScalarResult;
  },
): ReadSql {
  const b = opts.b ?? new Builder();
  const rows = rowQuery(b, root, {
    from,
    alias,
    where: [],
    paginate: true,
    ordered: true,
    fallbackOrder: opts.fallbackOrder,
  });
  const countSource = opts.count
    ? rowQuery(b, root, { from, alias, where: [], paginate: false, ordered: false })
    : "";
  const total = opts.count ? `, (SELECT count(*)::int FROM (${countSource}) _c) AS total` : "";
  return {
    text: `SELECT ${aggregate(b, opts.stripNulls, opts.scalar)}${total} FROM (${rows}) ${opts.scalar ? "_postgrest_t" : "_s"}`,
    params: b.params,
    countSource,
  };
}

// ---------------------------------------------------------------- the query

export interface StatementSql extends Sql {
  /** whether the statement yields body/n columns (representation) or nothing (minimal) */
  returnsBody: boolean;
  /** the body is CSV already (else JSON) */
  csv?: boolean;
}

/** What execute.ts runs: the statement, and for count=planned the rows to EXPLAIN. */
export interface Query extends StatementSql {
  countEstimate?: Sql;
  /** the statement is EXPLAIN (…) of the answer's statement */
  explain?: boolean;
}

/** The SQL for a plan, from the plan alone. */
export function querySql(plan: Plan): Query {
  const statement = statementSql(plan);
  const explain = plan.response.explain;
  if (explain) {
    const options = [
      `FORMAT ${explain.format.toUpperCase()}`,
      ...explain.options.map((o) => o.toUpperCase()),
    ];
    return {
      ...statement,
      text: `EXPLAIN (${options.join(", ")}) ${statement.text}`,
      explain: true,
    };
  }
  if (plan.count === "planned" && plan.kind === "read")
    return { ...statement, countEstimate: countSourceSql(plan.root) };
  return statement;
}

/**
 * The statement for a variant of `plan`: its payload and the shape of its answer replaced (the
 * rows returned or not, counted or not, nulls stripped or not). For tests that vary them.
 */
export function planSql(
  plan: Plan,
  payload: unknown,
  shape: { stripNulls: boolean; count: boolean; representation: boolean },
): StatementSql {
  const count = shape.count ? "exact" : "none";
  const response = { ...plan.response, stripNulls: shape.stripNulls };
  if (plan.kind === "read") return statementSql({ ...plan, count, response });
  if (plan.kind === "call") return statementSql({ ...plan, count, response, payload });
  return statementSql({ ...plan, response, payload, returning: shape.representation });
}

function statementSql(plan: Plan): StatementSql {
  const b = new Builder();
  // rows of a table, a view or a function's result: CSV in the statement itself
  b.csv =
    plan.response.media === "csv" &&
    !plan.response.unwrap &&
    (plan.kind !== "call" || plan.root !== undefined);
  b.unwrap = plan.response.unwrap;
  const sql = statementOf(b, plan);
  return b.csv && sql.returnsBody ? { ...sql, csv: true } : sql;
}

function statementOf(b: Builder, plan: Plan): StatementSql {
  const stripNulls = plan.response.stripNulls;
  const count = plan.count === "exact";
  if (plan.kind === "read") {
    const r = plan.root.relation;
    const alias = ident(r.name);
    const sql = readSql(plan.root, `${rel(r.schema, r.name)} AS ${alias}`, alias, {
      stripNulls,
      count,
      b,
    });
    return { text: sql.text, params: sql.params, returnsBody: true };
  }
  if (plan.kind === "mutate") return mutationSql(b, plan);
  // call
  const body = plan.payload;
  const fn = rel(plan.routine.schema, plan.routine.name);
  let args: string;
  let from = "";
  if (plan.single) {
    // the routine's single unnamed parameter, of a type from the catalog (json, jsonb, text, xml, bytea)
    const type = plan.routine.args[0]?.type ?? "json";
    const value = typeof body === "string" ? body : JSON.stringify(body ?? {});
    // bytea arrives as \x-hex text (bound as text: the driver takes bytea parameters as bytes)
    args =
      type === "bytea"
        ? `decode(substr(${b.p(value)}::text, 3), 'hex')`
        : `${b.p(value)}::${ident(type)}`;
  } else if (plan.args.length) {
    const defs = plan.args.map((name) => {
      const a = plan.routine.args.find((x) => x.name === name);
      return `${ident(name)} ${a?.type ?? "text"}`;
    });
    from = `json_to_record(${b.p(JSON.stringify(body ?? {}))}::json) AS "pgrst_args"(${defs.join(", ")})`;
    args = plan.args.map((n) => `${ident(n)} := "pgrst_args".${ident(n)}`).join(", ");
  } else args = "";
  const call = `${fn}(${args})`;
  if (plan.routine.returnKind === "void" || !plan.root) {
    const fromSql = from ? ` FROM ${from}` : "";
    return { text: `SELECT ${call}${fromSql}`, params: b.params, returnsBody: false };
  }
  const alias = ident(plan.routine.name);
  if (plan.routine.returnKind === "scalar") {
    // PostgREST's source for scalars: one column, pgrst_scalar, a row per value
    const source = `(SELECT ${call} AS ${ident(SCALAR_COLUMN)}${from ? ` FROM ${from}` : ""}) AS ${alias}`;
    const scalar = { set: plan.routine.returnsSet };
    const read = readSql(plan.root, source, alias, { stripNulls, count, b, scalar });
    return { text: read.text, params: read.params, returnsBody: true };
  }
  const source = from ? `${from} CROSS JOIN LATERAL ${call} AS ${alias}` : `${call} AS ${alias}`;
  const read = readSql(plan.root, source, alias, { stripNulls, count, b });
  return { text: read.text, params: read.params, returnsBody: true };
}

function mutationSql(b: Builder, plan: MutatePlan): StatementSql {
  const body = plan.payload;
  const stripNulls = plan.response.stripNulls;
  const r = plan.relation;
  const target = rel(r.schema, r.name);
  const alias = ident(r.name);
  const scope: Scope = { alias, node: { ...plan.root, embeds: [] }, embedAliases: [] };
  const where = plan.conditions.map((c) => conditionSql(b, c, scope));
  const whereSql = where.length ? ` WHERE ${where.join(" AND ")}` : "";
  const cols = plan.columns.map(ident);
  let stmt: string;
  if (plan.action === "insert") {
    const rows = (Array.isArray(body) ? body : [body]) as Record<string, unknown>[];
    if (plan.missingDefault && cols.length > 0 && rows.length > 0) {
      // missing keys take the column default: one VALUES row per object, DEFAULT where absent
      const values = rows.map((row) => {
        // a row with none of the columns binds nothing: every cell is DEFAULT
        let p: string | undefined;
        const cells = plan.columns.map((c) => {
          if (!Object.hasOwn(row, c)) return "DEFAULT";
          p ??= b.p(JSON.stringify(row));
          return `(json_populate_record(NULL::${target}, ${p}::json)).${ident(c)}`;
        });
        return `(${cells.join(", ")})`;
      });
      stmt = `INSERT INTO ${target} AS ${alias} (${cols.join(", ")}) VALUES ${values.join(", ")}`;
    } else if (cols.length === 0) {
      const payload = b.p(JSON.stringify(rows));
      stmt = `INSERT INTO ${target} AS ${alias} SELECT FROM json_populate_recordset(NULL::${target}, ${payload}::json) AS pgrst_body`;
    } else {
      const payload = b.p(JSON.stringify(rows));
      stmt = `INSERT INTO ${target} AS ${alias} (${cols.join(", ")}) SELECT ${cols.join(", ")} FROM json_populate_recordset(NULL::${target}, ${payload}::json) AS pgrst_body`;
    }
    // As PostgREST: no conflict columns (no on_conflict, no primary key) is a plain insert; a
    // merge sets every column sent, the conflict columns too, so a row that sends only those is
    // still updated (and returned)
    if (plan.onConflict?.length && plan.resolution) {
      const conflictTarget = ` (${plan.onConflict.map(ident).join(", ")})`;
      const set = plan.columns.map((c) => `${ident(c)} = EXCLUDED.${ident(c)}`);
      stmt +=
        plan.resolution === "ignore-duplicates" || set.length === 0
          ? ` ON CONFLICT${conflictTarget} DO NOTHING`
          : ` ON CONFLICT${conflictTarget} DO UPDATE SET ${set.join(", ")} WHERE ${countUpdated}`;
    }
  } else if (plan.action === "update" && plan.columns.length === 0) {
    // PATCH with an empty object changes nothing (PostgREST answers with no rows)
    stmt = `SELECT ${alias}.* FROM ${target} AS ${alias} WHERE false${where.map((w) => ` AND ${w}`).join("")}`;
    if (!plan.returning) return { text: stmt, params: b.params, returnsBody: false };
    const read = readSql(plan.root, `"pgrst_mut" AS ${alias}`, alias, {
      stripNulls,
      count: false,
      b,
    });
    return {
      text: `WITH "pgrst_mut" AS (${stmt}) ${read.text}`,
      params: b.params,
      returnsBody: true,
    };
  } else if (plan.action === "update") {
    const payload = b.p(JSON.stringify(body));
    const set = plan.columns.map((c) => `${ident(c)} = pgrst_body.${ident(c)}`);
    // an array of objects is accepted as PostgREST accepts it (json_to_recordset): each row is
    // updated from one of them
    const populate = Array.isArray(body) ? "json_populate_recordset" : "json_populate_record";
    stmt = `UPDATE ${target} AS ${alias} SET ${set.join(", ")} FROM (SELECT * FROM ${populate}(NULL::${target}, ${payload}::json)) AS pgrst_body${whereSql}`;
  } else stmt = `DELETE FROM ${target} AS ${alias}${whereSql}`;
  if (!plan.returning) return { text: stmt, params: b.params, returnsBody: false };
  const read = readSql(plan.root, `"pgrst_rows" AS ${alias}`, alias, {
    stripNulls,
    count: false,
    b,
    fallbackOrder: `${alias}."pgrst_ord"`,
  });
  return {
    text: `WITH "pgrst_mut" AS (${stmt} RETURNING ${returning(plan, alias)}), "pgrst_rows" AS (SELECT *, row_number() OVER () AS "pgrst_ord" FROM "pgrst_mut") ${read.text}`,
    params: b.params,
    returnsBody: true,
  };
}

export const relationSql = (r: Relation) => rel(r.schema, r.name);

/**
 * pgrst.updated +1 for each row a merge upsert updated instead of inserting (its DO UPDATE's
 * WHERE, evaluated once per conflicting row); always true. The rows offered less these are the
 * rows inserted, which tells a merge that only updated (200) from one that inserted (201).
 */
const countUpdated = `set_config('pgrst.updated', (coalesce(nullif(current_setting('pgrst.updated', true), '')::int, 0) + 1)::text, true) <> '0'`;

/** How many rows a merge upsert updated instead of inserting, read after it (execute.ts). */
export const UPDATED_SQL = `SELECT coalesce(nullif(current_setting('pgrst.updated', true), '')::int, 0) AS updated`;

/**
 * RETURNING as PostgREST's (inferColsEmbedNeeds): the selected columns, the parent's columns of
 * every embed's join and the primary key (for Location); `*` when the select has `*` or an embed
 * is a computed relationship; `1` when that is nothing. So a role with column-level SELECT gets
 * exactly the calls PostgREST allows it, no more, no fewer.
 */
function returning(plan: MutatePlan, alias: string): string {
  const root = plan.root;
  const star = root.outputs.some(
    (o) => o.kind === "all" || (o.kind === "column" && o.field.name === "*"),
  );
  if (star || root.embeds.some((e) => e.relationship.computed)) return `${alias}.*`;
  const cols = new Set<string>();
  for (const o of root.outputs)
    if (o.kind === "column" && plan.relation.columns.has(o.field.name)) cols.add(o.field.name);
  for (const e of root.embeds) {
    for (const [p] of e.relationship.pairs) cols.add(p);
    for (const [p] of e.relationship.junction?.parentPairs ?? []) cols.add(p);
  }
  for (const k of plan.relation.primaryKey) cols.add(k);
  return cols.size ? [...cols].map((c) => `${alias}.${ident(c)}`).join(", ") : "1";
}

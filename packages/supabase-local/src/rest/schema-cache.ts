/**
 * The schema cache: tables, views, columns, keys, foreign keys and functions of the exposed
 * schemas, read from pg_catalog once (and again on NOTIFY pgrst / DDL), never per request.
 */
import type { PGlite } from "@electric-sql/pglite";

export interface Column {
  name: string;
  type: string;
  nullable: boolean;
  hasDefault: boolean;
}

export interface Relation {
  schema: string;
  name: string;
  isView: boolean;
  columns: Map<string, Column>;
  primaryKey: string[];
  uniques: string[][];
}

export interface ForeignKey {
  name: string;
  schema: string;
  table: string;
  columns: string[];
  refSchema: string;
  refTable: string;
  refColumns: string[];
}

export interface FunctionArg {
  name: string;
  type: string;
  hasDefault: boolean;
  variadic: boolean;
}

export interface RoutineDef {
  schema: string;
  name: string;
  args: FunctionArg[];
  returnsSet: boolean;
  returnType: string;
  /** "composite" for table rows/records with columns, "scalar", or "void" */
  returnKind: "composite" | "scalar" | "void";
  /** the table/view whose rows it returns, when it returns one */
  returnRelation?: { schema: string; name: string };
  /** the columns of its rows otherwise: OUT/TABLE parameters, or a composite type's attributes */
  columns?: Column[];
  /** PostgREST can call it by /rpc: at most one unnamed parameter, of a json, jsonb, text, xml
   * or bytea body */
  callable: boolean;
  /** its only parameter is a row of this table/view: a computed relationship when it returns rows */
  rowArg?: { schema: string; name: string };
  volatility: "immutable" | "stable" | "volatile";
}

export interface SchemaCache {
  relations: Map<string, Relation>;
  foreignKeys: ForeignKey[];
  routines: Map<string, RoutineDef[]>;
  /** pg_timezone_names, for Prefer: timezone= (PostgREST caches them with the schema) */
  timezones?: ReadonlySet<string>;
}

const SINGLE_BODY_TYPES = new Set(["json", "jsonb", "text", "xml", "bytea"]);

export const qualified = (schema: string, name: string) => `${schema}.${name}`;

interface RelRow {
  oid: number;
  schema: string;
  name: string;
  kind: string;
}

export async function loadSchemaCache(db: PGlite, schemas: string[]): Promise<SchemaCache> {
  const rels = await db.query<RelRow>(
    `SELECT c.oid::int AS oid, n.nspname AS schema, c.relname AS name, c.relkind AS kind
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = ANY($1) AND c.relkind IN ('r','v','m','f','p')`,
    [schemas],
  );
  const cols = await db.query<{
    oid: number;
    name: string;
    type: string;
    nullable: boolean;
    has_default: boolean;
    attnum: number;
  }>(
    `SELECT a.attrelid::int AS oid, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type,
            NOT a.attnotnull AS nullable, (a.atthasdef OR a.attidentity <> '' OR a.attgenerated <> '') AS has_default,
            a.attnum
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = ANY($1) AND c.relkind IN ('r','v','m','f','p') AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attrelid, a.attnum`,
    [schemas],
  );
  const cons = await db.query<{
    name: string;
    kind: string;
    schema: string;
    tbl: string;
    cols: string[];
    ref_schema: string | null;
    ref_table: string | null;
    ref_cols: string[] | null;
  }>(
    `SELECT con.conname AS name, con.contype AS kind, n.nspname AS schema, c.relname AS tbl,
            ARRAY(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY k(n, i)
                    JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.i) AS cols,
            fn.nspname AS ref_schema, fc.relname AS ref_table,
            CASE WHEN con.contype = 'f' THEN ARRAY(SELECT a.attname FROM unnest(con.confkey) WITH ORDINALITY k(n, i)
                    JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.i) END AS ref_cols
       FROM pg_constraint con
       JOIN pg_class c ON c.oid = con.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_class fc ON fc.oid = con.confrelid LEFT JOIN pg_namespace fn ON fn.oid = fc.relnamespace
      WHERE con.contype IN ('p','u','f') AND n.nspname = ANY($1)`,
    [schemas],
  );
  // view column -> base table column, for plain column references (enough to carry keys over)
  const viewDeps = await db.query<{
    view_schema: string;
    view: string;
    schema: string;
    tbl: string;
    col: string;
  }>(
    `SELECT DISTINCT vn.nspname AS view_schema, v.relname AS view, tn.nspname AS schema, t.relname AS tbl, a.attname AS col
       FROM pg_class v JOIN pg_namespace vn ON vn.oid = v.relnamespace
       JOIN pg_rewrite r ON r.ev_class = v.oid
       JOIN pg_depend d ON d.objid = r.oid AND d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass
       JOIN pg_class t ON t.oid = d.refobjid AND t.oid <> v.oid AND t.relkind IN ('r','p','f')
       JOIN pg_namespace tn ON tn.oid = t.relnamespace
       JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = d.refobjsubid
      WHERE v.relkind IN ('v','m') AND vn.nspname = ANY($1)`,
    [schemas],
  );
  const funcs = await db.query<{
    schema: string;
    name: string;
    arg_names: string[] | null;
    arg_types: string[];
    arg_modes: string[] | null;
    nargs: number;
    ndefaults: number;
    retset: boolean;
    rettype: string;
    typtype: string;
    ret_schema: string | null;
    ret_rel: string | null;
    out_count: number;
    volatility: string;
    type_cols: { name: string; type: string }[] | null;
    row_arg: { schema: string; name: string } | null;
  }>(
    `SELECT n.nspname AS schema, p.proname AS name, p.proargnames AS arg_names,
            ARRAY(SELECT format_type(t, NULL) FROM unnest(coalesce(p.proallargtypes, p.proargtypes::oid[])) t) AS arg_types,
            p.proargmodes::text[] AS arg_modes, p.pronargs::int AS nargs, p.pronargdefaults::int AS ndefaults,
            p.proretset AS retset, format_type(p.prorettype, NULL) AS rettype, rt.typtype::text AS typtype,
            rn.nspname AS ret_schema, rc.relname AS ret_rel,
            (SELECT count(*) FROM unnest(coalesce(p.proargmodes, '{}'::"char"[])) m WHERE m IN ('o','t','b'))::int AS out_count,
            p.provolatile::text AS volatility,
            (SELECT json_agg(json_build_object('name', a.attname, 'type', format_type(a.atttypid, a.atttypmod)) ORDER BY a.attnum)
               FROM pg_class tc JOIN pg_attribute a ON a.attrelid = tc.oid
              WHERE tc.oid = rt.typrelid AND tc.relkind = 'c' AND a.attnum > 0 AND NOT a.attisdropped) AS type_cols,
            (SELECT json_build_object('schema', an.nspname, 'name', ac.relname)
               FROM pg_type at JOIN pg_class ac ON ac.oid = at.typrelid JOIN pg_namespace an ON an.oid = ac.relnamespace
              WHERE p.pronargs = 1 AND at.oid = p.proargtypes[0] AND ac.relkind IN ('r','v','m','f','p')) AS row_arg
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
       JOIN pg_type rt ON rt.oid = p.prorettype
       LEFT JOIN pg_class rc ON rc.oid = rt.typrelid AND rc.relkind <> 'c'
       LEFT JOIN pg_namespace rn ON rn.oid = rc.relnamespace
      WHERE n.nspname = ANY($1) AND p.prokind = 'f' AND p.prorettype <> 'trigger'::regtype`,
    [schemas],
  );

  const byOid = new Map<number, Relation>();
  const relations = new Map<string, Relation>();
  for (const r of rels.rows) {
    const rel: Relation = {
      schema: r.schema,
      name: r.name,
      isView: r.kind === "v" || r.kind === "m",
      columns: new Map(),
      primaryKey: [],
      uniques: [],
    };
    byOid.set(r.oid, rel);
    relations.set(qualified(r.schema, r.name), rel);
  }
  for (const c of cols.rows) {
    byOid.get(c.oid)?.columns.set(c.name, {
      name: c.name,
      type: c.type,
      nullable: c.nullable,
      hasDefault: c.has_default,
    });
  }
  const foreignKeys: ForeignKey[] = [];
  for (const c of cons.rows) {
    const rel = relations.get(qualified(c.schema, c.tbl));
    if (c.kind === "p" && rel) {
      rel.primaryKey = c.cols;
      rel.uniques.push(c.cols);
    } else if (c.kind === "u" && rel) rel.uniques.push(c.cols);
    else if (c.kind === "f" && c.ref_schema && c.ref_table && c.ref_cols)
      foreignKeys.push({
        name: c.name,
        schema: c.schema,
        table: c.tbl,
        columns: c.cols,
        refSchema: c.ref_schema,
        refTable: c.ref_table,
        refColumns: c.ref_cols,
      });
  }
  addViewKeys(relations, foreignKeys, viewDeps.rows);

  const routines = new Map<string, RoutineDef[]>();
  for (const f of funcs.rows) {
    const modes = f.arg_modes ?? [];
    const args: FunctionArg[] = [];
    const outputs: Column[] = [];
    const firstDefault = f.nargs - f.ndefaults;
    let inputIndex = 0;
    f.arg_types.forEach((type, i) => {
      const mode = modes[i] ?? "i";
      const name = f.arg_names?.[i] ?? "";
      if (mode === "o" || mode === "t" || mode === "b")
        outputs.push({ name, type, nullable: true, hasDefault: false });
      if (mode === "o" || mode === "t") return;
      args.push({ name, type, hasDefault: inputIndex >= firstDefault, variadic: mode === "v" });
      inputIndex++;
    });
    // PostgREST leaves out functions it cannot call with named arguments: more than one unnamed
    // parameter, or one that is not a json, jsonb, text, xml or bytea body
    const unnamed = args.filter((a) => a.name === "");
    const callable = !(
      unnamed.length > 1 ||
      (unnamed.length === 1 && !SINGLE_BODY_TYPES.has((unnamed[0] as FunctionArg).type))
    );
    // kept for computed relationships (a function of a row) even when not callable by /rpc
    if (!callable && !f.row_arg) continue;
    // as PostgREST: any OUT, INOUT or TABLE parameter makes the result rows of columns, even one
    const composite = f.typtype === "c" || f.out_count > 0;
    const def: RoutineDef = {
      schema: f.schema,
      name: f.name,
      args,
      returnsSet: f.retset,
      returnType: f.rettype,
      returnKind: f.rettype === "void" ? "void" : composite ? "composite" : "scalar",
      returnRelation:
        f.ret_schema && f.ret_rel ? { schema: f.ret_schema, name: f.ret_rel } : undefined,
      callable,
      rowArg: f.row_arg ?? undefined,
      columns: f.type_cols
        ? f.type_cols.map((c) => ({ ...c, nullable: true, hasDefault: false }))
        : outputs.length
          ? outputs
          : undefined,
      volatility: f.volatility === "i" ? "immutable" : f.volatility === "s" ? "stable" : "volatile",
    };
    const key = qualified(f.schema, f.name);
    routines.set(key, [...(routines.get(key) ?? []), def]);
  }
  const zones = await db.query<{ name: string }>("SELECT name FROM pg_catalog.pg_timezone_names");
  return { relations, foreignKeys, routines, timezones: new Set(zones.rows.map((z) => z.name)) };
}

/** Views that expose a table's key columns under the same names inherit its keys. */
function addViewKeys(
  relations: Map<string, Relation>,
  foreignKeys: ForeignKey[],
  deps: { view_schema: string; view: string; schema: string; tbl: string; col: string }[],
) {
  const viewBases = new Map<string, Map<string, Set<string>>>();
  for (const d of deps) {
    const v = qualified(d.view_schema, d.view);
    const bases = viewBases.get(v) ?? new Map<string, Set<string>>();
    const t = qualified(d.schema, d.tbl);
    bases.set(t, (bases.get(t) ?? new Set()).add(d.col));
    viewBases.set(v, bases);
  }
  const base = [...foreignKeys];
  for (const [viewKey, bases] of viewBases) {
    const view = relations.get(viewKey);
    if (!view) continue;
    const exposes = (tableKey: string, columns: string[]) =>
      columns.every((c) => view.columns.has(c) && bases.get(tableKey)?.has(c));
    for (const tableKey of bases.keys()) {
      const table = relations.get(tableKey);
      if (table && table.primaryKey.length && exposes(tableKey, table.primaryKey)) {
        if (bases.size === 1) view.primaryKey = table.primaryKey;
      }
    }
    for (const fk of base) {
      const from = qualified(fk.schema, fk.table);
      const to = qualified(fk.refSchema, fk.refTable);
      if (bases.has(from) && exposes(from, fk.columns))
        foreignKeys.push({ ...fk, schema: view.schema, table: view.name });
      if (bases.has(to) && exposes(to, fk.refColumns))
        foreignKeys.push({ ...fk, refSchema: view.schema, refTable: view.name });
    }
  }
}

// `npm run gen:types`: the app's database types, in the shape `supabase gen types typescript`
// produces (a `Database` type with each exposed schema's Tables {Row, Insert, Update,
// Relationships}, Views, Functions, Enums, CompositeTypes, plus the Tables<>, TablesInsert<>,
// TablesUpdate<>, Enums<>, CompositeTypes<> helpers and `Constants`), read from the catalog of a
// fresh in-memory PGlite after supabase/migrations, and formatted by Biome like the rest of the code.
//
//   npm run gen:types            writes app/lib/database.types.ts
//   npm run gen:types -- --check exits 1 if the committed file differs (the test does the same)
import { spawnSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { createLocalBackend, type LocalBackend } from "@edge-notes/supabase-local";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** The local backend's database (PGlite): what the catalog is read from. */
type Database = LocalBackend["db"];
export const TYPES_FILE = "app/lib/database.types.ts";
/** The schemas the app's API exposes and types (config.toml [api] schemas, minus graphql_public). */
const SCHEMAS = ["public"];
/** What PostgREST version the client should assume (postgrest-js reads it for feature typing). */
const POSTGREST_VERSION = "12";

interface Column {
  table_oid: number;
  name: string;
  type: string;
  nullable: boolean;
  has_default: boolean;
  identity: string;
  generated: string;
}

interface Relation {
  oid: number;
  schema: string;
  name: string;
  kind: string;
  updatable: boolean;
}

interface ForeignKey {
  table_oid: number;
  name: string;
  columns: string[];
  referenced_schema: string;
  referenced_relation: string;
  referenced_columns: string[];
  one_to_one: boolean;
}

interface FunctionInfo {
  schema: string;
  name: string;
  arg_names: string[] | null;
  arg_modes: string[] | null;
  arg_types: string[];
  all_arg_types: string[] | null;
  default_count: number;
  return_type: string;
  returns_set: boolean;
  return_relation: number | null;
}

interface EnumInfo {
  schema: string;
  name: string;
  labels: string[];
}

interface CompositeInfo {
  schema: string;
  name: string;
  attributes: { name: string; type: string }[];
}

interface Catalog {
  relations: Relation[];
  columns: Column[];
  foreignKeys: ForeignKey[];
  functions: FunctionInfo[];
  enums: EnumInfo[];
  composites: CompositeInfo[];
}

async function readCatalog(db: Database): Promise<Catalog> {
  const schemas = SCHEMAS;
  const relations = (
    await db.query<Relation>(
      `select c.oid::int as oid, n.nspname as schema, c.relname as name, c.relkind as kind,
              (c.relkind in ('r', 'p') or pg_relation_is_updatable(c.oid, false) & 20 = 20) as updatable
         from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = any($1) and c.relkind in ('r', 'p', 'f', 'v', 'm')
        order by n.nspname, c.relname`,
      [schemas],
    )
  ).rows;
  const columns = (
    await db.query<Column>(
      `select a.attrelid::int as table_oid, a.attname as name,
              case when t.typtype = 'd' then format_type(t.typbasetype, null) else
                (case when t.typelem <> 0 and t.typcategory = 'A' then '_' || et.typname else t.typname end)
              end as type,
              not a.attnotnull as nullable, a.atthasdef as has_default,
              a.attidentity::text as identity, a.attgenerated::text as generated
         from pg_attribute a
         join pg_class c on c.oid = a.attrelid
         join pg_namespace n on n.oid = c.relnamespace
         join pg_type t on t.oid = a.atttypid
         left join pg_type et on et.oid = t.typelem
        where n.nspname = any($1) and c.relkind in ('r', 'p', 'f', 'v', 'm')
          and a.attnum > 0 and not a.attisdropped
        order by a.attrelid, a.attname`,
      [schemas],
    )
  ).rows;
  const foreignKeys = (
    await db.query<ForeignKey>(
      `select con.conrelid::int as table_oid, con.conname as name,
              array(select a.attname from unnest(con.conkey) with ordinality k(n, i)
                    join pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.n order by k.i)::text[] as columns,
              rn.nspname as referenced_schema, rc.relname as referenced_relation,
              array(select a.attname from unnest(con.confkey) with ordinality k(n, i)
                    join pg_attribute a on a.attrelid = con.confrelid and a.attnum = k.n order by k.i)::text[] as referenced_columns,
              exists (
                select 1 from pg_constraint u
                 where u.conrelid = con.conrelid and u.contype in ('p', 'u')
                   and (select array_agg(x order by x) from unnest(u.conkey) x)
                     = (select array_agg(x order by x) from unnest(con.conkey) x)
              ) as one_to_one
         from pg_constraint con
         join pg_class c on c.oid = con.conrelid
         join pg_namespace n on n.oid = c.relnamespace
         join pg_class rc on rc.oid = con.confrelid
         join pg_namespace rn on rn.oid = rc.relnamespace
        where con.contype = 'f' and n.nspname = any($1)
        order by con.conname`,
      [schemas],
    )
  ).rows;
  const functions = (
    await db.query<FunctionInfo>(
      `select n.nspname as schema, p.proname as name, p.proargnames as arg_names,
              p.proargmodes::text[] as arg_modes,
              array(select format_type(x, null) from unnest(p.proargtypes) x)::text[] as arg_types,
              array(select t.typname from unnest(coalesce(p.proallargtypes, p.proargtypes::oid[])) with ordinality x(oid, i)
                    join pg_type t on t.oid = x.oid order by x.i)::text[] as all_arg_types,
              p.pronargdefaults as default_count,
              rt.typname as return_type, p.proretset as returns_set,
              nullif(rt.typrelid, 0)::int as return_relation
         from pg_proc p
         join pg_namespace n on n.oid = p.pronamespace
         join pg_type rt on rt.oid = p.prorettype
        where n.nspname = any($1) and p.prokind = 'f'
          and rt.typname not in ('trigger', 'event_trigger')
          and not exists (select 1 from pg_depend d where d.objid = p.oid and d.deptype = 'e')
        order by p.proname, p.oid`,
      [schemas],
    )
  ).rows;
  const enums = (
    await db.query<EnumInfo>(
      `select n.nspname as schema, t.typname as name,
              array(select e.enumlabel from pg_enum e where e.enumtypid = t.oid order by e.enumsortorder)::text[] as labels
         from pg_type t join pg_namespace n on n.oid = t.typnamespace
        where t.typtype = 'e' and n.nspname = any($1)
        order by t.typname`,
      [schemas],
    )
  ).rows;
  const composites = (
    await db.query<{ schema: string; name: string; attributes: { name: string; type: string }[] }>(
      `select n.nspname as schema, t.typname as name,
              coalesce((select json_agg(json_build_object('name', a.attname, 'type', at.typname) order by a.attnum)
                 from pg_attribute a join pg_type at on at.oid = a.atttypid
                where a.attrelid = t.typrelid and a.attnum > 0 and not a.attisdropped), '[]') as attributes
         from pg_type t join pg_namespace n on n.oid = t.typnamespace
         join pg_class c on c.oid = t.typrelid
        where t.typtype = 'c' and c.relkind = 'c' and n.nspname = any($1)
        order by t.typname`,
      [schemas],
    )
  ).rows;
  return { relations, columns, foreignKeys, functions, enums, composites };
}

const q = (value: string) => JSON.stringify(value);
const byName = <T extends { name: string }>(a: T, b: T) => a.name.localeCompare(b.name);

function tsType(pgType: string, catalog: Catalog): string {
  if (pgType.startsWith("_")) return `(${tsType(pgType.slice(1), catalog)})[]`;
  if (pgType === "bool") return "boolean";
  if (["int2", "int4", "int8", "float4", "float8", "numeric"].includes(pgType)) return "number";
  if (
    [
      "bytea",
      "bpchar",
      "varchar",
      "date",
      "text",
      "citext",
      "time",
      "timetz",
      "timestamp",
      "timestamptz",
      "uuid",
      "vector",
    ].includes(pgType)
  ) {
    return "string";
  }
  if (pgType === "json" || pgType === "jsonb") return "Json";
  if (pgType === "void") return "undefined";
  if (pgType === "record") return "Record<string, unknown>";
  const enumType = catalog.enums.find((e) => e.name === pgType);
  if (enumType) return `Database[${q(enumType.schema)}]["Enums"][${q(enumType.name)}]`;
  const composite = catalog.composites.find((c) => c.name === pgType);
  if (composite) return `Database[${q(composite.schema)}]["CompositeTypes"][${q(composite.name)}]`;
  const relation = catalog.relations.find((r) => r.name === pgType);
  if (relation) {
    const group = relation.kind === "v" || relation.kind === "m" ? "Views" : "Tables";
    return `Database[${q(relation.schema)}][${q(group)}][${q(relation.name)}]["Row"]`;
  }
  return "unknown";
}

function rowType(columns: Column[], catalog: Catalog): string {
  return `{ ${columns.map((c) => `${q(c.name)}: ${tsType(c.type, catalog)}${c.nullable ? " | null" : ""}`).join("\n")} }`;
}

function writeType(columns: Column[], catalog: Catalog, insert: boolean): string {
  const fields = columns.map((c) => {
    if (c.identity === "a" || c.generated === "s") return `${q(c.name)}?: never`;
    const optional = !insert || c.nullable || c.identity !== "" || c.has_default;
    return `${q(c.name)}${optional ? "?" : ""}: ${tsType(c.type, catalog)}${c.nullable ? " | null" : ""}`;
  });
  return `{ ${fields.join("\n")} }`;
}

function relationships(relation: Relation, catalog: Catalog): string {
  const keys = catalog.foreignKeys
    .filter((fk) => fk.table_oid === relation.oid && fk.referenced_schema === relation.schema)
    .sort(
      (a, b) =>
        a.name.localeCompare(b.name) || a.referenced_relation.localeCompare(b.referenced_relation),
    );
  return `[${keys
    .map(
      (fk) => `{
        foreignKeyName: ${q(fk.name)}
        columns: ${JSON.stringify(fk.columns)}
        isOneToOne: ${fk.one_to_one}
        referencedRelation: ${q(fk.referenced_relation)}
        referencedColumns: ${JSON.stringify(fk.referenced_columns)}
      },`,
    )
    .join("\n")}]`;
}

function functionsOf(schema: string, catalog: Catalog): string {
  const fns = catalog.functions.filter((fn) => {
    if (fn.schema !== schema) return false;
    const modes = fn.arg_modes ?? fn.arg_types.map(() => "i");
    const inNames = (fn.arg_names ?? []).filter((_, i) =>
      ["i", "b", "v"].includes(modes[i] ?? "i"),
    );
    const unnamed = fn.arg_types.length - inNames.filter((n) => n !== "").length;
    return unnamed === 0 || fn.arg_types.length === 1;
  });
  if (fns.length === 0) return "[_ in never]: never";
  const grouped = new Map<string, FunctionInfo[]>();
  for (const fn of fns) grouped.set(fn.name, [...(grouped.get(fn.name) ?? []), fn]);
  return [...grouped]
    .map(([name, overloads]) => {
      const args = overloads
        .map((fn) => {
          const modes = fn.arg_modes ?? fn.arg_types.map(() => "i");
          const names = fn.arg_names ?? [];
          const types = fn.all_arg_types ?? [];
          const inArgs = modes
            .map((mode, i) => ({ mode, name: names[i] ?? "", type: types[i] ?? "unknown" }))
            .filter((a) => a.mode === "i");
          if (inArgs.length === 0) return "Record<PropertyKey, never>";
          const firstDefault = inArgs.length - fn.default_count;
          return `{ ${inArgs
            .map(
              (a, i) => `${q(a.name)}${i >= firstDefault ? "?" : ""}: ${tsType(a.type, catalog)}`,
            )
            .join("; ")} }`;
        })
        .join(" | ");
      const fn = overloads[0] as FunctionInfo;
      const modes = fn.arg_modes ?? [];
      const tableArgs = modes
        .map((mode, i) => ({ mode, name: fn.arg_names?.[i] ?? "", type: fn.all_arg_types?.[i] }))
        .filter((a) => a.mode === "t");
      let returns: string;
      const relation = catalog.relations.find((r) => r.oid === fn.return_relation);
      if (tableArgs.length > 0) {
        returns = `{ ${tableArgs.map((a) => `${q(a.name)}: ${tsType(a.type ?? "", catalog)}`).join("\n")} }`;
      } else if (relation) {
        returns = rowType(
          catalog.columns.filter((c) => c.table_oid === relation.oid),
          catalog,
        );
      } else {
        returns = tsType(fn.return_type, catalog);
      }
      return `${q(name)}: { Args: ${args}\n Returns: ${returns}${fn.returns_set ? "[]" : ""} }`;
    })
    .join("\n");
}

function schemaType(schema: string, catalog: Catalog): string {
  const relations = catalog.relations.filter((r) => r.schema === schema).sort(byName);
  const tables = relations.filter((r) => ["r", "p", "f"].includes(r.kind));
  const views = relations.filter((r) => ["v", "m"].includes(r.kind));
  const columnsOf = (r: Relation) => catalog.columns.filter((c) => c.table_oid === r.oid);
  const enums = catalog.enums.filter((e) => e.schema === schema);
  const composites = catalog.composites.filter((c) => c.schema === schema);
  const none = "[_ in never]: never";
  return `${q(schema)}: {
    Tables: {
      ${
        tables
          .map(
            (t) => `${q(t.name)}: {
        Row: ${rowType(columnsOf(t), catalog)}
        Insert: ${writeType(columnsOf(t), catalog, true)}
        Update: ${writeType(columnsOf(t), catalog, false)}
        Relationships: ${relationships(t, catalog)}
      }`,
          )
          .join("\n") || none
      }
    }
    Views: {
      ${
        views
          .map(
            (v) => `${q(v.name)}: {
        Row: ${rowType(columnsOf(v), catalog)}
        ${v.updatable ? `Insert: ${writeType(columnsOf(v), catalog, false)}\nUpdate: ${writeType(columnsOf(v), catalog, false)}\n` : ""}Relationships: ${relationships(v, catalog)}
      }`,
          )
          .join("\n") || none
      }
    }
    Functions: {
      ${functionsOf(schema, catalog)}
    }
    Enums: {
      ${enums.map((e) => `${q(e.name)}: ${e.labels.map(q).join(" | ")}`).join("\n") || none}
    }
    CompositeTypes: {
      ${
        composites
          .map(
            (c) =>
              `${q(c.name)}: { ${c.attributes.map((a) => `${q(a.name)}: ${tsType(a.type, catalog)} | null`).join("\n")} }`,
          )
          .join("\n") || none
      }
    }
  }`;
}

/** The helper types, as the Supabase CLI writes them (generic over the schema option). */
const HELPERS = `
type DatabaseWithoutInternals = Omit<Database, "__InternalSupabase">

type DefaultSchema = DatabaseWithoutInternals[Extract<keyof Database, "public">]

export type Tables<
  DefaultSchemaTableNameOrOptions extends
    | keyof (DefaultSchema["Tables"] & DefaultSchema["Views"])
    | { schema: keyof DatabaseWithoutInternals },
  TableName extends DefaultSchemaTableNameOrOptions extends { schema: keyof DatabaseWithoutInternals }
    ? keyof (DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Tables"] &
        DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Views"])
    : never = never,
> = DefaultSchemaTableNameOrOptions extends { schema: keyof DatabaseWithoutInternals }
  ? (DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Tables"] &
      DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Views"])[TableName] extends {
      Row: infer R
    }
    ? R
    : never
  : DefaultSchemaTableNameOrOptions extends keyof (DefaultSchema["Tables"] & DefaultSchema["Views"])
    ? (DefaultSchema["Tables"] & DefaultSchema["Views"])[DefaultSchemaTableNameOrOptions] extends {
        Row: infer R
      }
      ? R
      : never
    : never

export type TablesInsert<
  DefaultSchemaTableNameOrOptions extends
    | keyof DefaultSchema["Tables"]
    | { schema: keyof DatabaseWithoutInternals },
  TableName extends DefaultSchemaTableNameOrOptions extends { schema: keyof DatabaseWithoutInternals }
    ? keyof DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Tables"]
    : never = never,
> = DefaultSchemaTableNameOrOptions extends { schema: keyof DatabaseWithoutInternals }
  ? DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Tables"][TableName] extends {
      Insert: infer I
    }
    ? I
    : never
  : DefaultSchemaTableNameOrOptions extends keyof DefaultSchema["Tables"]
    ? DefaultSchema["Tables"][DefaultSchemaTableNameOrOptions] extends { Insert: infer I }
      ? I
      : never
    : never

export type TablesUpdate<
  DefaultSchemaTableNameOrOptions extends
    | keyof DefaultSchema["Tables"]
    | { schema: keyof DatabaseWithoutInternals },
  TableName extends DefaultSchemaTableNameOrOptions extends { schema: keyof DatabaseWithoutInternals }
    ? keyof DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Tables"]
    : never = never,
> = DefaultSchemaTableNameOrOptions extends { schema: keyof DatabaseWithoutInternals }
  ? DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Tables"][TableName] extends {
      Update: infer U
    }
    ? U
    : never
  : DefaultSchemaTableNameOrOptions extends keyof DefaultSchema["Tables"]
    ? DefaultSchema["Tables"][DefaultSchemaTableNameOrOptions] extends { Update: infer U }
      ? U
      : never
    : never

export type Enums<
  DefaultSchemaEnumNameOrOptions extends
    | keyof DefaultSchema["Enums"]
    | { schema: keyof DatabaseWithoutInternals },
  EnumName extends DefaultSchemaEnumNameOrOptions extends { schema: keyof DatabaseWithoutInternals }
    ? keyof DatabaseWithoutInternals[DefaultSchemaEnumNameOrOptions["schema"]]["Enums"]
    : never = never,
> = DefaultSchemaEnumNameOrOptions extends { schema: keyof DatabaseWithoutInternals }
  ? DatabaseWithoutInternals[DefaultSchemaEnumNameOrOptions["schema"]]["Enums"][EnumName]
  : DefaultSchemaEnumNameOrOptions extends keyof DefaultSchema["Enums"]
    ? DefaultSchema["Enums"][DefaultSchemaEnumNameOrOptions]
    : never

export type CompositeTypes<
  PublicCompositeTypeNameOrOptions extends
    | keyof DefaultSchema["CompositeTypes"]
    | { schema: keyof DatabaseWithoutInternals },
  CompositeTypeName extends PublicCompositeTypeNameOrOptions extends {
    schema: keyof DatabaseWithoutInternals
  }
    ? keyof DatabaseWithoutInternals[PublicCompositeTypeNameOrOptions["schema"]]["CompositeTypes"]
    : never = never,
> = PublicCompositeTypeNameOrOptions extends { schema: keyof DatabaseWithoutInternals }
  ? DatabaseWithoutInternals[PublicCompositeTypeNameOrOptions["schema"]]["CompositeTypes"][CompositeTypeName]
  : PublicCompositeTypeNameOrOptions extends keyof DefaultSchema["CompositeTypes"]
    ? DefaultSchema["CompositeTypes"][PublicCompositeTypeNameOrOptions]
    : never
`;

export function renderTypes(catalog: Catalog): string {
  const constants = SCHEMAS.map(
    (schema) =>
      `${q(schema)}: { Enums: { ${catalog.enums
        .filter((e) => e.schema === schema)
        .map((e) => `${q(e.name)}: [${e.labels.map(q).join(", ")}]`)
        .join(",\n")} } }`,
  ).join(",\n");
  return `// Generated by \`npm run gen:types\` (scripts/gen-types.ts) from supabase/migrations, in the
// shape \`supabase gen types typescript\` produces. Do not edit: change a migration and regenerate.

export type Json = string | number | boolean | null | { [key: string]: Json | undefined } | Json[]

export type Database = {
  // Allows to automatically instantiate createClient with right options
  // instead of createClient<Database, { PostgrestVersion: 'XX' }>(URL, KEY)
  __InternalSupabase: {
    PostgrestVersion: ${q(POSTGREST_VERSION)}
  }
  ${SCHEMAS.map((schema) => schemaType(schema, catalog)).join("\n")}
}
${HELPERS}
export const Constants = {
  ${constants}
} as const
`;
}

/** Biome formats the file exactly as `biome check` expects it. */
function format(source: string): string {
  const result = spawnSync(
    `${ROOT}node_modules/.bin/biome`,
    ["format", `--stdin-file-path=${TYPES_FILE}`],
    { cwd: ROOT, input: source, encoding: "utf8" },
  );
  if (result.status !== 0) throw new Error(`biome format failed:\n${result.stderr}`);
  return result.stdout;
}

/**
 * The types for the schema supabase/migrations builds, formatted. Read from a backend of the
 * project without its seed: it starts from the start snapshot of the migrations (made once per
 * change to them), not from initdb.
 */
export async function generateDatabaseTypes(): Promise<string> {
  const backend = await createLocalBackend({ projectDir: ROOT, host: false, seed: false });
  try {
    return format(renderTypes(await readCatalog(backend.db)));
  } finally {
    await backend.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const generated = await generateDatabaseTypes();
  const path = `${ROOT}${TYPES_FILE}`;
  if (process.argv.includes("--check")) {
    const current = await readFile(path, "utf8").catch(() => "");
    if (current !== generated) {
      console.error(`${TYPES_FILE} is out of date: run npm run gen:types`);
      process.exit(1);
    }
  } else {
    await writeFile(path, generated);
    console.log(`wrote ${TYPES_FILE}`);
  }
}

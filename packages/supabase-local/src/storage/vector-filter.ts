// A QueryVectors `filter` (S3 Vectors' metadata filter language) as SQL over a vector table's
// `metadata` jsonb column, with upstream's semantics and refusals (its pgvector adapter,
// supabase/storage v1.70.6): a field is equal to a value when its scalar is, or its array holds
// it; `$ne` and `$nin` mean "no element" for an array; `$gt` to `$lte` compare numbers only (a
// field of another type never matches); `$exists` tests the key; `$and` and `$or` nest. Keys and
// values are parameters, never SQL: any key a vector was stored with can be filtered on.
import { ERRORS } from "./errors.ts";

type Primitive = string | number | boolean;

export interface SqlFilter {
  /** A boolean SQL expression with $1… placeholders, numbered from `offset` + 1. */
  sql: string;
  params: unknown[];
}

const FIELD_OPERATORS = new Set([
  "$eq",
  "$ne",
  "$gt",
  "$gte",
  "$lt",
  "$lte",
  "$in",
  "$nin",
  "$exists",
]);
const COMPARISONS: Record<string, string> = { $gt: ">", $gte: ">=", $lt: "<", $lte: "<=" };

const invalid = (message: string) => ERRORS.invalidParameter("filter", message);

/** `filter` as SQL on the column `metadata`, its placeholders numbered after `offset`. */
export function translateFilter(filter: unknown, offset = 0): SqlFilter {
  const params: unknown[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${offset + params.length}`;
  };
  const text = (key: string) => `metadata->>${param(key)}`;
  const node = (key: string) => `metadata->${param(key)}`;
  /** Whether the field's array (an empty one for a non-array) holds a value equal to `values`'s. */
  const arrayHas = (key: string, values: string | string[], assumeArray = false) => {
    const array = node(key);
    const elements = assumeArray
      ? array
      : `CASE WHEN jsonb_typeof(${array}) = 'array' THEN ${array} ELSE '[]'::jsonb END`;
    const match = Array.isArray(values) ? `= ANY(${param(values)})` : `= ${param(values)}`;
    return `EXISTS (SELECT 1 FROM jsonb_array_elements(${elements}) AS elem(value) WHERE elem.value#>>'{}' ${match})`;
  };

  const operator = (key: string, op: string, raw: unknown): string => {
    switch (op) {
      case "$eq": {
        const value = asText(primitive(raw));
        return `(${text(key)} = ${param(value)} OR ${arrayHas(key, value)})`;
      }
      case "$ne": {
        const value = asText(primitive(raw));
        const type = node(key);
        const inArray = arrayHas(key, value, true);
        return `(CASE WHEN jsonb_typeof(${type}) = 'array' THEN NOT ${inArray} ELSE ${text(key)} <> ${param(value)} END)`;
      }
      case "$gt":
      case "$gte":
      case "$lt":
      case "$lte": {
        if (typeof raw !== "number") throw invalid(`${op} requires a number for "${key}"`);
        finite(raw);
        return `(jsonb_typeof(${node(key)}) = 'number' AND (${text(key)})::numeric ${COMPARISONS[op]} ${param(raw)})`;
      }
      case "$in":
      case "$nin": {
        if (!Array.isArray(raw) || raw.length === 0)
          throw invalid(`${op} requires a non-empty array for "${key}"`);
        const values = raw.map((value) => asText(primitive(value)));
        if (op === "$in")
          return `(${text(key)} = ANY(${param(values)}) OR ${arrayHas(key, values)})`;
        const type = node(key);
        const inArray = arrayHas(key, values, true);
        return `(CASE WHEN jsonb_typeof(${type}) = 'array' THEN NOT ${inArray} ELSE ${text(key)} <> ALL(${param(values)}) END)`;
      }
      case "$exists": {
        if (typeof raw !== "boolean") throw invalid(`$exists requires a boolean for "${key}"`);
        return `${raw ? "" : "NOT "}jsonb_exists(metadata, ${param(key)})`;
      }
      default:
        throw invalid(`Unsupported field operator: ${op}`);
    }
  };

  const field = (key: string, value: unknown): string => {
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      const ops = Object.entries(value);
      if (ops.length === 0) throw invalid(`Empty operator object for field "${key}"`);
      for (const [op] of ops)
        if (!FIELD_OPERATORS.has(op)) throw invalid(`Unsupported field operator: ${op}`);
      const parts = ops.map(([op, raw]) => operator(key, op, raw));
      return parts.length === 1 ? (parts[0] as string) : `(${parts.join(" AND ")})`;
    }
    return operator(key, "$eq", value);
  };

  const clause = (filter: unknown): string => {
    if (filter === null || typeof filter !== "object" || Array.isArray(filter))
      throw invalid("Filter must be an object");
    const keys = Object.keys(filter);
    if (keys.length === 0) throw invalid("Filter must contain at least one clause");
    const record = filter as Record<string, unknown>;
    if ("$and" in record || "$or" in record) {
      if (keys.length !== 1)
        throw invalid(`Logical operator must be the only key, got: ${keys.join(", ")}`);
      const op = keys[0] as "$and" | "$or";
      const children = record[op];
      if (!Array.isArray(children) || children.length === 0)
        throw invalid(`${op} requires a non-empty array`);
      return children.map((child) => `(${clause(child)})`).join(op === "$and" ? " AND " : " OR ");
    }
    const parts = keys.map((key) => {
      if (key.startsWith("$")) throw invalid(`Unexpected operator "${key}" at field position`);
      return field(key, record[key]);
    });
    return parts.length === 1 ? (parts[0] as string) : parts.join(" AND ");
  };

  return { sql: clause(filter), params };
}

/** The metadata keys a filter names, at any depth (to refuse a non-filterable one). */
export function filterKeys(filter: unknown, keys = new Set<string>()): Set<string> {
  if (filter === null || typeof filter !== "object" || Array.isArray(filter)) return keys;
  for (const [key, value] of Object.entries(filter)) {
    if ((key === "$and" || key === "$or") && Array.isArray(value))
      for (const child of value) filterKeys(child, keys);
    if (!key.startsWith("$")) keys.add(key);
  }
  return keys;
}

function primitive(value: unknown): Primitive {
  if (typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") {
    finite(value);
    return value;
  }
  throw invalid(`Unsupported filter value type: ${typeof value}`);
}

function finite(value: number): void {
  if (!Number.isFinite(value)) throw invalid(`Filter values must be finite numbers, got: ${value}`);
}

function asText(value: Primitive): string {
  return typeof value === "boolean" ? (value ? "true" : "false") : String(value);
}

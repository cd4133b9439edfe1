/**
 * Which function a call means, as PostgREST's findProc decides it: overloads are told apart by
 * the names of the arguments given (the JSON body's keys, the form fields, or GET's query params),
 * every required parameter given and nothing unknown; failing that, a function with a single
 * unnamed parameter takes the whole body when the Content-Type fits its type (json/jsonb for
 * JSON, text for text/plain, xml for text/xml, bytea for application/octet-stream). None is
 * PGRST202 (with a "Perhaps you meant …" hint), more than one is PGRST203.
 */
import type { BodyType } from "./api-request.ts";
import { errors } from "./errors.ts";
import { closest } from "./fuzzy.ts";
import { qualified, type RoutineDef, type SchemaCache } from "./schema-cache.ts";

export interface Resolved {
  readonly routine: RoutineDef;
  /** the body is the single unnamed parameter's value */
  readonly single: boolean;
}

const SINGLE: Partial<Record<BodyType, readonly string[]>> = {
  json: ["json", "jsonb"],
  text: ["text"],
  xml: ["xml"],
  bytea: ["bytea"],
};
const RAW_BODIES: readonly BodyType[] = ["text", "xml", "bytea"];

/**
 * `keys`: the argument names given; `body`: the POST body's type (undefined for GET/HEAD, whose
 * arguments are query params).
 */
export function findRoutine(
  cache: SchemaCache,
  schema: string,
  name: string,
  keys: ReadonlySet<string>,
  body: BodyType | undefined,
): Resolved {
  const overloads = (cache.routines.get(qualified(schema, name)) ?? [])
    .filter((r) => r.callable)
    .sort(byPostgrestOrder);
  const matching = overloads.filter((r) => matchesParams(r, keys, body));
  const fallback = overloads.filter((r) => hasSingleUnnamedParam(r, body));
  const found = matching.length ? matching : fallback;
  if (found.length === 1) return { routine: found[0] as RoutineDef, single: !matching.length };
  if (found.length > 1)
    throw errors.ambiguousFunction(
      found.map((r) => ({
        schema: r.schema,
        name: r.name,
        args: r.args.map((a): [string, string] => [a.name, a.type]),
      })),
    );
  const sorted = [...keys].sort();
  throw errors.noFunction(
    schema,
    name,
    sorted,
    body === undefined ? undefined : body === "json" ? "json" : isRaw(body) ? body : "other",
    noFunctionHint(cache, schema, name, sorted, overloads),
  );
}

/**
 * PostgREST's order of overloads (its `Ord Routine`), which PGRST203 lists them in: fewer
 * parameters first, then the parameters compared in turn, each by name, type, then required
 * after optional. (PostgREST compares a function's comment before its parameters; overloads
 * with different comments may be listed the other way round.)
 */
function byPostgrestOrder(a: RoutineDef, b: RoutineDef): number {
  if (a.args.length !== b.args.length) return a.args.length - b.args.length;
  for (let i = 0; i < a.args.length; i++) {
    const x = a.args[i] as RoutineDef["args"][number];
    const y = b.args[i] as RoutineDef["args"][number];
    const c =
      compareText(x.name, y.name) ||
      compareText(x.type, y.type) ||
      Number(!x.hasDefault) - Number(!y.hasDefault);
    if (c) return c;
  }
  return 0;
}

const compareText = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);

const isRaw = (body: BodyType): body is "text" | "xml" | "bytea" => RAW_BODIES.includes(body);

function matchesParams(r: RoutineDef, keys: ReadonlySet<string>, body: BodyType | undefined) {
  if (r.args.length === 0) return keys.size === 0 && !(body && isRaw(body));
  const required = r.args.filter((a) => !a.hasDefault).map((a) => a.name);
  const optional = new Set(r.args.filter((a) => a.hasDefault).map((a) => a.name));
  // every required parameter given; the other keys are optional parameters
  const rest = [...keys].filter((k) => !optional.has(k));
  return rest.length === required.length && required.every((k) => keys.has(k));
}

function hasSingleUnnamedParam(r: RoutineDef, body: BodyType | undefined) {
  const only = r.args.length === 1 ? r.args[0] : undefined;
  return !!only && body !== undefined && only.name === "" && !!SINGLE[body]?.includes(only.type);
}

/**
 * PostgREST's noRpcHint: a function of a close name in the schema (when none has this name), or
 * the closest parameter list of this function's overloads.
 */
function noFunctionHint(
  cache: SchemaCache,
  schema: string,
  name: string,
  keys: readonly string[],
  overloads: readonly RoutineDef[],
): string | null {
  const prefix = `Perhaps you meant to call the function ${schema}.`;
  if (overloads.length === 0) {
    const names = [...cache.routines.values()]
      .flat()
      .filter((r) => r.schema === schema && r.callable)
      .map((r) => r.name);
    const best = closest(names, name, 0.75);
    return best ? `${prefix}${best}` : null;
  }
  const list = (names: readonly string[]) => `(${[...names].sort().join(", ")})`;
  const best = closest(
    overloads.map((r) => list(r.args.map((a) => a.name))),
    list(keys),
  );
  return best ? `${prefix}${name}${best}` : null;
}

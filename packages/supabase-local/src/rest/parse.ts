/**
 * HTTP request -> ApiRequest: the PostgREST request language (query string, Prefer, Accept,
 * Range, profiles, JSON body), read once and without any knowledge of the database. Pure apart
 * from reading the body: every failure is a RestError (PGRST1xx, PGRST106) with PostgREST's
 * message layout. Names are resolved against the schema cache later (plan.ts).
 */

import { parse as parseCsv } from "csv-parse/sync";
import type {
  ApiRequest,
  ArgOrFilter,
  BodyType,
  Condition,
  ExplainRequest,
  Field,
  Filter,
  FilterValue,
  JsonStep,
  LogicTree,
  MediaType,
  Operator,
  OrderTerm,
  Preferences,
  SelectItem,
} from "./api-request.ts";
import { errors, parseError, RestError } from "./errors.ts";

/** The filter operators (a record, so that none of the Operator type can be left out). */
const OPERATORS: Record<Operator, true> = {
  eq: true,
  neq: true,
  gt: true,
  gte: true,
  lt: true,
  lte: true,
  like: true,
  ilike: true,
  match: true,
  imatch: true,
  in: true,
  is: true,
  isdistinct: true,
  cs: true,
  cd: true,
  ov: true,
  sl: true,
  sr: true,
  nxr: true,
  nxl: true,
  adj: true,
  fts: true,
  plfts: true,
  phfts: true,
  wfts: true,
};

/** The ApiRequest's types are read-only; the parser builds them before handing them on. */
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const QUANTIFIABLE = new Set(["eq", "gt", "gte", "lt", "lte", "like", "ilike", "match", "imatch"]);
const FTS = new Set(["fts", "plfts", "phfts", "wfts"]);

// ---------------------------------------------------------------- cursor

class Cursor {
  pos = 0;
  readonly input: string;
  readonly what: string;
  constructor(input: string, what: string) {
    this.input = input;
    this.what = what;
  }
  get done() {
    return this.pos >= this.input.length;
  }
  peek(n = 0) {
    return this.input[this.pos + n] ?? "";
  }
  startsWith(s: string) {
    return this.input.startsWith(s, this.pos);
  }
  eat(s: string) {
    if (this.startsWith(s)) {
      this.pos += s.length;
      return true;
    }
    return false;
  }
  fail(expecting: string): never {
    const ch = this.peek();
    const unexpected = ch === "" ? "unexpected end of input" : `unexpected ${JSON.stringify(ch)}`;
    throw parseError(this.what, this.input, this.pos + 1, `${unexpected} expecting ${expecting}`);
  }
  expect(s: string, expecting = JSON.stringify(s)) {
    if (!this.eat(s)) this.fail(expecting);
  }
}

const STOP = new Set([",", ".", ":", "(", ")", "!", '"', ">", "*", "'", " ", "\t", "\n", "\r"]);

function readName(c: Cursor, expecting = "field name"): string {
  if (c.peek() === '"') return readQuoted(c);
  const start = c.pos;
  while (!c.done) {
    const ch = c.peek();
    if (STOP.has(ch)) break;
    if (ch === "-" && c.peek(1) === ">") break;
    c.pos++;
  }
  if (c.pos === start) c.fail(expecting);
  return c.input.slice(start, c.pos);
}

function readQuoted(c: Cursor): string {
  c.expect('"');
  let out = "";
  while (true) {
    if (c.done) c.fail('"\\"" (closing quote)');
    const ch = c.peek();
    if (ch === "\\" && c.pos + 1 < c.input.length) {
      out += c.peek(1);
      c.pos += 2;
      continue;
    }
    if (ch === '"') {
      c.pos++;
      return out;
    }
    out += ch;
    c.pos++;
  }
}

function readField(c: Cursor): Field {
  const name = readName(c);
  const json: JsonStep[] = [];
  while (c.startsWith("->")) {
    const arrow = c.eat("->>") ? "->>" : (c.eat("->"), "->");
    const m = /^-?\d+(?=$|[,.:)\-]|::)/.exec(c.input.slice(c.pos));
    if (m && !c.startsWith('"')) {
      json.push({ arrow, key: Number(m[0]) });
      c.pos += m[0].length;
    } else json.push({ arrow, key: readName(c, "json key") });
  }
  return { name, json };
}

// ---------------------------------------------------------------- select

export function parseSelect(input: string): SelectItem[] {
  const c = new Cursor(input, "select parameter");
  if (input.trim() === "") return [{ type: "star" }];
  const items = readForest(c, 0);
  if (!c.done) c.fail('"," or end of input');
  return items;
}

function readForest(c: Cursor, depth: number): SelectItem[] {
  if (depth > 32) c.fail("less nesting");
  const items: SelectItem[] = [];
  while (true) {
    skipSpace(c);
    items.push(readItem(c, depth));
    skipSpace(c);
    if (!c.eat(",")) return items;
  }
}

function skipSpace(c: Cursor) {
  while (/\s/.test(c.peek()) && !c.done) c.pos++;
}

function readItem(c: Cursor, depth: number): SelectItem {
  if (c.eat("*")) return { type: "star" };
  const spread = c.eat("...");
  let alias: string | undefined;
  const save = c.pos;
  if (!spread) {
    const first = c.peek() === '"' || !STOP.has(c.peek()) ? tryAlias(c) : undefined;
    if (first !== undefined) alias = first;
    else c.pos = save;
  }
  // count() alone: the number of rows (an embedded resource cannot be named count)
  if (!spread && c.eat("count()")) {
    const cast = c.eat("::") ? readCast(c) : undefined;
    return {
      type: "column",
      field: { name: "*", json: [] },
      alias,
      aggregate: { fn: "count", cast },
    };
  }
  const startName = c.pos;
  const name = readName(c);
  if (c.peek() === "!" || c.peek() === "(") {
    let hint: string | undefined;
    let join: "inner" | "left" = "left";
    while (c.eat("!")) {
      const h = readName(c, "embed hint");
      if (h === "inner") join = "inner";
      else if (h === "left") join = "left";
      else hint = h;
    }
    c.expect("(", '"(" (embedded resource)');
    skipSpace(c);
    if (c.eat(")")) return { type: "embed", name, alias, hint, join, spread, select: [] };
    const select = readForest(c, depth + 1);
    c.expect(")", '")" or ","');
    return { type: "embed", name, alias, hint, join, spread, select };
  }
  if (spread) c.fail('"(" (spread needs an embedded resource)');
  c.pos = startName;
  const field = readField(c);
  const cast = c.eat("::") ? readCast(c) : undefined;
  const m = /^\.(count|sum|avg|max|min)\(\)/.exec(c.input.slice(c.pos));
  if (!m) return { type: "column", field, alias, cast };
  c.pos += m[0].length;
  const fn = m[1] as "count";
  const aggregateCast = c.eat("::") ? readCast(c) : undefined;
  return { type: "column", field, alias, cast, aggregate: { fn, cast: aggregateCast } };
}

function tryAlias(c: Cursor): string | undefined {
  const start = c.pos;
  try {
    const name = readName(c);
    if (c.peek() === ":" && c.peek(1) !== ":") {
      c.pos++;
      return name;
    }
  } catch (e) {
    if (!(e instanceof RestError)) throw e;
  }
  c.pos = start;
  return undefined;
}

function readCast(c: Cursor): string {
  const m = /^[A-Za-z_][A-Za-z0-9_]*(\[\])?/.exec(c.input.slice(c.pos));
  if (!m) c.fail("cast type");
  c.pos += m[0].length;
  return m[0].toLowerCase();
}

// ---------------------------------------------------------------- filters

export function parseFilter(field: Field, value: string): Filter {
  const c = new Cursor(value, "filter");
  return readOperation(c, field, false);
}

function readOperation(c: Cursor, field: Field, inLogic: boolean): Filter {
  const negate = c.eat("not.");
  const m = /^[a-z]+/.exec(c.input.slice(c.pos));
  const op = m?.[0] as Operator | undefined;
  if (!op || !Object.hasOwn(OPERATORS, op))
    c.fail(negate ? "operator (eq, gt, ...)" : '"not" or operator (eq, gt, ...)');
  c.pos += op.length;
  let quantifier: "any" | "all" | undefined;
  let language: string | undefined;
  if (c.peek() === "(") {
    if (QUANTIFIABLE.has(op)) {
      c.pos++;
      if (c.eat("any")) quantifier = "any";
      else if (c.eat("all")) quantifier = "all";
      else c.fail('"any" or "all"');
      c.expect(")");
    } else if (FTS.has(op)) {
      c.pos++;
      const lm = /^[A-Za-z0-9_]+/.exec(c.input.slice(c.pos));
      if (!lm) c.fail("text search configuration");
      language = lm[0];
      c.pos += lm[0].length;
      c.expect(")");
    }
  }
  c.expect(".", '"." (operator value)');
  let v: FilterValue;
  if (op === "in") v = { kind: "list", values: readList(c) };
  else if (op === "is") {
    const raw = inLogic ? readLogicValue(c) : rest(c);
    const val = raw.toLowerCase();
    if (!["null", "not_null", "true", "false", "unknown"].includes(val))
      throw parseError(
        "filter",
        c.input,
        c.pos + 1,
        'unexpected "' +
          raw.slice(0, 1) +
          '" expecting isVal: (null, not_null, true, false, unknown)',
      );
    v = { kind: "is", value: val as "null" };
  } else {
    const raw = inLogic ? readLogicValue(c) : rest(c);
    v = FTS.has(op) ? { kind: "fts", language, query: raw } : { kind: "scalar", value: raw };
  }
  return { type: "filter", field, negate, op, quantifier, value: v };
}

function rest(c: Cursor) {
  const s = c.input.slice(c.pos);
  c.pos = c.input.length;
  return s;
}

function readList(c: Cursor): string[] {
  c.expect("(", '"(" (list of values)');
  const values: string[] = [];
  if (c.eat(")")) return values;
  while (true) {
    if (c.peek() === '"') values.push(readQuoted(c));
    else {
      const start = c.pos;
      while (!c.done && c.peek() !== "," && c.peek() !== ")") c.pos++;
      values.push(c.input.slice(start, c.pos));
    }
    if (c.eat(",")) continue;
    c.expect(")", '"," or ")"');
    return values;
  }
}

function readLogicValue(c: Cursor): string {
  if (c.peek() === '"') return readQuoted(c);
  const start = c.pos;
  if (c.peek() === "{") {
    let depth = 0;
    while (!c.done) {
      const ch = c.peek();
      c.pos++;
      if (ch === "{") depth++;
      else if (ch === "}" && --depth === 0) break;
    }
    return c.input.slice(start, c.pos);
  }
  while (!c.done && c.peek() !== "," && c.peek() !== ")") c.pos++;
  return c.input.slice(start, c.pos);
}

/** `or=(a.eq.1,and(b.gt.2,c.is.null))` with the key giving the operator and negation. */
export function parseLogic(op: "and" | "or", negate: boolean, value: string): LogicTree {
  const c = new Cursor(value, "logic tree");
  const tree = readLogicBody(c, op, negate, 0);
  if (!c.done) c.fail("end of input");
  return tree;
}

function readLogicBody(c: Cursor, op: "and" | "or", negate: boolean, depth: number): LogicTree {
  if (depth > 32) c.fail("less nesting");
  c.expect("(", '"("');
  const children: Condition[] = [];
  while (true) {
    const save = c.pos;
    const not = c.eat("not.");
    if (c.startsWith("and(") || c.startsWith("or(")) {
      const inner = c.eat("and") ? "and" : (c.eat("or"), "or");
      children.push(readLogicBody(c, inner, not, depth + 1));
    } else {
      c.pos = save;
      const field = readField(c);
      c.expect(".", '"." (operator)');
      children.push(readOperation(c, field, true));
    }
    if (c.eat(",")) continue;
    c.expect(")", '"," or ")"');
    return { type: "logic", op, negate, children };
  }
}

// ---------------------------------------------------------------- order, columns

export function parseOrder(value: string): OrderTerm[] {
  const c = new Cursor(value, "order");
  const terms: OrderTerm[] = [];
  while (true) {
    const start = c.pos;
    let relation: string | undefined;
    const name = readName(c);
    let field: Field;
    if (c.eat("(")) {
      relation = name;
      field = readField(c);
      c.expect(")");
    } else {
      c.pos = start;
      field = readField(c);
    }
    terms.push(readOrderModifiers(c, { relation, field }));
    if (c.done) return terms;
    c.expect(",", '"," or end of input');
  }
}

/**
 * `.asc`/`.desc`, then `.nullsfirst`/`.nullslast`, each at most once and in that order, as
 * PostgREST's pOrder: `id.asc.desc` and `id.nullsfirst.asc` are PGRST100.
 */
function readOrderModifiers(c: Cursor, term: Mutable<OrderTerm>): OrderTerm {
  const modifier = (options: Record<string, () => void>, expecting: string) => {
    c.expect(".");
    const word = Object.keys(options).find((w) => c.startsWith(w));
    if (!word) c.fail(expecting);
    c.pos += word.length;
    options[word]?.();
  };
  const nulls = {
    nullsfirst: () => (term.nulls = "first"),
    nullslast: () => (term.nulls = "last"),
  };
  if (c.peek() === ".")
    modifier(
      { asc: () => (term.direction = "asc"), desc: () => (term.direction = "desc"), ...nulls },
      '"asc", "desc", "nullsfirst" or "nullslast"',
    );
  if (term.direction && c.peek() === ".") modifier(nulls, '"nullsfirst" or "nullslast"');
  if (!c.done && c.peek() !== ",")
    throw parseError(
      c.what,
      c.input,
      c.pos + 1,
      `unexpected '${c.peek()}' expecting "," or end of input`,
    );
  return term;
}

export function parseColumns(value: string, what: string): string[] {
  const c = new Cursor(value, what);
  const out: string[] = [];
  while (true) {
    skipSpace(c);
    out.push(readName(c));
    skipSpace(c);
    if (c.done) return out;
    c.expect(",", '"," or end of input');
  }
}

/**
 * A limit or offset as PostgREST reads it (Haskell's readMaybe of an Integer): a whole number,
 * negative ones included; anything else (`abc`, `1e3`, empty) is ignored, as if not given.
 */
function readInteger(value: string): number | undefined {
  return /^\s*-?\d{1,15}\s*$/.test(value) ? Number(value) : undefined;
}

/**
 * An embedded resource's limit or offset: PostgREST has no answer for a negative one (its range
 * becomes empty, which it cannot plan), so it is refused here as a parse error.
 */
function embeddedBound(key: string, value: string): number | undefined {
  const n = readInteger(value);
  if (n !== undefined && n < 0)
    throw parseError(
      key.split(".").pop() === "limit" ? "limit parameter" : "offset parameter",
      value,
      1,
      "expecting a non-negative integer",
    );
  return n;
}

/**
 * The root's rows, as PostgREST's getRanges: the Range header (GET only) intersected with
 * offset/limit, where a negative offset reads as 0. limit=0 (with no offset) stands alone. An
 * empty intersection is 416 PGRST103: the Range header's bounds reversed, or else a negative
 * limit (limit=0 with an offset is one too: PostgREST's range for it is empty).
 */
function topLevelPage(
  root: ScopeBuilder,
  range: { from: number; to?: number } | undefined,
): { limit?: number; offset?: number } {
  if (root.limit === 0 && (root.offset ?? 0) === 0) return { limit: 0 };
  const lower = Math.max(range?.from ?? 0, root.offset ?? 0);
  const fromQuery =
    root.limit === undefined ? Number.POSITIVE_INFINITY : (root.offset ?? 0) + root.limit - 1;
  const upper = Math.min(fromQuery, range?.to ?? Number.POSITIVE_INFINITY);
  if (upper < lower)
    throw errors.invalidRange(
      range?.to !== undefined && range.to < range.from
        ? "The lower boundary must be lower than or equal to the upper boundary in the Range header."
        : "Limit should be greater than or equal to zero.",
    );
  return {
    offset: lower > 0 ? lower : undefined,
    limit: upper === Number.POSITIVE_INFINITY ? undefined : upper - lower + 1,
  };
}

// ---------------------------------------------------------------- headers

/** The preferences PostgREST knows, each as the one entry it accepts (compared whole). */
const PREFERENCES: Record<string, (p: Mutable<Preferences>) => void> = {
  "return=minimal": (p) => (p.return ??= "minimal"),
  "return=headers-only": (p) => (p.return ??= "headers-only"),
  "return=representation": (p) => (p.return ??= "representation"),
  "count=exact": (p) => (p.count ??= "exact"),
  "count=planned": (p) => (p.count ??= "planned"),
  "count=estimated": (p) => (p.count ??= "estimated"),
  "resolution=merge-duplicates": (p) => (p.resolution ??= "merge-duplicates"),
  "resolution=ignore-duplicates": (p) => (p.resolution ??= "ignore-duplicates"),
  "missing=default": (p) => (p.missing ??= "default"),
  "missing=null": (p) => (p.missing ??= "null"),
  "tx=commit": (p) => (p.tx ??= "commit"),
  "tx=rollback": (p) => (p.tx ??= "rollback"),
  "handling=strict": (p) => (p.handling ??= "strict"),
  "handling=lenient": (p) => (p.handling ??= "lenient"),
};

/**
 * The Prefer headers as PostgREST's Preferences.fromHeaders reads them: entries split on commas
 * and trimmed, each compared whole (`return = minimal` is not `return=minimal`), the first of a
 * kind winning. `timezone=` and `max-affected=` take the first entry with that prefix;
 * max-affected is a whole number or nothing, and never invalid. Whether tx= is honoured and
 * whether the timezone exists depend on the database, so the plan decides both (and raises
 * PGRST122 for handling=strict): `invalid` lists the `timezone=` entries too, in order, for the
 * plan to drop when the timezone is known.
 */
export function parsePreferences(header: string | null): Preferences {
  const prefer: Mutable<Preferences> & { invalid: string[] } = { invalid: [] };
  if (!header) return prefer;
  for (const part of header.split(",")) {
    const p = part.trim();
    const known = PREFERENCES[p];
    if (known && Object.hasOwn(PREFERENCES, p)) known(prefer);
    else if (p.startsWith("max-affected=")) {
      if (!("maxAffected" in prefer)) prefer.maxAffected = readInteger(p.slice(13));
    } else {
      if (p.startsWith("timezone=")) prefer.timezone ??= p.slice(9);
      prefer.invalid.push(p);
    }
  }
  return prefer;
}

/**
 * The Accept header's media types in PostgREST's order (wai-extra's parseHttpAccept): spaces
 * removed, sorted by q (1 when absent or unreadable), then by specificity (parameters minus
 * wildcards), both highest first, the header's order kept among equals. What followed `;q=…`
 * is dropped.
 */
export function acceptedTypes(header: string): string[] {
  return header
    .split(",")
    .map((entry, index) => {
      const compact = entry.replace(/ /g, "");
      const at = compact.indexOf(";q=");
      const type = at === -1 ? compact : compact.slice(0, at);
      const q = at === -1 ? 1 : readQ(compact.slice(at + 3).split(";")[0] ?? "");
      const specificity = (type.match(/;/g)?.length ?? 0) - (type.match(/\*/g)?.length ?? 0);
      return { type, q, specificity, index };
    })
    .sort((a, b) => b.q - a.q || b.specificity - a.specificity || a.index - b.index)
    .map((e) => e.type);
}

/** A q-value as Haskell's `reads` of a Double takes it: a leading number, else 1. */
function readQ(text: string): number {
  const m = /^\d+(\.\d+)?([eE][-+]?\d+)?/.exec(text);
  return m ? Number(m[0]) : 1;
}

const PLAN_OPTIONS = new Set(["analyze", "verbose", "settings", "buffers", "wal"]);

export function parseAccept(header: string | null): {
  media: MediaType;
  stripNulls: boolean;
  explain?: ExplainRequest;
} {
  if (!header || header.trim() === "") return { media: "json", stripNulls: false };
  const offered = acceptedTypes(header);
  for (const entry of offered) {
    const [type = "", ...params] = entry.split(";").map((s) => s.trim().toLowerCase());
    const stripNulls = params.includes("nulls=stripped");
    if (
      type === "application/json" ||
      type === "application/vnd.pgrst.array+json" ||
      type === "*/*" ||
      type === "application/*"
    )
      return { media: "json", stripNulls };
    if (type === "application/vnd.pgrst.object+json" || type === "application/vnd.pgrst.object")
      return { media: "object", stripNulls };
    if (type === "text/csv") return { media: "csv", stripNulls: false };
    const plan = /^application\/vnd\.pgrst\.plan(\+json|\+text)?$/.exec(type);
    if (plan) {
      const param = (name: string) =>
        params
          .find((p) => p.startsWith(`${name}=`))
          ?.slice(name.length + 1)
          .replace(/"/g, "");
      const forType = param("for") ?? "application/json";
      const inner = parseAccept(forType);
      const options = (param("options") ?? "")
        .split("|")
        .filter((o) => PLAN_OPTIONS.has(o)) as ExplainRequest["options"][number][];
      const format = plan[1] === "+json" ? "json" : "text";
      const forMime = {
        json: "application/json",
        object: "application/vnd.pgrst.object+json",
        csv: "text/csv",
      }[inner.media];
      return {
        ...inner,
        explain: {
          format,
          options,
          mime: `application/vnd.pgrst.plan+${format}; for="${forMime}"${options.length ? `; options=${options.join("|")}` : ""}`,
        },
      };
    }
  }
  throw errors.mediaType(offered.map((o) => o.split(";")[0]?.trim() ?? o));
}

/**
 * The Range header, when it is `first-[last]` (PostgREST's `^([0-9]+)-([0-9]*)$`: no unit, no
 * spaces); any other is ignored. Reversed bounds are refused with the limits (topLevelPage).
 */
function parseRange(header: string | null): { from: number; to?: number } | undefined {
  const m = /^(\d{1,15})-(\d{0,15})$/.exec(header ?? "");
  if (!m) return undefined;
  return { from: Number(m[1]), to: m[2] ? Number(m[2]) : undefined };
}

// ---------------------------------------------------------------- the body

/** Content-Type -> what the body is; 415-like PGRST102 for anything else. */
function parseContentType(header: string | null, isCall: boolean): BodyType {
  const type = (header ?? "application/json").split(";")[0]?.trim().toLowerCase() ?? "";
  const byType: Record<string, BodyType> = {
    "application/json": "json",
    "text/csv": "csv",
    "application/x-www-form-urlencoded": "form",
  };
  const raw: Record<string, BodyType> = {
    "text/plain": "text",
    "text/xml": "xml",
    "application/octet-stream": "bytea",
  };
  const found = byType[type] ?? (isCall ? raw[type] : undefined);
  if (!found) throw errors.invalidBody(`Content-Type not acceptable: ${type}`);
  return found;
}

/** The payload as PostgREST takes it: objects (an array of them for bulk inserts), or raw text. */
function parsePayload(text: string, action: ApiRequest["action"], type: BodyType): unknown {
  if (type === "text" || type === "xml" || type === "bytea") return text;
  if (type === "form") return Object.fromEntries(new URLSearchParams(text));
  if (type === "csv") return csvRows(text);
  // only a function call takes an empty body (as no arguments)
  if (text === "" && action === "call") return {};
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw errors.invalidBody("Empty or invalid json");
  }
  // any other JSON value (a number, a string, true, null) is no rows, as PostgREST's
  // payloadAttributes reads it: an empty array
  if (body === null || typeof body !== "object") return [];
  return body;
}

/** A CSV body with a header line -> one object per line, strings ("NULL" is null). */
function csvRows(text: string): Record<string, string | null>[] {
  let records: string[][];
  try {
    records = parseCsv(text, { relax_column_count: false, skip_empty_lines: true });
  } catch (error) {
    throw errors.invalidBody(
      /Invalid Record Length/i.test(String(error))
        ? "All lines must have same number of fields"
        : String((error as Error).message),
    );
  }
  const [header = [], ...lines] = records;
  return lines.map((line) =>
    Object.fromEntries(header.map((h, i) => [h, line[i] === "NULL" ? null : (line[i] ?? null)])),
  );
}

function parseCookies(header: string | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? "").split(";")) {
    const i = part.indexOf("=");
    if (i > 0) out[part.slice(0, i).trim()] = part.slice(i + 1).trim();
  }
  return out;
}

// ---------------------------------------------------------------- the request

const RESERVED = new Set(["select", "columns", "on_conflict"]);
const EMBEDDABLE = new Set(["order", "limit", "offset", "and", "or"]);

export interface RawRequest {
  method: string;
  /** the path after /rest/v1, e.g. "/todos" or "/rpc/fn" */
  path: string;
  params: [string, string][];
  headers: Headers;
  /** the body's text; when absent (a caller that has none to give) no payload is read */
  body?: string;
}

export interface ParseConfig {
  /** the exposed schemas (config.toml [api] schemas), the first one the default; when absent the
   * profile is not checked and the default is "public" */
  schemas?: readonly string[];
}

interface ScopeBuilder {
  conditions: Condition[];
  order?: OrderTerm[];
  limit?: number;
  offset?: number;
}

function scope(scopes: Map<string, ScopeBuilder>, path: string[]): ScopeBuilder {
  const key = path.join(".");
  let s = scopes.get(key);
  if (!s) {
    s = { conditions: [] };
    scopes.set(key, s);
  }
  return s;
}

/** Splits `a.b.order` / `a.b.title->>x` into the embed path and the last part. */
function splitKey(key: string): { path: string[]; last: string } {
  const arrow = key.indexOf("->");
  const head = arrow === -1 ? key : key.slice(0, arrow);
  const tail = arrow === -1 ? "" : key.slice(arrow);
  const parts = head.split(".");
  const last = (parts.pop() ?? "") + tail;
  return { path: parts, last };
}

/** `a.b.col->x=op.value`: a filter on column `col` of the resource embedded at path a.b. */
function parseParamFilter(key: string, value: string): { path: string[]; condition: Filter } {
  const { path, last } = splitKey(key);
  const c = new Cursor(last, "tree path");
  const field = readField(c);
  if (!c.done) c.fail("end of input");
  return { path, condition: parseFilter(field, value) };
}

/** Reads a GET /rpc parameter as a filter too, keeping the error for when it turns out to be one. */
function argOrFilter(key: string, value: string): ArgOrFilter {
  try {
    const { path, condition } = parseParamFilter(key, value);
    return { key, value, filter: { scope: path.join("."), condition } };
  } catch (error) {
    if (!(error instanceof RestError)) throw error;
    return { key, value, filter: { error } };
  }
}

export function parseRequest(raw: RawRequest, config: ParseConfig = {}): ApiRequest {
  const method = raw.method.toUpperCase();
  if (!["GET", "HEAD", "POST", "PATCH", "DELETE", "PUT"].includes(method))
    throw errors.unsupportedMethod(method);
  const segments = raw.path.split("/").filter((s) => s !== "");
  let target: string;
  let isCall = false;
  if (segments.length === 1) target = decode(segments[0] as string);
  else if (segments.length === 2 && segments[0] === "rpc") {
    target = decode(segments[1] as string);
    isCall = true;
  } else throw errors.invalidPath();

  const readLike = method === "GET" || method === "HEAD";
  if (isCall && !["GET", "HEAD", "POST"].includes(method)) throw errors.invalidRpcMethod(method);
  const action: ApiRequest["action"] = isCall
    ? "call"
    : readLike
      ? "read"
      : method === "POST"
        ? "insert"
        : method === "PATCH"
          ? "update"
          : method === "PUT"
            ? "upsert"
            : "delete";

  const scopes = new Map<string, ScopeBuilder>();
  scope(scopes, []);
  const filterPairs: [string, string][] = [];
  let select: SelectItem[] = [{ type: "star" }];
  let selectGiven = false;
  let columns: string[] | undefined;
  let onConflict: string[] | undefined;

  for (const [key, value] of raw.params) {
    if (key === "select") {
      select = parseSelect(value);
      selectGiven = true;
      continue;
    }
    if (key === "columns") {
      // a set, as PostgREST's: a column named twice is one column
      columns = [...new Set(parseColumns(value, "columns parameter"))];
      continue;
    }
    if (key === "on_conflict") {
      onConflict = parseColumns(value, "on_conflict parameter");
      continue;
    }
    const { path, last } = splitKey(key);
    const bare = last.startsWith("not.") ? last.slice(4) : last;
    if (EMBEDDABLE.has(bare) && !key.includes("->")) {
      const s = scope(scopes, path);
      if (bare === "order" && bare === last) s.order = parseOrder(value);
      else if (bare === "limit" && bare === last) s.limit = readBound(path, key, value);
      else if (bare === "offset" && bare === last) s.offset = readBound(path, key, value);
      else if (bare === "and" || bare === "or")
        s.conditions.push(parseLogic(bare, last !== bare, value));
      else filterPairs.push([key, value]);
      continue;
    }
    if (RESERVED.has(key)) continue;
    filterPairs.push([key, value]);
  }

  // GET /rpc/fn?a=1: arguments or filters, decided by plan.ts; everywhere else they are filters
  const argsParams = isCall && readLike;
  const rawParams = argsParams ? filterPairs : [];
  const argsOrFilters = rawParams.map(([key, value]) => argOrFilter(key, value));
  if (!argsParams)
    for (const [key, value] of filterPairs) {
      const { path, condition } = parseParamFilter(key, value);
      scope(scopes, path).conditions.push(condition);
    }

  // the Range header is read for GET only (RFC 9110, as PostgREST): not for HEAD
  const range = method === "GET" ? parseRange(raw.headers.get("range")) : undefined;
  const root = scope(scopes, []);
  Object.assign(root, topLevelPage(root, range));
  const prefer = parsePreferences(raw.headers.get("prefer"));
  const { media, stripNulls, explain } = parseAccept(raw.headers.get("accept"));
  const profileHeader = readLike
    ? raw.headers.get("accept-profile")
    : raw.headers.get("content-profile");

  const profile = profileHeader ?? undefined;
  const schema = profile ?? (config.schemas ? (config.schemas[0] as string) : "public");
  if (config.schemas && !config.schemas.includes(schema))
    throw errors.invalidSchema(schema, [...config.schemas]);

  const hasBody = method !== "GET" && method !== "HEAD" && method !== "DELETE";
  const contentType = hasBody
    ? parseContentType(raw.headers.get("content-type"), isCall)
    : ("json" as const);
  const payload =
    hasBody && raw.body !== undefined ? parsePayload(raw.body, action, contentType) : undefined;

  const api: ApiRequest = {
    method: method as ApiRequest["method"],
    action,
    target,
    profile,
    schema,
    select,
    selectGiven,
    scopes,
    rawParams,
    argsOrFilters,
    columns,
    onConflict,
    prefer,
    media,
    stripNulls,
    explain,
    contentType,
    payload,
    cookies: parseCookies(raw.headers.get("cookie")),
    http: { method: raw.method, path: raw.path, headers: headerRecord(raw.headers) },
  };
  // the payload is left as JSON.parse made it: freezing each of its values would cost seconds for
  // a large body, and nothing changes it (planning hands it on, sql.ts only serializes it)
  deepFreeze({ ...api, payload: undefined });
  return Object.freeze(api);
}

/**
 * A limit or offset param: the root's as PostgREST reads them (topLevelPage decides), an
 * embedded resource's refused when negative.
 */
function readBound(path: string[], key: string, value: string): number | undefined {
  return path.length === 0 ? readInteger(value) : embeddedBound(key, value);
}

/**
 * Reads an HTTP request to `/rest/v1${path}` into an ApiRequest: the body's text is read only for
 * methods that carry one, then everything is parsed at once.
 */
export async function readRequest(
  request: Request,
  path: string,
  config: ParseConfig,
): Promise<ApiRequest> {
  const url = new URL(request.url);
  const method = request.method.toUpperCase();
  let body: string | undefined;
  if (method === "GET" || method === "HEAD" || method === "DELETE") body = undefined;
  else if (
    request.headers.get("content-type")?.toLowerCase().startsWith("application/octet-stream")
  )
    body = `\\x${Buffer.from(await request.arrayBuffer()).toString("hex")}`;
  else body = await request.text();
  return parseRequest(
    { method: request.method, path, params: [...url.searchParams], headers: request.headers, body },
    config,
  );
}

/**
 * Every header but Cookie (PostgREST's iHdrs leave it out: the cookies are request.cookies),
 * name -> value, in the order Headers iterates them (lowercase names, sorted).
 */
function headerRecord(headers: Headers): Record<string, string> {
  const record: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (name !== "cookie") record[name] = value;
  });
  return record;
}

/** Freezes plain objects, arrays and the values of Maps, so no later stage can change them. */
function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return value;
  if (value instanceof RestError) return value;
  if (value instanceof Map) {
    for (const v of value.values()) deepFreeze(v);
    return value;
  }
  for (const v of Object.values(value)) deepFreeze(v);
  return Object.freeze(value);
}

/**
 * A path segment's percent-escapes decoded as UTF-8, leniently as Wai's pathInfo: a byte that is
 * not UTF-8 becomes U+FFFD (so `/%FF` names a table that does not exist, PGRST205).
 */
function decode(segment: string) {
  const bytes = Buffer.from(
    segment.replace(/%([0-9A-Fa-f]{2})|[^%]+|%/g, (m, hex: string | undefined) =>
      hex ? String.fromCharCode(Number.parseInt(hex, 16)) : Buffer.from(m).toString("latin1"),
    ),
    "latin1",
  );
  return new TextDecoder().decode(bytes);
}

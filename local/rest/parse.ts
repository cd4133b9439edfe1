/**
 * URL + headers -> ApiRequest: the PostgREST request language, parsed without any knowledge of the
 * database. Pure: every failure is a RestError (PGRST1xx) with PostgREST's message layout.
 * Names are resolved against the schema cache later (plan.ts).
 */
import { errors, parseError, RestError } from "./errors.ts";

export type JsonStep = { arrow: "->" | "->>"; key: string | number };
export interface Field {
  name: string;
  json: JsonStep[];
}

export type SelectItem =
  | { type: "star" }
  | { type: "column"; field: Field; alias?: string; cast?: string }
  | {
      type: "embed";
      name: string;
      alias?: string;
      hint?: string;
      join: "inner" | "left";
      spread: boolean;
      select: SelectItem[];
    };

export const OPERATORS = [
  "eq",
  "neq",
  "gt",
  "gte",
  "lt",
  "lte",
  "like",
  "ilike",
  "match",
  "imatch",
  "in",
  "is",
  "isdistinct",
  "cs",
  "cd",
  "ov",
  "sl",
  "sr",
  "nxr",
  "nxl",
  "adj",
  "fts",
  "plfts",
  "phfts",
  "wfts",
] as const;
export type Operator = (typeof OPERATORS)[number];
const QUANTIFIABLE = new Set(["eq", "gt", "gte", "lt", "lte", "like", "ilike", "match", "imatch"]);
const FTS = new Set(["fts", "plfts", "phfts", "wfts"]);

export type FilterValue =
  | { kind: "scalar"; value: string }
  | { kind: "list"; values: string[] }
  | { kind: "is"; value: "null" | "not_null" | "true" | "false" | "unknown" }
  | { kind: "fts"; language?: string; query: string };

export interface Filter {
  type: "filter";
  field: Field;
  negate: boolean;
  op: Operator;
  quantifier?: "any" | "all";
  value: FilterValue;
}
export interface LogicTree {
  type: "logic";
  op: "and" | "or";
  negate: boolean;
  children: Condition[];
}
export type Condition = Filter | LogicTree;

export interface OrderTerm {
  /** set when ordering by a column of an embedded to-one resource: order=author(name) */
  relation?: string;
  field: Field;
  direction?: "asc" | "desc";
  nulls?: "first" | "last";
}

/** Everything scoped to one level of the select tree; the key is the embed path joined by ".". */
export interface Scoped {
  conditions: Condition[];
  order?: OrderTerm[];
  limit?: number;
  offset?: number;
}

export interface Preferences {
  return?: "minimal" | "headers-only" | "representation";
  count?: "exact" | "planned" | "estimated";
  resolution?: "merge-duplicates" | "ignore-duplicates";
  missing?: "default" | "null";
  tx?: "commit" | "rollback";
  handling?: "strict" | "lenient";
  maxAffected?: number;
  params?: "single-object";
  invalid: string[];
}

export type MediaType = "json" | "object" | "csv";

export interface ApiRequest {
  method: "GET" | "HEAD" | "POST" | "PATCH" | "DELETE" | "PUT";
  action: "read" | "insert" | "update" | "delete" | "upsert" | "call";
  /** the table/view name, or the function name for action "call" */
  target: string;
  /** requested schema (Accept-Profile / Content-Profile), undefined for the default */
  profile?: string;
  select: SelectItem[];
  selectGiven: boolean;
  scopes: Map<string, Scoped>;
  /** raw non-reserved params, for GET/HEAD on functions (arguments vs filters decided later) */
  rawParams: [string, string][];
  columns?: string[];
  onConflict?: string[];
  prefer: Preferences;
  media: MediaType;
  stripNulls: boolean;
  range?: { from: number; to?: number };
}

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
    if (c.eat(")")) {
      if (!hint && ["count", "sum", "avg", "max", "min"].includes(name) && join === "left")
        throw aggregatesNotAllowed();
      return { type: "embed", name, alias, hint, join, spread, select: [] };
    }
    const select = readForest(c, depth + 1);
    c.expect(")", '")" or ","');
    return { type: "embed", name, alias, hint, join, spread, select };
  }
  if (spread) c.fail('"(" (spread needs an embedded resource)');
  c.pos = startName;
  const field = readField(c);
  if (c.startsWith(".") && /^\.(count|sum|avg|max|min)\(\)/.test(c.input.slice(c.pos)))
    throw aggregatesNotAllowed();
  let cast: string | undefined;
  if (c.eat("::")) cast = readCast(c);
  return { type: "column", field, alias, cast };
}

function aggregatesNotAllowed() {
  return new RestError(400, "PGRST123", "Use of aggregate functions is not allowed");
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
  if (!op || !(OPERATORS as readonly string[]).includes(op))
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
    const term: OrderTerm = { relation, field };
    while (c.eat(".")) {
      if (c.eat("asc")) term.direction = "asc";
      else if (c.eat("desc")) term.direction = "desc";
      else if (c.eat("nullsfirst")) term.nulls = "first";
      else if (c.eat("nullslast")) term.nulls = "last";
      else c.fail('"asc", "desc", "nullsfirst" or "nullslast"');
    }
    terms.push(term);
    if (c.done) return terms;
    c.expect(",", '"," or end of input');
  }
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

function parseNonNegative(key: string, value: string): number {
  if (!/^\d{1,15}$/.test(value))
    throw parseError(
      key.split(".").pop() === "limit" ? "limit parameter" : "offset parameter",
      value,
      1,
      "expecting a non-negative integer",
    );
  return Number(value);
}

// ---------------------------------------------------------------- headers

export function parsePreferences(header: string | null): Preferences {
  const prefer: Preferences = { invalid: [] };
  if (!header) return prefer;
  for (const part of header.split(",")) {
    const p = part.trim();
    if (!p) continue;
    const [k, v = ""] = p.split("=", 2).map((s) => s.trim()) as [string, string?];
    if (k === "return" && ["minimal", "headers-only", "representation"].includes(v))
      prefer.return = v as Preferences["return"];
    else if (k === "count" && ["exact", "planned", "estimated"].includes(v))
      prefer.count = v as Preferences["count"];
    else if (k === "resolution" && ["merge-duplicates", "ignore-duplicates"].includes(v))
      prefer.resolution = v as Preferences["resolution"];
    else if (k === "missing" && ["default", "null"].includes(v))
      prefer.missing = v as Preferences["missing"];
    else if (k === "tx" && ["commit", "rollback"].includes(v)) prefer.tx = v as Preferences["tx"];
    else if (k === "handling" && ["strict", "lenient"].includes(v))
      prefer.handling = v as Preferences["handling"];
    else if (k === "max-affected" && /^\d{1,15}$/.test(v)) prefer.maxAffected = Number(v);
    else if (k === "params" && v === "single-object") prefer.params = "single-object";
    else if (k === "timezone") {
      /* accepted, ignored */
    } else prefer.invalid.push(p);
  }
  if (prefer.handling === "strict" && prefer.invalid.length > 0)
    throw errors.invalidPreferences(prefer.invalid);
  return prefer;
}

export function parseAccept(header: string | null): { media: MediaType; stripNulls: boolean } {
  if (!header || header.trim() === "") return { media: "json", stripNulls: false };
  const offered = header.split(",").map((s) => s.trim());
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
  }
  throw errors.mediaType(offered.map((o) => o.split(";")[0]?.trim() ?? o));
}

function parseRange(header: string | null): ApiRequest["range"] {
  if (!header) return undefined;
  const m = /^\s*(?:items=)?(\d{1,15})-(\d{0,15})\s*$/.exec(header);
  if (!m) return undefined;
  const from = Number(m[1]);
  const to = m[2] ? Number(m[2]) : undefined;
  if (to !== undefined && to < from)
    throw errors.invalidRange(
      "The lower boundary must be lower than or equal to the upper boundary in the Range header.",
    );
  return { from, to };
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
}

function scope(scopes: Map<string, Scoped>, path: string[]): Scoped {
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

export function parseFilterParams(pairs: [string, string][], scopes: Map<string, Scoped>) {
  for (const [key, value] of pairs) {
    const { path, last } = splitKey(key);
    const c = new Cursor(last, "tree path");
    const field = readField(c);
    if (!c.done) c.fail("end of input");
    scope(scopes, path).conditions.push(parseFilter(field, value));
  }
}

export function parseRequest(raw: RawRequest): ApiRequest {
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

  const scopes = new Map<string, Scoped>();
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
      columns = parseColumns(value, "columns parameter");
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
      else if (bare === "limit" && bare === last) s.limit = parseNonNegative(key, value);
      else if (bare === "offset" && bare === last) s.offset = parseNonNegative(key, value);
      else if (bare === "and" || bare === "or")
        s.conditions.push(parseLogic(bare, last !== bare, value));
      else filterPairs.push([key, value]);
      continue;
    }
    if (RESERVED.has(key)) continue;
    filterPairs.push([key, value]);
  }

  const rawParams = isCall && readLike ? filterPairs : [];
  if (!(isCall && readLike)) parseFilterParams(filterPairs, scopes);

  const prefer = parsePreferences(raw.headers.get("prefer"));
  const { media, stripNulls } = parseAccept(raw.headers.get("accept"));
  const profileHeader = readLike
    ? raw.headers.get("accept-profile")
    : raw.headers.get("content-profile");

  return {
    method: method as ApiRequest["method"],
    action,
    target,
    profile: profileHeader ?? undefined,
    select,
    selectGiven,
    scopes,
    rawParams,
    columns,
    onConflict,
    prefer,
    media,
    stripNulls,
    range: readLike ? parseRange(raw.headers.get("range")) : undefined,
  };
}

function decode(s: string) {
  try {
    return decodeURIComponent(s);
  } catch {
    throw errors.invalidPath();
  }
}

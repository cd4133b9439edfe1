/**
 * The ApiRequest: one HTTP request to /rest/v1, read once by parse.ts and handed to plan.ts as it
 * is. Types only; every field is read-only (parse.ts also freezes it), so no later stage can
 * change what was asked.
 */
import type { RestError } from "./errors.ts";

export type JsonStep = { readonly arrow: "->" | "->>"; readonly key: string | number };
export interface Field {
  readonly name: string;
  readonly json: readonly JsonStep[];
}

/** `col.sum()`, `count()` (field `*`), with an optional cast of the result: `col.sum()::int` */
export interface Aggregate {
  readonly fn: "count" | "sum" | "avg" | "max" | "min";
  readonly cast?: string;
}

export type SelectItem =
  | { readonly type: "star" }
  | {
      readonly type: "column";
      readonly field: Field;
      readonly alias?: string;
      readonly cast?: string;
      readonly aggregate?: Aggregate;
    }
  | {
      readonly type: "embed";
      readonly name: string;
      readonly alias?: string;
      readonly hint?: string;
      readonly join: "inner" | "left";
      readonly spread: boolean;
      readonly select: readonly SelectItem[];
    };

export type Operator =
  | "eq"
  | "neq"
  | "gt"
  | "gte"
  | "lt"
  | "lte"
  | "like"
  | "ilike"
  | "match"
  | "imatch"
  | "in"
  | "is"
  | "isdistinct"
  | "cs"
  | "cd"
  | "ov"
  | "sl"
  | "sr"
  | "nxr"
  | "nxl"
  | "adj"
  | "fts"
  | "plfts"
  | "phfts"
  | "wfts";

export type FilterValue =
  | { readonly kind: "scalar"; readonly value: string }
  | { readonly kind: "list"; readonly values: readonly string[] }
  | { readonly kind: "is"; readonly value: "null" | "not_null" | "true" | "false" | "unknown" }
  | { readonly kind: "fts"; readonly language?: string; readonly query: string };

export interface Filter {
  readonly type: "filter";
  readonly field: Field;
  readonly negate: boolean;
  readonly op: Operator;
  readonly quantifier?: "any" | "all";
  readonly value: FilterValue;
}
export interface LogicTree {
  readonly type: "logic";
  readonly op: "and" | "or";
  readonly negate: boolean;
  readonly children: readonly Condition[];
}
export type Condition = Filter | LogicTree;

export interface OrderTerm {
  /** set when ordering by a column of an embedded to-one resource: order=author(name) */
  readonly relation?: string;
  readonly field: Field;
  readonly direction?: "asc" | "desc";
  readonly nulls?: "first" | "last";
}

/** Everything scoped to one level of the select tree; the key is the embed path joined by ".". */
export interface Scoped {
  readonly conditions: readonly Condition[];
  readonly order?: readonly OrderTerm[];
  /** the root's: after the Range header (GET), as PostgREST's top-level range */
  readonly limit?: number;
  readonly offset?: number;
}

/**
 * A query parameter of GET/HEAD /rpc/fn that is not reserved: a function argument if the function
 * has a parameter of that name, a filter otherwise. Only the schema cache knows which, so the
 * parser reads it both ways and planning picks one: `filter` is the parameter read as a filter on
 * the embed path `scope`, or the PGRST100 that reading raises (thrown only if it is a filter).
 */
export interface ArgOrFilter {
  readonly key: string;
  readonly value: string;
  readonly filter:
    | { readonly scope: string; readonly condition: Condition }
    | { readonly error: RestError };
}

/** The Prefer header as asked, the first of each kind (see parsePreferences). */
export interface Preferences {
  readonly return?: "minimal" | "headers-only" | "representation";
  readonly count?: "exact" | "planned" | "estimated";
  readonly resolution?: "merge-duplicates" | "ignore-duplicates";
  readonly missing?: "default" | "null";
  /** honoured only where the database's db-tx-end allows an override (the plan decides) */
  readonly tx?: "commit" | "rollback";
  readonly handling?: "strict" | "lenient";
  /** the first `timezone=` value; honoured only if the database knows it (the plan decides) */
  readonly timezone?: string;
  readonly maxAffected?: number;
  /** the entries PostgREST does not accept, in order; `timezone=` ones included (see timezone) */
  readonly invalid: readonly string[];
}

/**
 * What the body is, from Content-Type: JSON (the default), CSV or form fields (rows or named
 * arguments), or for functions a single text, xml or bytea value.
 */
export type BodyType = "json" | "csv" | "form" | "text" | "xml" | "bytea";

/** What the Accept header asked for: a JSON array, one JSON object, or CSV. */
export type MediaType = "json" | "object" | "csv";

/**
 * Accept: application/vnd.pgrst.plan[+json|+text]; for="…"; options=analyze|verbose|…: the
 * execution plan of the statement that would answer `for` (answered only with db-plan-enabled).
 */
export interface ExplainRequest {
  readonly format: "json" | "text";
  readonly options: readonly ("analyze" | "verbose" | "settings" | "buffers" | "wal")[];
  /** the media type as PostgREST names it, for the Content-Type and PGRST107 */
  readonly mime: string;
}

export interface ApiRequest {
  readonly method: "GET" | "HEAD" | "POST" | "PATCH" | "DELETE" | "PUT";
  readonly action: "read" | "insert" | "update" | "delete" | "upsert" | "call";
  /** the table/view name, or the function name for action "call" */
  readonly target: string;
  /** requested schema (Accept-Profile / Content-Profile), undefined for the default */
  readonly profile?: string;
  /** the schema the request is for: the profile, or the first exposed schema */
  readonly schema: string;
  readonly select: readonly SelectItem[];
  readonly selectGiven: boolean;
  readonly scopes: ReadonlyMap<string, Scoped>;
  /** raw non-reserved params, for GET/HEAD on functions (arguments vs filters decided later) */
  readonly rawParams: readonly (readonly [string, string])[];
  /** the same params, each also read as a filter (see ArgOrFilter) */
  readonly argsOrFilters: readonly ArgOrFilter[];
  readonly columns?: readonly string[];
  readonly onConflict?: readonly string[];
  readonly prefer: Preferences;
  readonly media: MediaType;
  readonly stripNulls: boolean;
  readonly explain?: ExplainRequest;
  /** the Content-Type of the body */
  readonly contentType: BodyType;
  /**
   * the body: objects or an array of them (JSON, CSV and form bodies alike), or the raw text of a
   * text/xml/bytea body (bytea as `\x…` hex); undefined for GET/HEAD/DELETE. Not frozen, unlike
   * the rest (freezing a large body value by value costs seconds); no stage changes it.
   */
  readonly payload?: unknown;
  /** the Cookie header, name -> value */
  readonly cookies: Readonly<Record<string, string>>;
  /**
   * the request as the transaction's request.* settings show it (execute.ts), read here so that no
   * later stage reads the HTTP request: the method as sent, the path below /rest/v1, every header
   * (lowercase names, as Headers iterates them)
   */
  readonly http: {
    readonly method: string;
    readonly path: string;
    readonly headers: Readonly<Record<string, string>>;
  };
}

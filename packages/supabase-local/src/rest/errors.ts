/**
 * Every error the data API answers with, built in one place. Codes, statuses and messages copy
 * PostgREST (src/library/PostgREST/Error.hs): PGRST1xx request errors, PGRST2xx schema cache
 * errors, PGRST3xx JWT errors, and Postgres SQLSTATEs passed through with PostgREST's HTTP mapping.
 */
export interface RestErrorBody {
  code: string;
  message: string;
  details: string | null | unknown;
  hint: string | null;
}

export class RestError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;
  readonly hint: string | null;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    code: string,
    message: string,
    details: unknown = null,
    hint: string | null = null,
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "RestError";
    this.status = status;
    this.code = code;
    this.details = details;
    this.hint = hint;
    this.headers = headers;
  }

  body(): RestErrorBody {
    return { code: this.code, details: this.details, hint: this.hint, message: this.message };
  }
}

/** PGRST100: a query parameter that does not parse. Mirrors Parsec's message layout. */
export function parseError(what: string, input: string, column: number, details: string) {
  return new RestError(
    400,
    "PGRST100",
    `"failed to parse ${what} (${input})" (line 1, column ${column})`,
    details,
  );
}

export const errors = {
  invalidBody: (message: string) => new RestError(400, "PGRST102", message),
  invalidRange: (details: string) =>
    new RestError(416, "PGRST103", "Requested range not satisfiable", details),
  invalidSchema: (schema: string, exposed: string[]) =>
    new RestError(
      406,
      "PGRST106",
      `Invalid schema: ${schema}`,
      null,
      `Only the following schemas are exposed: ${exposed.join(", ")}`,
    ),
  mediaType: (types: string[]) =>
    new RestError(406, "PGRST107", `None of these media types are available: ${types.join(", ")}`),
  notEmbedded: (resource: string) =>
    new RestError(
      400,
      "PGRST108",
      `'${resource}' is not an embedded resource in this request`,
      null,
      `Verify that '${resource}' is included in the 'select' query parameter.`,
    ),
  singularity: (n: number) =>
    new RestError(
      406,
      "PGRST116",
      "Cannot coerce the result to a single JSON object",
      `The result contains ${n} rows`,
    ),
  unsupportedMethod: (method: string) =>
    new RestError(405, "PGRST117", `Unsupported HTTP method: ${method}`),
  invalidRpcMethod: (method: string) =>
    new RestError(405, "PGRST101", `Cannot use the ${method} method on RPC`),
  relatedOrderNotToOne: (origin: string, target: string) =>
    new RestError(
      400,
      "PGRST118",
      `A related order on '${target}' is not possible`,
      `'${origin}' and '${target}' do not form a many-to-one or one-to-one relationship`,
    ),
  unacceptableFilter: (target: string) =>
    new RestError(400, "PGRST120", `Bad operator on the '${target}' embedded resource`),
  invalidPreferences: (prefs: string[]) =>
    new RestError(
      400,
      "PGRST122",
      "Invalid preferences given with handling=strict",
      `Invalid preferences: ${prefs.join(", ")}`,
    ),
  maxAffected: (n: number) =>
    new RestError(
      400,
      "PGRST124",
      "Query result exceeds max-affected preference constraint",
      `The query affects ${n} rows`,
    ),
  maxAffectedNotSetof: () =>
    new RestError(
      400,
      "PGRST128",
      "Function must return SETOF or TABLE when max-affected preference is used with handling=strict",
    ),
  aggregatesNotAllowed: () =>
    new RestError(400, "PGRST123", "Use of aggregate functions is not allowed"),
  invalidPath: () => new RestError(404, "PGRST125", "Invalid path specified in request URL"),
  notImplemented: (details: string) =>
    new RestError(400, "PGRST127", "Feature not implemented", details),
  noRelationship: (
    parent: string,
    child: string,
    hint: string | null,
    schema: string,
    suggestion: string | null = null,
  ) =>
    new RestError(
      400,
      "PGRST200",
      `Could not find a relationship between '${parent}' and '${child}' in the schema cache`,
      `Searched for a foreign key relationship between '${parent}' and '${child}${
        hint ? `' using the hint '${hint}` : ""
      }' in the schema '${schema}', but no matches were found.`,
      suggestion,
    ),
  ambiguousRelationship: (
    parent: string,
    child: string,
    details: { cardinality: string; embedding: string; relationship: string }[],
    hints: string[],
  ) =>
    new RestError(
      300,
      "PGRST201",
      `Could not embed because more than one relationship was found for '${parent}' and '${child}'`,
      details,
      `Try changing '${child}' to one of the following: ${hints.join(", ")}. Find the desired relationship in the 'details' key.`,
    ),
  /**
   * PGRST202. `body`: how a POST sent its arguments (json, or a single text/xml/bytea value),
   * undefined for GET/HEAD; `hint`: the "Perhaps you meant …" suggestion, if any.
   */
  noFunction: (
    schema: string,
    name: string,
    args: string[],
    body: "json" | "text" | "xml" | "bytea" | "other" | undefined,
    hint: string | null,
  ) => {
    const fn = `${schema}.${name}`;
    const single = body === "text" || body === "xml" || body === "bytea";
    const listed = args.length === 0 ? " without parameters" : `(${args.join(", ")})`;
    const searched =
      args.length === 0
        ? " without parameters"
        : ` with parameter${args.length > 1 ? "s" : ""} ${args.join(", ")}`;
    return new RestError(
      404,
      "PGRST202",
      `Could not find the function ${fn}${single ? "" : listed} in the schema cache`,
      `Searched for the function ${fn}${
        single
          ? ` with a single unnamed ${body} parameter`
          : body === "json"
            ? `${searched} or with a single unnamed json/jsonb parameter`
            : searched
      }, but no matches were found in the schema cache.`,
      single ? null : hint,
    );
  },
  ambiguousFunction: (candidates: { schema: string; name: string; args: [string, string][] }[]) =>
    new RestError(
      300,
      "PGRST203",
      `Could not choose the best candidate function between: ${candidates
        .map((c) => `${c.schema}.${c.name}(${c.args.map(([n, t]) => `${n} => ${t}`).join(", ")})`)
        .join(", ")}`,
      null,
      "Try renaming the parameters or the function itself in the database so function overloading can be resolved",
    ),
  columnNotFound: (relation: string, column: string) =>
    new RestError(
      400,
      "PGRST204",
      `Could not find the '${column}' column of '${relation}' in the schema cache`,
    ),
  tableNotFound: (schema: string, name: string, suggestion: string | null = null) =>
    new RestError(
      404,
      "PGRST205",
      `Could not find the table '${schema}.${name}' in the schema cache`,
      null,
      suggestion ? `Perhaps you meant the table '${schema}.${suggestion}'` : null,
    ),
  jwt: (message: string, details?: string) => {
    // a JWT whose role is not a database role: PostgREST's SET ROLE fails with 22023 -> 401
    if (/^role ".*" does not exist$/.test(message)) return new RestError(401, "22023", message);
    const expired = /expired/i.test(message);
    const text = expired ? "JWT expired" : message || "JWT cryptographic operation failed";
    return new RestError(401, expired ? "PGRST303" : "PGRST301", text, details ?? null, null, {
      "WWW-Authenticate": `Bearer error="invalid_token", error_description=${JSON.stringify(text)}`,
    });
  },
};

/** HTTP status for a Postgres SQLSTATE, as PostgREST's mapSQLtoHTTP decides it. */
export function statusForSqlState(code: string, message: string, authenticated: boolean): number {
  const exact: Record<string, number> = {
    "23503": 409,
    "23505": 409,
    "25006": 405,
    "53400": 500,
    "57P01": 503,
    P0001: 400,
    "42P01": 404,
    "42P17": 500,
  };
  if (code in exact) return exact[code] as number;
  if (code === "21000") return message.endsWith("requires a WHERE clause") ? 400 : 500;
  if (code === "22023")
    return message.startsWith("role") && message.endsWith("does not exist") ? 401 : 400;
  if (code === "42883") return 404;
  if (code === "42501") return authenticated ? 403 : 401;
  // PTxyz: the status xyz, whatever it is (PT999 is 999); not a number, 500
  if (code.startsWith("PT")) return /^\d+$/.test(code.slice(2)) ? Number(code.slice(2)) : 500;
  const prefix = code.slice(0, 2);
  const byClass: Record<string, number> = {
    "08": 503,
    "09": 500,
    "0L": 403,
    "0P": 403,
    "25": 500,
    "28": 403,
    "2D": 500,
    "38": 500,
    "39": 500,
    "3B": 500,
    "40": 500,
    "53": 503,
    "54": 500,
    "55": 500,
    "57": 500,
    "58": 500,
    F0: 500,
    HV: 500,
    P0: 500,
    XX: 500,
  };
  return byClass[prefix] ?? 400;
}

interface PgLikeError {
  code?: string;
  message?: string;
  detail?: string;
  hint?: string;
}

const RAISE_PARSE = "Could not parse JSON in the \"RAISE SQLSTATE 'PGRST'\" error";
const MESSAGE_HINT =
  "MESSAGE must be a JSON object with obligatory keys: 'code', 'message' and optional keys: 'details', 'hint'.";
const DETAIL_HINT =
  "DETAIL must be a JSON object with obligatory keys: 'status', 'headers' and optional key: 'status_text'.";

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
/** An optional text key of PostgREST's RAISE PGRST JSON (absent or null, else a string). */
const optionalString = (v: unknown) => v === undefined || v === null || typeof v === "string";
function parseJson(text: string | undefined): unknown {
  try {
    return text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * `RAISE SQLSTATE 'PGRST' USING message = '{"code":…,"message":…}', detail = '{"status":…,
 * "headers":{…}}'`: the function chooses the whole answer (PostgREST's parseRaisePGRST); a
 * MESSAGE or DETAIL that is not such JSON is PGRST121.
 */
function raisedResponse(pg: PgLikeError): RestError {
  const m = parseJson(pg.message);
  if (
    !isObject(m) ||
    typeof m.code !== "string" ||
    typeof m.message !== "string" ||
    !optionalString(m.details) ||
    !optionalString(m.hint)
  )
    return new RestError(
      500,
      "PGRST121",
      RAISE_PARSE,
      `Invalid JSON value for MESSAGE: '${pg.message ?? ""}'`,
      MESSAGE_HINT,
    );
  if (pg.detail === undefined)
    return new RestError(
      500,
      "PGRST121",
      RAISE_PARSE,
      "DETAIL is missing in the RAISE statement",
      DETAIL_HINT,
    );
  const d = parseJson(pg.detail);
  if (
    !isObject(d) ||
    !Number.isSafeInteger(d.status) ||
    !isObject(d.headers) ||
    !Object.values(d.headers).every((v) => typeof v === "string") ||
    !optionalString(d.status_text)
  )
    return new RestError(
      500,
      "PGRST121",
      RAISE_PARSE,
      `Invalid JSON value for DETAIL: '${pg.detail}'`,
      DETAIL_HINT,
    );
  const headers = Object.fromEntries(Object.entries(d.headers).map(([k, v]) => [k, String(v)]));
  return new RestError(
    d.status as number,
    m.code,
    m.message,
    typeof m.details === "string" ? m.details : null,
    typeof m.hint === "string" ? m.hint : null,
    headers,
  );
}

/** Turns whatever the database threw into PostgREST's answer. */
export function fromDatabaseError(error: unknown, authenticated: boolean): RestError {
  if (error instanceof RestError) return error;
  const pg = (error ?? {}) as PgLikeError;
  if (pg.code === "PGRST") return raisedResponse(pg);
  if (typeof pg.code === "string" && /^[0-9A-Z]{5}$/.test(pg.code)) {
    const message = pg.message ?? "";
    const status = statusForSqlState(pg.code, message, authenticated);
    return new RestError(
      status,
      pg.code,
      message,
      pg.detail ?? null,
      pg.hint ?? null,
      // PostgREST adds this to every database error it answers with 401 (42501 as anon, PT401…)
      status === 401 ? { "WWW-Authenticate": "Bearer" } : {},
    );
  }
  // A value too deep to write out as a parameter (JSON nested thousands deep): Postgres's own
  // answer to a body it cannot parse that deep, which PostgREST passes on (class 54: 500).
  if (error instanceof RangeError && /call stack/i.test(error.message)) {
    return new RestError(500, "54001", "stack depth limit exceeded", null, STACK_DEPTH_HINT);
  }
  return new RestError(500, "PGRSTX00", error instanceof Error ? error.message : String(error));
}

const STACK_DEPTH_HINT =
  'Increase the configuration parameter "max_stack_depth" (currently 2048kB), after ensuring the platform\'s stack depth limit is adequate.';

/**
 * The HTTP answer for an error. PostgREST sends any status a function chooses (`PTxyz`, or the
 * `status` of RAISE SQLSTATE 'PGRST'), even one outside HTTP's range, and no body for 1xx, 204
 * and 304 (Warp's rule). A fetch Response holds 200-599 only, so a status outside it is answered
 * 500 with the same body (a deliberate difference, src/rest/README.md); a status that cannot carry
 * a body (204, 205, 304) is answered without one.
 */
export function errorResponse(e: RestError): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(e.headers)) {
    try {
      headers.set(name, value);
    } catch {
      // a header a function raised that HTTP cannot carry (a space in its name…) is left out
    }
  }
  headers.set("Content-Type", "application/json; charset=utf-8");
  const status = Number.isInteger(e.status) && e.status >= 200 && e.status <= 599 ? e.status : 500;
  const body = [204, 205, 304].includes(status) ? null : JSON.stringify(e.body());
  return new Response(body, { status, headers });
}

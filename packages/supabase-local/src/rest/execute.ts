/**
 * Runs a plan's query the way PostgREST does: one transaction per request, the JWT's role switched
 * in with set_config('role'), request.jwt.claims and request.* settings for auth.uid()/auth.jwt()
 * and policies, read-only for GET/HEAD; then shapes the HTTP response (JSON, object, CSV, ranges)
 * as the plan says. Reads no HTTP request: the caller's identity and the request's method, path
 * and headers for the transaction settings come in its context (parse.ts read them).
 */
import type { PGlite, Transaction } from "@electric-sql/pglite";
import { errors, RestError } from "./errors.ts";
import type { Plan, ResponsePlan } from "./plan.ts";
import { ident, type Query, UPDATED_SQL } from "./sql.ts";

/** The roles a request may switch to (PostgREST: db-anon-role, and the roles a JWT may name). */
export const API_ROLES: readonly string[] = ["anon", "authenticated", "service_role"];

/** pg_type's oid of json: the type of EXPLAIN (FORMAT JSON)'s rows */
const JSON_OID = 114;

/** Who is calling and the request's own metadata, for the transaction's request.* settings. */
export interface RequestContext {
  /** db-pre-request: the function called after the settings, before the statement */
  preRequest?: string;
  /** the role's own settings (ALTER ROLE … SET), as the configuration last read them (db-config.ts) */
  roleSettings: readonly { name: string; value: string }[];
  /** search_path: the request's schema, then db-extra-search-path */
  searchPath: readonly string[];
  claims: Record<string, unknown> & { role: string };
  method: string;
  path: string;
  headers: Readonly<Record<string, string>>;
  cookies: Readonly<Record<string, string>>;
}

interface Row {
  body: string | null;
  n: number;
  total?: number | null;
}

const CONTENT_TYPES = {
  json: "application/json; charset=utf-8",
  object: "application/vnd.pgrst.object+json; charset=utf-8",
  csv: "text/csv; charset=utf-8",
};

export async function executePlan(
  db: PGlite,
  plan: Plan,
  query: Query,
  ctx: RequestContext,
): Promise<Response> {
  const role = String(ctx.claims.role);
  if (!API_ROLES.includes(role))
    throw new RestError(
      role === "anon" ? 401 : 403,
      "42501",
      `permission denied to set role "${role}"`,
    );
  const { readOnly, rollback, response: shape } = plan;

  return db.transaction(async (tx) => {
    await setRequestSettings(tx, ctx, readOnly === true, plan.timezone);
    if (ctx.preRequest) await tx.query(`SELECT ${qualifiedName(ctx.preRequest)}()`);
    if (query.explain && shape.explain) {
      // the plan: EXPLAIN's rows as Postgres printed them (a JSON plan is one row, kept as its
      // text), each ended by a newline, as PostgREST sends them
      const explained = await tx.query<{ "QUERY PLAN": string }>(query.text, query.params, {
        parsers: { [JSON_OID]: (text) => text },
      });
      const text = explained.rows.map((r) => `${r["QUERY PLAN"]}\n`).join("");
      if (rollback) await rollBack(tx);
      return new Response(text, {
        status: 200,
        headers: { "Content-Type": `${shape.explain.mime}; charset=utf-8` },
      });
    }
    const result = await tx.query<Row>(query.text, query.params);
    let row: Row;
    if (query.returnsBody) row = result.rows[0] ?? { body: "[]", n: 0 };
    else row = { body: null, n: result.affectedRows ?? 0 };
    if (query.countEstimate) {
      const c = query.countEstimate;
      const explained = await tx.query<{ "QUERY PLAN": [{ Plan: { "Plan Rows": number } }] }>(
        `EXPLAIN (FORMAT JSON) ${c.text}`,
        c.params,
      );
      row.total = explained.rows[0]?.["QUERY PLAN"][0].Plan["Plan Rows"] ?? null;
    }
    if (shape.maxAffected !== undefined && row.n > shape.maxAffected)
      throw errors.maxAffected(row.n);
    if (shape.exactlyOne && row.n !== 1) throw errors.singularity(row.n);
    let answer = shape;
    if (shape.status.kind === "write" && shape.status.mergeStatus) {
      const counted = await tx.query<{ updated: number }>(UPDATED_SQL);
      const inserted = shape.status.mergeStatus.offered - (counted.rows[0]?.updated ?? 0);
      const status = inserted > 0 ? 201 : 200;
      answer = { ...shape, status: { ...shape.status, status, emptyStatus: status } };
    }
    const response = respond(answer, row, query.csv === true);
    if (plan.rollback) await rollBack(tx);
    return response;
  });
}

/**
 * Ends the transaction with a rollback, as PostgREST does for db-tx-end/tx=rollback: deferred
 * constraints are checked first (SET CONSTRAINTS ALL IMMEDIATE), so a write that would fail at
 * commit fails here too.
 */
async function rollBack(tx: Transaction) {
  await tx.query("SET CONSTRAINTS ALL IMMEDIATE");
  await tx.rollback();
}

/**
 * Puts the request in force for its transaction, in one statement (one trip to the database
 * thread), in PostgREST's order:
 * - read-only, for a read (`SET TRANSACTION READ ONLY`);
 * - the role's own settings (ALTER ROLE … SET, such as the statement_timeout of anon and
 *   authenticated), as the configuration last read them (db-config.ts), as PostgREST applies them;
 * - the request's: role, JWT claims, method, path, headers, cookies, search_path, and the
 *   timezone of Prefer: timezone= (a known one: the plan checked it).
 * Postgres evaluates a select list from left to right.
 */
async function setRequestSettings(
  tx: Transaction,
  ctx: RequestContext,
  readOnly: boolean,
  timezone: string | undefined,
) {
  const claims = ctx.claims;
  const params: string[] = [
    String(claims.role),
    JSON.stringify(claims),
    typeof claims.sub === "string" ? claims.sub : "",
    ctx.method,
    ctx.path,
    JSON.stringify(ctx.headers),
    JSON.stringify(ctx.cookies),
    [...new Set(ctx.searchPath)].map(ident).join(", "),
  ];
  if (timezone !== undefined) params.push(timezone);
  const roleSettings = ctx.roleSettings.map(({ name, value }) => {
    params.push(name, value);
    return `set_config($${params.length - 1}, $${params.length}, true), `;
  });
  await tx.query(
    `SELECT ${readOnly ? "set_config('transaction_read_only', 'on', true), " : ""}${roleSettings.join("")}
            set_config('role', $1, true), set_config('request.jwt.claims', $2, true),
            set_config('request.jwt.claim.role', $1, true), set_config('request.jwt.claim.sub', $3, true),
            set_config('request.method', $4, true), set_config('request.path', $5, true),
            set_config('request.headers', $6, true), set_config('request.cookies', $7, true),
            set_config('search_path', $8, true)${timezone !== undefined ? ", set_config('timezone', $9, true)" : ""}`,
    params,
  );
}

/** `schema.fn` or `fn` (PostgREST's toQi: split at the first dot), quoted. */
function qualifiedName(name: string): string {
  const dot = name.indexOf(".");
  return dot === -1 ? ident(name) : `${ident(name.slice(0, dot))}.${ident(name.slice(dot + 1))}`;
}

function respond(shape: ResponsePlan, row: Row, csvBody: boolean): Response {
  const headers = new Headers();
  if (shape.preferenceApplied) headers.set("Preference-Applied", shape.preferenceApplied);
  const { status } = shape;
  if (status.kind === "no-content") return new Response(null, { status: 204, headers });

  const from = status.kind === "rows" ? status.offset : 0;
  const range = row.n > 0 ? `${from}-${from + row.n - 1}` : "*";

  if (status.kind === "write") {
    const countTotal = status.count ? String(row.n) : "*";
    headers.set("Content-Range", status.range ? `${range}/${countTotal}` : `*/${countTotal}`);
    if (status.location && row.body) {
      const rows = JSON.parse(row.body) as Record<string, unknown>[] | Record<string, unknown>;
      const first = Array.isArray(rows) ? rows[0] : rows;
      if (first) {
        const q = status.location.keys
          .map((k) => `${encodeURIComponent(k)}=eq.${encodeURIComponent(String(first[k]))}`)
          .join("&");
        headers.set("Location", `${status.location.path}?${q}`);
      }
    }
    if (!status.body) return new Response(null, { status: status.emptyStatus, headers });
    return withBody(shape, row, headers, status.status, csvBody);
  }

  const total = row.total ?? undefined;
  if (total !== undefined && from > total)
    throw errors.invalidRange(
      `An offset of ${from} was requested, but there are only ${total} rows.`,
    );
  headers.set("Content-Range", `${range}/${total ?? "*"}`);
  return withBody(shape, row, headers, total !== undefined && row.n < total ? 206 : 200, csvBody);
}

function withBody(
  shape: ResponsePlan,
  row: Row,
  headers: Headers,
  status: number,
  csvBody: boolean,
): Response {
  let text = row.body ?? "";
  // an object's body is the first row already, as the statement gave it
  if (shape.unwrap)
    headers.set(
      "Content-Type",
      shape.media === "object" ? CONTENT_TYPES.object : CONTENT_TYPES.json,
    );
  else if (shape.media === "csv") {
    if (!csvBody) text = toCsv(JSON.parse(text));
    headers.set("Content-Type", CONTENT_TYPES.csv);
  } else headers.set("Content-Type", CONTENT_TYPES.json);
  return new Response(shape.head ? null : text, { status, headers });
}

function csvCell(v: unknown): string {
  if (v === null || v === undefined) return "";
  const s = typeof v === "object" ? JSON.stringify(v) : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function toCsv(rows: unknown): string {
  if (!Array.isArray(rows) || rows.length === 0) return "";
  const keys = Object.keys(rows[0] as object);
  const lines = [keys.map(csvCell).join(",")];
  for (const r of rows)
    lines.push(keys.map((k) => csvCell((r as Record<string, unknown>)[k])).join(","));
  return lines.join("\n");
}

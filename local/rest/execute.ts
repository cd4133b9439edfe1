/**
 * Runs a plan the way PostgREST does: one transaction per request, the JWT's role switched in
 * with set_config('role'), request.jwt.claims and request.* settings for auth.uid()/auth.jwt() and
 * policies, read-only for GET/HEAD; then shapes the HTTP response (JSON, object, CSV, ranges).
 */
import type { PGlite, Transaction } from "@electric-sql/pglite";
import { errors, RestError } from "./errors.ts";
import type { Plan } from "./plan.ts";
import { countSourceSql, ident, planSql } from "./sql.ts";

export const API_ROLES = ["anon", "authenticated", "service_role"];

export interface RequestContext {
  claims: Record<string, unknown> & { role: string };
  method: string;
  path: string;
  headers: Headers;
  cookies: Record<string, string>;
  /** Range header, applied to the root when no limit/offset are in the URL */
  offset: number;
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
  body: unknown,
  ctx: RequestContext,
): Promise<Response> {
  const { request } = plan;
  const role = String(ctx.claims.role);
  if (!API_ROLES.includes(role))
    throw new RestError(
      role === "anon" ? 401 : 403,
      "42501",
      `permission denied to set role "${role}"`,
    );
  const readOnly = request.method === "GET" || request.method === "HEAD";
  const isMutation = plan.kind === "mutate";
  const ret = request.prefer.return ?? "minimal";
  const representation =
    !isMutation || ret === "representation" || ret === "headers-only" || request.media === "object";
  const headersOnly = isMutation && ret === "headers-only";
  const mutationPlan =
    headersOnly && plan.kind === "mutate" && plan.relation.primaryKey.length
      ? {
          ...plan,
          root: {
            ...plan.root,
            embeds: [],
            outputs: plan.relation.primaryKey.map((name) => ({
              kind: "column" as const,
              field: { name, json: [] },
              name,
            })),
          },
        }
      : plan;
  const countMode = request.prefer.count;
  const sql = planSql(mutationPlan, body, {
    stripNulls: request.stripNulls,
    count: !isMutation && (countMode === "exact" || countMode === "estimated"),
    representation,
  });

  return db.transaction(async (tx) => {
    if (readOnly) await tx.query("SET TRANSACTION READ ONLY");
    await tx.query(ROLE_SETTINGS, [role]);
    await setRequestSettings(tx, plan.schema, ctx);
    const result = await tx.query<Row>(sql.text, sql.params);
    let row: Row;
    if (sql.returnsBody) row = result.rows[0] ?? { body: "[]", n: 0 };
    else row = { body: null, n: result.affectedRows ?? 0 };
    if (countMode === "planned" && plan.kind === "read") {
      const c = countSourceSql(plan.root);
      const explained = await tx.query<{ "QUERY PLAN": [{ Plan: { "Plan Rows": number } }] }>(
        `EXPLAIN (FORMAT JSON) ${c.text}`,
        c.params,
      );
      row.total = explained.rows[0]?.["QUERY PLAN"][0].Plan["Plan Rows"] ?? null;
    }
    if (
      request.prefer.handling === "strict" &&
      request.prefer.maxAffected !== undefined &&
      row.n > request.prefer.maxAffected
    )
      throw errors.maxAffected(row.n);
    if (request.media === "object" && sql.returnsBody && plan.kind !== "call" && row.n !== 1)
      throw errors.singularity(row.n);
    if (
      request.media === "object" &&
      plan.kind === "call" &&
      plan.routine.returnsSet &&
      row.n !== 1
    )
      throw errors.singularity(row.n);
    const response = respond(plan, row, ctx, { isMutation, ret, headersOnly, readOnly });
    if (request.prefer.tx === "rollback") await tx.rollback();
    return response;
  });
}

/**
 * The role's own settings (ALTER ROLE … SET, such as the statement_timeout of anon and
 * authenticated), in force for this request's transaction: PostgREST applies the impersonated
 * role's settings this way (except default_transaction_isolation, which it uses as the
 * transaction's isolation level). Unlike PostgREST it does not skip settings only a superuser may
 * change, since only a superuser could have given them to the role here.
 */
const ROLE_SETTINGS = `SELECT set_config(substr(s, 1, strpos(s, '=') - 1), substr(s, strpos(s, '=') + 1), true)
  FROM pg_db_role_setting d, unnest(d.setconfig) s
  WHERE d.setrole = to_regrole($1) AND d.setdatabase = 0
    AND s NOT LIKE 'default\\_transaction\\_isolation=%'`;

async function setRequestSettings(tx: Transaction, schema: string, ctx: RequestContext) {
  const headers: Record<string, string> = {};
  ctx.headers.forEach((v, k) => {
    headers[k] = v;
  });
  const claims = ctx.claims;
  await tx.query(
    `SELECT set_config('role', $1, true), set_config('request.jwt.claims', $2, true),
            set_config('request.jwt.claim.role', $1, true), set_config('request.jwt.claim.sub', $3, true),
            set_config('request.method', $4, true), set_config('request.path', $5, true),
            set_config('request.headers', $6, true), set_config('request.cookies', $7, true),
            set_config('search_path', $8, true)`,
    [
      String(claims.role),
      JSON.stringify(claims),
      typeof claims.sub === "string" ? claims.sub : "",
      ctx.method,
      ctx.path,
      JSON.stringify(headers),
      JSON.stringify(ctx.cookies),
      `${ident(schema)}, "extensions"`,
    ],
  );
}

function respond(
  plan: Plan,
  row: Row,
  ctx: RequestContext,
  o: { isMutation: boolean; ret: string; headersOnly: boolean; readOnly: boolean },
): Response {
  const { request } = plan;
  const headers = new Headers();
  const applied: string[] = [];
  if (o.isMutation && request.prefer.return) applied.push(`return=${request.prefer.return}`);
  if (request.prefer.count) applied.push(`count=${request.prefer.count}`);
  if (request.prefer.resolution && plan.kind === "mutate")
    applied.push(`resolution=${request.prefer.resolution}`);
  if (request.prefer.tx) applied.push(`tx=${request.prefer.tx}`);
  if (request.prefer.missing) applied.push(`missing=${request.prefer.missing}`);
  if (applied.length) headers.set("Preference-Applied", applied.join(", "));

  const total = row.total ?? undefined;
  const from = plan.kind === "mutate" ? 0 : ctx.offset;
  const range = row.n > 0 ? `${from}-${from + row.n - 1}` : "*";

  if (plan.kind === "mutate") {
    const status = plan.action === "insert" ? 201 : 200;
    const countTotal = request.prefer.count ? String(row.n) : "*";
    headers.set(
      "Content-Range",
      plan.action === "insert" ? `*/${countTotal}` : `${range}/${countTotal}`,
    );
    if (o.headersOnly && plan.action === "insert" && row.body && plan.relation.primaryKey.length) {
      const first = (JSON.parse(row.body) as Record<string, unknown>[])[0];
      if (first) {
        const q = plan.relation.primaryKey
          .map((k) => `${encodeURIComponent(k)}=eq.${encodeURIComponent(String(first[k]))}`)
          .join("&");
        headers.set("Location", `/${encodeURIComponent(plan.relation.name)}?${q}`);
      }
    }
    if (o.ret !== "representation" && request.media !== "object")
      return new Response(null, { status: plan.action === "insert" ? 201 : 204, headers });
    return withBody(plan, row, headers, status, request.method === "HEAD");
  }

  if (plan.kind === "call" && !plan.root && plan.routine.returnKind === "void")
    return new Response(null, { status: 204, headers });

  if (total !== undefined && from > total)
    throw errors.invalidRange(
      `An offset of ${from} was requested, but there are only ${total} rows.`,
    );
  headers.set("Content-Range", `${range}/${total ?? "*"}`);
  const status = total !== undefined && row.n < total ? 206 : 200;
  return withBody(plan, row, headers, status, request.method === "HEAD");
}

function withBody(plan: Plan, row: Row, headers: Headers, status: number, head: boolean): Response {
  const { request } = plan;
  let text = row.body ?? "";
  const singleComposite =
    plan.kind === "call" && !plan.routine.returnsSet && plan.routine.returnKind !== "scalar";
  if (request.media === "object" || singleComposite) {
    const rows = JSON.parse(text) as unknown[];
    text = JSON.stringify(Array.isArray(rows) ? (rows[0] ?? null) : rows);
    headers.set(
      "Content-Type",
      request.media === "object" ? CONTENT_TYPES.object : CONTENT_TYPES.json,
    );
  } else if (request.media === "csv") {
    text = toCsv(JSON.parse(text));
    headers.set("Content-Type", CONTENT_TYPES.csv);
  } else headers.set("Content-Type", CONTENT_TYPES.json);
  return new Response(head ? null : text, { status, headers });
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

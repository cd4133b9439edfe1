import type { PGlite } from "@electric-sql/pglite";
import { errors, fromDatabaseError, RestError } from "./errors.ts";
import { executePlan } from "./execute.ts";
import { type ApiRequest, parseRequest } from "./parse.ts";
import { planRequest } from "./plan.ts";
import { loadSchemaCache, type SchemaCache } from "./schema-cache.ts";
import { watchSchema } from "./schema-watch.ts";

/** Who is calling, as decided by the server from the apikey header and the bearer JWT. */
export type Authenticate = (
  request: Request,
) => Promise<{ claims: Record<string, unknown> & { role: string } } | { error: string }>;

export interface RestDeps {
  db: PGlite;
  /** Exposed schemas, from config.toml [api] schemas. */
  schemas: string[];
  authenticate: Authenticate;
  /** config.toml [api] max_rows: the most rows one read returns (Supabase's default is 1000). */
  maxRows?: number;
}

const PREFIX = "/rest/v1";

/**
 * The PostgREST-compatible data API mounted at /rest/v1. The schema cache loads on the first
 * request and reloads after DDL (an event trigger sends NOTIFY pgrst, 'reload schema', as on
 * Supabase) or when anyone sends NOTIFY pgrst.
 */
export function createRestHandler(deps: RestDeps): (request: Request) => Promise<Response> {
  let cache: Promise<SchemaCache> | undefined;
  let watching: Promise<void> | undefined;
  const getCache = async () => {
    watching ??= watchSchema(deps.db, () => {
      cache = undefined;
    });
    await watching;
    cache ??= loadSchemaCache(deps.db, deps.schemas).catch((e) => {
      cache = undefined;
      throw e;
    });
    return cache;
  };

  return async (request) => {
    let authenticated = false;
    try {
      const url = new URL(request.url);
      if (!url.pathname.startsWith(PREFIX)) throw errors.invalidPath();
      const path = url.pathname.slice(PREFIX.length);
      if (request.method === "OPTIONS") return new Response(null, { status: 200 });
      const auth = await deps.authenticate(request);
      if ("error" in auth) throw errors.jwt(auth.error);
      authenticated = auth.claims.role !== "anon";
      if (path === "" || path === "/")
        throw new RestError(404, "PGRST126", "Root endpoint metadata is disabled");
      const api = parseRequest({
        method: request.method,
        path,
        params: [...url.searchParams],
        headers: request.headers,
      });
      const schema = api.profile ?? (deps.schemas[0] as string);
      if (!deps.schemas.includes(schema)) throw errors.invalidSchema(schema, deps.schemas);
      const body = await readBody(request, api);
      const offset = applyRange(api, deps.maxRows);
      const plan = planRequest(api, await getCache(), schema, body);
      return await executePlan(deps.db, plan, body, {
        claims: auth.claims,
        method: request.method,
        path: url.pathname,
        headers: request.headers,
        cookies: parseCookies(request.headers.get("cookie")),
        offset,
      });
    } catch (error) {
      const e = fromDatabaseError(error, authenticated);
      const headers = new Headers(e.headers);
      headers.set("Content-Type", "application/json; charset=utf-8");
      return new Response(JSON.stringify(e.body()), { status: e.status, headers });
    }
  };
}

async function readBody(request: Request, api: ApiRequest): Promise<unknown> {
  if (api.method === "GET" || api.method === "HEAD" || api.method === "DELETE") return undefined;
  const text = await request.text();
  if (text.trim() === "") {
    if (api.action === "call") return {};
    if (api.action === "update") return {};
    throw errors.invalidBody("Empty or invalid json");
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw errors.invalidBody("Empty or invalid json");
  }
  if (body === null || typeof body !== "object") throw errors.invalidBody("Empty or invalid json");
  if (api.action === "update" && Array.isArray(body))
    throw errors.invalidBody("Empty or invalid json");
  return body;
}

/** Folds the Range header into the root limit/offset (the URL's own limit/offset win). */
function applyRange(api: ApiRequest, maxRows: number | undefined): number {
  const root = api.scopes.get("");
  if (!root) return 0;
  if (api.range && root.limit === undefined && root.offset === undefined) {
    root.offset = api.range.from;
    if (api.range.to !== undefined) root.limit = api.range.to - api.range.from + 1;
  }
  if (maxRows !== undefined && maxRows > 0 && (api.action === "read" || api.action === "call"))
    root.limit = Math.min(root.limit ?? maxRows, maxRows);
  return root.offset ?? 0;
}

function parseCookies(header: string | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? "").split(";")) {
    const i = part.indexOf("=");
    if (i > 0) out[part.slice(0, i).trim()] = part.slice(i + 1).trim();
  }
  return out;
}

import type { PGlite } from "@electric-sql/pglite";
import { loadRestConfig, type RestConfig } from "./db-config.ts";
import { errorResponse, errors, fromDatabaseError, RestError } from "./errors.ts";
import { executePlan } from "./execute.ts";
import { readRequest } from "./parse.ts";
import { planRequest } from "./plan.ts";
import { loadSchemaCache, type SchemaCache } from "./schema-cache.ts";
import { watchSchema } from "./schema-watch.ts";
import { querySql } from "./sql.ts";

export { API_ROLES } from "./execute.ts";

/** Who is calling, as decided by the server from the apikey header and the bearer JWT. */
export type Authenticate = (
  request: Request,
) => Promise<
  { claims: Record<string, unknown> & { role: string } } | { error: string; details?: string }
>;

export interface RestDeps {
  db: PGlite;
  /** Exposed schemas, from config.toml [api] schemas. */
  schemas: string[];
  authenticate: Authenticate;
  /** config.toml [api] max_rows: the most rows one read returns (Supabase's default is 1000). */
  maxRows?: number;
  /** config.toml [api] extra_search_path (the CLI's default: public, extensions) */
  extraSearchPath?: readonly string[];
}

const PREFIX = "/rest/v1";

/**
 * The PostgREST-compatible data API mounted at /rest/v1. The schema cache and the in-database
 * configuration (db-config.ts) load on the first request; the schema cache reloads after DDL (an
 * event trigger sends NOTIFY pgrst, 'reload schema', as on Supabase), the configuration on
 * NOTIFY pgrst, 'reload config', both on any other NOTIFY pgrst.
 */
export function createRestHandler(deps: RestDeps): (request: Request) => Promise<Response> {
  let cache: Promise<SchemaCache> | undefined;
  let config: Promise<RestConfig> | undefined;
  let watching: Promise<void> | undefined;
  const watch = async () => {
    watching ??= watchSchema(deps.db, (reload) => {
      if (reload !== "config") cache = undefined;
      if (reload !== "schema") config = undefined;
    });
    await watching;
  };
  const getCache = async () => {
    await watch();
    cache ??= loadSchemaCache(deps.db, deps.schemas).catch((e) => {
      cache = undefined;
      throw e;
    });
    return cache;
  };
  const getConfig = async () => {
    await watch();
    config ??= loadRestConfig(deps.db, {
      maxRows: deps.maxRows,
      extraSearchPath: deps.extraSearchPath,
    }).catch((e) => {
      config = undefined;
      throw e;
    });
    return config;
  };

  return async (request) => {
    let authenticated = false;
    try {
      const url = new URL(request.url);
      if (!url.pathname.startsWith(PREFIX)) throw errors.invalidPath();
      const path = url.pathname.slice(PREFIX.length);
      if (request.method === "OPTIONS") return new Response(null, { status: 200 });
      const auth = await deps.authenticate(request);
      if ("error" in auth) throw errors.jwt(auth.error, auth.details);
      authenticated = auth.claims.role !== "anon";
      if (path === "" || path === "/")
        throw new RestError(404, "PGRST126", "Root endpoint metadata is disabled");
      // one way: request -> ApiRequest -> Plan -> Query -> Response
      const api = await readRequest(request, path, { schemas: deps.schemas });
      const settings = await getConfig();
      const plan = planRequest(api, await getCache(), api.schema, api.payload, {
        maxRows: settings.maxRows,
        aggregatesEnabled: settings.aggregatesEnabled,
        planEnabled: settings.planEnabled,
        txEnd: settings.txEnd,
      });
      const query = querySql(plan);
      return await executePlan(deps.db, plan, query, {
        preRequest: settings.preRequest,
        roleSettings: settings.roleSettings.get(auth.claims.role) ?? [],
        searchPath: [api.schema, ...settings.extraSearchPath],
        claims: auth.claims,
        method: api.http.method,
        path: `${PREFIX}${api.http.path}`,
        headers: api.http.headers,
        cookies: api.cookies,
      });
    } catch (error) {
      return errorResponse(fromDatabaseError(error, authenticated));
    }
  };
}

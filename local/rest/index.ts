import type { PGlite } from "@electric-sql/pglite";

/** Who is calling, as decided by the server from the apikey header and the bearer JWT. */
export type Authenticate = (
  request: Request,
) => Promise<{ claims: Record<string, unknown> & { role: string } } | { error: string }>;

export interface RestDeps {
  db: PGlite;
  /** Exposed schemas, from config.toml [api] schemas. */
  schemas: string[];
  authenticate: Authenticate;
}

/** The PostgREST-compatible data API mounted at /rest/v1. Placeholder until it is built. */
export function createRestHandler(_deps: RestDeps): (request: Request) => Promise<Response> {
  return async () =>
    Response.json(
      { code: "PGRST000", message: "The data API is not built yet", details: null, hint: null },
      { status: 501 },
    );
}

import { Hono } from "hono";
import { health } from "./api/health.ts";
import { jwks } from "./api/jwks.ts";
import { settings } from "./api/settings.ts";
import type { AuthContext } from "./context.ts";
import { authError, errorResponse } from "./errors.ts";

export type Handler = (ctx: AuthContext, request: Request) => Response | Promise<Response>;

/**
 * The Supabase Auth API (mounted at /auth/v1), one module per endpoint family as in
 * supabase/auth internal/api. Every error, expected or not, is rendered by errorResponse.
 */
export function authRoutes(
  ctx: AuthContext,
  routes: Array<[method: string, path: string, Handler]> = [],
): Hono {
  const app = new Hono();
  const table: Array<[string, string, Handler]> = [
    ["GET", "/health", health],
    ["GET", "/settings", settings],
    ["GET", "/.well-known/jwks.json", jwks],
    ...routes,
  ];
  for (const [method, path, handler] of table) {
    app.on(method, path, (c) => handler(ctx, c.req.raw));
  }
  app.all("*", (c) => errorResponse(authError("notFound"), c.req.raw));
  app.onError((error, c) => errorResponse(error, c.req.raw));
  return app;
}

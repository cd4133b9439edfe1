import { Hono } from "hono";
import { routes } from "./api/routes.ts";
import type { AuthContext } from "./context.ts";
import { authError, errorResponse } from "./errors.ts";

/**
 * The Supabase Auth API (mounted at /auth/v1): the route table of api/routes.ts, one handler
 * module per endpoint family as in supabase/auth internal/api. Every error, expected or not, is
 * rendered by errorResponse.
 */
export function authRoutes(ctx: AuthContext): Hono {
  const app = new Hono();
  for (const [method, path, handler] of routes) {
    app.on(method, path, (c) => handler(ctx, c.req.raw));
  }
  app.all("*", (c) => errorResponse(authError("notFound"), c.req.raw));
  app.onError((error, c) => errorResponse(error, c.req.raw));
  return app;
}

import type { AuthContext } from "../context.ts";

/** GET /health, as the real service answers it. */
export function health(_ctx: AuthContext): Response {
  return Response.json({
    version: "local",
    name: "GoTrue",
    description: "GoTrue is a user registration and authentication API",
  });
}

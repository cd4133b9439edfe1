import { createRequestHandler, type RequestHandler, RouterContextProvider } from "react-router";
import { parseSupabaseEnv, type SupabaseEnv } from "../app/lib/env.server";
import { crossOriginRefusal, isCrossOrigin } from "../app/lib/origin-check.server";
import { applySecurityHeaders, createNonce } from "../app/lib/security-headers.server";
import { workerContext } from "../app/lib/worker-context.server";

const loadBuild = () => import("virtual:react-router/server-build");

/**
 * React Router's request handler. Handed a function, React Router imports the build and derives
 * its routes and handlers from it again on every request: what development wants, where an edited
 * route is served at once. A deployed Worker's build never changes, so there it is imported and
 * derived once per isolate, on the first request: deriving it was a sixth of the Worker's CPU for
 * a signed-out page (workerd profile under `npm run bench`).
 */
const requestHandler: RequestHandler = import.meta.env.DEV
  ? createRequestHandler(loadBuild, import.meta.env.MODE)
  : derivedOnce();

function derivedOnce(): RequestHandler {
  let handler: Promise<RequestHandler> | undefined;
  return async (request, context) => {
    handler ??= loadBuild().then((build) => createRequestHandler(build, import.meta.env.MODE));
    return (await handler)(request, context);
  };
}

/**
 * Every request: the Supabase settings parsed once from the bindings, a CSP nonce, the origin
 * check for form posts, then React Router (root middleware, the route's loader or action, the
 * page), and the security headers on the way out.
 */
export default {
  async fetch(request, env, ctx) {
    const nonce = createNonce();
    const supabase = parseSupabaseEnv(env);
    const context = new RouterContextProvider();
    context.set(workerContext, { env, ctx, nonce, supabase });
    // Cross-origin form posts are refused before any route code (or auth call) runs.
    const response = isCrossOrigin(request)
      ? crossOriginRefusal()
      : await requestHandler(request, context);
    return applySecurityHeaders(response, {
      nonce,
      supabaseOrigin: supabaseOrigin(supabase),
      dev: import.meta.env.DEV,
      https: new URL(request.url).protocol === "https:",
    });
  },
} satisfies ExportedHandler<Env>;

function supabaseOrigin(supabase: SupabaseEnv | Error): string {
  if (supabase instanceof Error) return "'none'";
  try {
    return new URL(supabase.url).origin;
  } catch {
    return "'none'";
  }
}

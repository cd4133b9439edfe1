import { createRequestHandler, RouterContextProvider } from "react-router";
import { parseSupabaseEnv, type SupabaseEnv } from "../app/lib/env.server";
import { crossOriginRefusal, isCrossOrigin } from "../app/lib/origin-check.server";
import { applySecurityHeaders, createNonce } from "../app/lib/security-headers.server";
import { workerContext } from "../app/lib/worker-context.server";

const requestHandler = createRequestHandler(
  () => import("virtual:react-router/server-build"),
  import.meta.env.MODE,
);

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

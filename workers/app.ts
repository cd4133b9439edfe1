import { createRequestHandler, RouterContextProvider } from "react-router";
import { readSupabaseEnv } from "../app/lib/env.server";
import { crossOriginRefusal, isCrossOrigin } from "../app/lib/origin-check.server";
import { applySecurityHeaders, createNonce } from "../app/lib/security-headers.server";
import { workerContext } from "../app/lib/worker-context.server";

const requestHandler = createRequestHandler(
  () => import("virtual:react-router/server-build"),
  import.meta.env.MODE,
);

export default {
  async fetch(request, env, ctx) {
    const nonce = createNonce();
    const context = new RouterContextProvider();
    context.set(workerContext, { env, ctx, nonce });
    // Cross-origin form posts are refused before any route code (or auth call) runs.
    const response = isCrossOrigin(request)
      ? crossOriginRefusal()
      : await requestHandler(request, context);
    return applySecurityHeaders(response, {
      nonce,
      supabaseOrigin: supabaseOrigin(env),
      dev: import.meta.env.DEV,
      https: new URL(request.url).protocol === "https:",
    });
  },
} satisfies ExportedHandler<Env>;

function supabaseOrigin(env: Env): string {
  try {
    return new URL(readSupabaseEnv(env).url).origin;
  } catch {
    return "'none'";
  }
}

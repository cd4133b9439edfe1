import { RouterContextProvider } from "react-router";
import {
  type Auth,
  authMiddleware,
  authOptionsContext,
  getAuth,
} from "../../../app/lib/auth.server";
import { parseSupabaseEnv } from "../../../app/lib/env.server";
import { workerContext } from "../../../app/lib/worker-context.server";
import { TEST_SUPABASE_URL } from "./fake-auth-server";

export const testEnv = {
  SUPABASE_URL: TEST_SUPABASE_URL,
  SUPABASE_PUBLISHABLE_KEY: "sb_publishable_unit_test",
  // as deployed: the refreshes the middleware makes go through the Auth fetch (auth-fetch.server.ts)
  SUPABASE_SECRET_KEY: "sb_secret_unit_test",
} as unknown as Env;

/**
 * Runs the real auth middleware the way React Router does for one request, with a "loader" as
 * `next` that records what it sees through getAuth(context) and returns an HTML response.
 */
export async function runMiddleware(
  request: Request,
  options: {
    fetch?: typeof fetch;
    env?: Env;
    loader?: (auth: Auth, context: RouterContextProvider) => Promise<void> | void;
  } = {},
): Promise<{ response: Response; auth: Auth }> {
  const context = new RouterContextProvider();
  const env = options.env ?? testEnv;
  context.set(workerContext, {
    env,
    ctx: {} as ExecutionContext,
    nonce: "test-nonce",
    supabase: parseSupabaseEnv(env),
  });
  if (options.fetch) context.set(authOptionsContext, { fetch: options.fetch });
  let seen: Auth | undefined;
  const args = { request, context, params: {}, url: new URL(request.url), pattern: "/" };
  const result = await authMiddleware(args as Parameters<typeof authMiddleware>[0], async () => {
    seen = getAuth(context);
    await options.loader?.(seen, context);
    return new Response("<!doctype html>", { headers: { "Content-Type": "text/html" } });
  });
  if (!(result instanceof Response) || !seen)
    throw new Error("middleware did not produce a response");
  return { response: result, auth: seen };
}

export function page(cookie?: string, url = "http://app.test/"): Request {
  return new Request(url, { headers: cookie ? { Cookie: cookie } : {} });
}

/** "auth=N rest=M" from the Server-Timing header the middleware writes. */
export function backendCalls(response: Response): { auth: number; rest: number } {
  const match = /supabase;desc="auth=(\d+) rest=(\d+)\b/.exec(
    response.headers.get("Server-Timing") ?? "",
  );
  if (!match) throw new Error("no Server-Timing supabase entry");
  return { auth: Number(match[1]), rest: Number(match[2]) };
}

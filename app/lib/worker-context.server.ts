import { createContext, type RouterContextProvider } from "react-router";
import type { SupabaseEnv } from "./env.server";

/** What the Worker entry (workers/app.ts) hands every request. */
export interface WorkerContext {
  /** The Worker's raw bindings. The Supabase settings are read from `supabase`, never from here. */
  env: Env;
  ctx: ExecutionContext;
  /** Per-request nonce for inline scripts; the same value is in the Content-Security-Policy. */
  nonce: string;
  /**
   * The Supabase settings, parsed once from the bindings by the Worker entry; for a misconfigured
   * deploy, the error naming the variable (thrown by `getSupabaseEnv` where the settings are needed).
   */
  supabase: SupabaseEnv | Error;
}

export const workerContext = createContext<WorkerContext>();

/**
 * The Supabase project this request talks to. A misconfigured deploy throws here, so the page
 * fails loudly with a message naming the variable, never with a half-working client.
 */
export function getSupabaseEnv(context: Readonly<RouterContextProvider>): SupabaseEnv {
  const { supabase } = context.get(workerContext);
  if (supabase instanceof Error) throw supabase;
  return supabase;
}

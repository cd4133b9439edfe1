import { createContext } from "react-router";

/** What the Worker entry (workers/app.ts) hands every request: its bindings and CSP nonce. */
export interface WorkerContext {
  env: Env;
  ctx: ExecutionContext;
  /** Per-request nonce for inline scripts; the same value is in the Content-Security-Policy. */
  nonce: string;
}

export const workerContext = createContext<WorkerContext>();

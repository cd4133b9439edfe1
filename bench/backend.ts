// The local backend, as the benchmark uses it. This is the one place bench/ imports it from.
import { Worker } from "node:worker_threads";

import {
  createLocalBackend,
  KEYS,
  type LocalBackendOptions,
  START_SETTINGS,
  WASM_TIERING_BUDGET,
} from "@edge-notes/supabase-local";

export { createLocalBackend, KEYS, type LocalBackendOptions, START_SETTINGS, WASM_TIERING_BUDGET };

/**
 * A local backend (in memory) in a worker thread of its own, so its bcrypt and PGlite work gets
 * an event loop apart from the load generator's. Resolves once it listens; `exec(sql)` runs SQL
 * in it as the superuser; `close()` stops it.
 */
export async function startBackendThread(options: LocalBackendOptions): Promise<{
  url: string;
  exec: (sql: string) => Promise<void>;
  close: () => Promise<void>;
}> {
  const thread = new Worker(new URL("../tests/support/backend-thread.ts", import.meta.url), {
    workerData: options,
  });
  const url = await new Promise<string>((resolve, reject) => {
    thread.once("error", reject);
    thread.once("message", (message: { url?: string; error?: string }) => {
      if (message.url) resolve(message.url);
      else reject(new Error(`The bench backend did not start: ${message.error}`));
    });
  });
  return {
    url,
    exec: (sql) =>
      new Promise((resolve, reject) => {
        thread.once("message", (message: { done?: boolean; error?: string }) => {
          if (message.done) resolve();
          else reject(new Error(`The bench backend refused the SQL: ${message.error}`));
        });
        thread.postMessage({ sql });
      }),
    close: async () => {
      const closed = new Promise((resolve) => thread.once("message", resolve));
      thread.postMessage("close");
      await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 5000))]);
      await thread.terminate();
    },
  };
}

/**
 * The ended-session check (supabase/migrations/20261127000400_ended_sessions_signed_out_at_once.sql:
 * the data API's pre-request and the restrictive policies) taken out of a backend, for
 * session-check.ts: GET /notes' data requests as they were before that check (decision 023).
 */
export const WITHOUT_SESSION_CHECK = `
  alter role authenticator reset pgrst.db_pre_request;
  do $$ declare p record; begin
    for p in select schemaname, tablename from pg_policies
             where policyname = 'Ended sessions reach no app data' loop
      execute format('drop policy %I on %I.%I', 'Ended sessions reach no app data',
                     p.schemaname, p.tablename);
    end loop;
  end $$;
  notify pgrst, 'reload config';`;

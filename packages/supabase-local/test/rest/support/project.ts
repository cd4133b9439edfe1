/**
 * A Supabase project of its own for tests that need settings the shared backend does not have:
 * a temporary project directory with its `supabase/config.toml` and migrations, started by
 * createLocalBackend in memory and without a socket, reached by supabase-js through its fetch.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { QUICK_PASSWORD_HASH_COST } from "../../../../../tests/support/backend.ts";
import { createLocalBackend, type LocalBackend } from "../../../src/backend.ts";
import { KEYS } from "../../../src/index.ts";
import { withBaseSnapshot } from "../../support/base-snapshot.ts";

export interface Project {
  backend: LocalBackend;
  /** supabase-js with the anon key, or with the given bearer token */
  client: (token?: string) => SupabaseClient;
  /** a raw request to /rest/v1 with the anon key */
  rest: (path: string, init?: RequestInit) => Promise<Response>;
  /** SQL as the superuser, e.g. to change settings as a later migration would */
  sql: (text: string) => Promise<void>;
  close: () => Promise<void>;
}

export async function startProject(files: {
  configToml?: string;
  migrations: Record<string, string>;
}): Promise<Project> {
  const dir = mkdtempSync(join(tmpdir(), "rest-project-"));
  mkdirSync(join(dir, "supabase/migrations"), { recursive: true });
  writeFileSync(join(dir, "supabase/config.toml"), files.configToml ?? "");
  for (const [name, text] of Object.entries(files.migrations))
    writeFileSync(join(dir, "supabase/migrations", name), text);
  await withBaseSnapshot(dir);
  const backend = await createLocalBackend({
    projectDir: dir,
    host: false,
    config: { auth: { passwordHashCost: QUICK_PASSWORD_HASH_COST } },
  });
  const fetchImpl = ((input: RequestInfo | URL, init?: RequestInit) =>
    backend.fetch(new Request(input, init))) as typeof fetch;
  const client = (token?: string) =>
    createClient(backend.url, KEYS.anon, {
      auth: { persistSession: false, autoRefreshToken: false },
      global: { fetch: fetchImpl, headers: token ? { Authorization: `Bearer ${token}` } : {} },
    });
  const rest = (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (!headers.has("apikey")) headers.set("apikey", KEYS.anon);
    return fetchImpl(`${backend.url}/rest/v1${path}`, { ...init, headers });
  };
  return {
    backend,
    client,
    rest,
    sql: async (text) => {
      await backend.db.exec(text);
    },
    close: async () => {
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Retries `check` until it stops throwing (a NOTIFY is delivered asynchronously), at most ~2 s. */
export async function eventually(check: () => Promise<void>): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      return await check();
    } catch (error) {
      if (i >= 40) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

import { fileURLToPath } from "node:url";
import {
  type Config,
  createLocalBackend,
  type DeepPartial,
  type LocalBackend,
  type LocalBackendOptions,
} from "@edge-notes/supabase-local";
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import {
  PASSWORD,
  PUBLISHABLE_KEY,
  QUICK_PASSWORD_HASH_COST,
  randomEmail,
  SECRET_KEY,
  TEST_RATE_LIMITS,
  TEST_RECOVERY_CODES,
} from "./backend.ts";

/** The project these backends serve: this repository's supabase/ (config, migrations). */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Settings of the test backends: quick password hashes (tests make their own data, no seed),
 * rate limits a test file's many requests from 127.0.0.1 do not meet, unless it sets its own, and
 * recovery codes on, unless it switches them off. */
const QUICK = {
  auth: {
    passwordHashCost: QUICK_PASSWORD_HASH_COST,
    rateLimit: TEST_RATE_LIMITS,
    mfa: { recoveryCodes: TEST_RECOVERY_CODES },
  },
};

/** A test's settings over QUICK: its own [auth.rate_limit] replaces QUICK's whole; [auth.mfa] is
 * merged key by key, so recovery codes stay on unless the test turns them off. */
function withQuick(config: DeepPartial<Config>): DeepPartial<Config> {
  const mfa = config.auth?.mfa;
  return {
    ...config,
    auth: {
      ...QUICK.auth,
      ...config.auth,
      mfa: {
        ...mfa,
        recoveryCodes: { ...QUICK.auth.mfa.recoveryCodes, ...mfa?.recoveryCodes },
      },
    },
  };
}

/**
 * This test worker's database for backends of the repository's project as it is (no seed, no
 * fixtures, no data directory of their own): opened once, by a backend kept for the worker's
 * life. Each test file gets fresh users, not a fresh database, as with the shared test backend;
 * files of one worker run one after another. Opening a database is about a second of CPU.
 * Backends that need a socket of their own (or other options memoryBackend does not take) pass
 * it as `db` to createLocalBackend.
 */
let worker: Promise<LocalBackend> | undefined;

export function workerDatabase() {
  worker ??= createLocalBackend({ projectDir: ROOT, seed: false, host: false, config: QUICK });
  return worker.then((backend) => backend.db);
}

/** Options that need a database of their own; any other is a setting of the backend. */
const OWN_DATABASE = [
  "projectDir",
  "dataDir",
  "seed",
  "fixtures",
  "migrationsDir",
  "cacheDir",
  "postgresPort",
] as const;

/**
 * A second backend in this test worker, in memory and without a socket, for settings the shared
 * test backend does not use (small rate limits, MFA switched off, ...). The same supabase-js
 * drives it through its fetch handler. Without a socket every caller's address is 127.0.0.1,
 * unless `trustProxyHeader` names a header that carries it. It serves the worker's database
 * unless `options` ask for one of its own (a seed, fixtures, ...).
 */
export async function memoryBackend(
  config: DeepPartial<Config>,
  options: Omit<LocalBackendOptions, "config" | "host" | "db"> = {},
) {
  const own = OWN_DATABASE.some((option) => options[option] !== undefined);
  const backend = await createLocalBackend({
    projectDir: ROOT,
    seed: false,
    ...options,
    ...(own ? {} : { db: await workerDatabase() }),
    host: false,
    config: withQuick(config),
  });
  const fetch = (input: RequestInfo | URL, init?: RequestInit) =>
    backend.fetch(new Request(input, init));

  function client(
    options: { flowType?: "implicit" | "pkce"; headers?: Record<string, string> } = {},
  ) {
    const store = new Map<string, string>();
    return createClient(backend.url, PUBLISHABLE_KEY, {
      auth: {
        persistSession: true,
        autoRefreshToken: false,
        detectSessionInUrl: false,
        flowType: options.flowType ?? "implicit",
        storage: {
          getItem: (k) => store.get(k) ?? null,
          setItem: (k, v) => void store.set(k, v),
          removeItem: (k) => void store.delete(k),
        },
      },
      global: { fetch, headers: options.headers },
    });
  }

  function admin(): SupabaseClient {
    return createClient(backend.url, SECRET_KEY, {
      auth: { persistSession: false, autoRefreshToken: false },
      global: { fetch },
    });
  }

  /** A confirmed user signed in with a password on its own client. */
  async function signedIn(options: { headers?: Record<string, string> } = {}) {
    const email = randomEmail();
    const created = await admin().auth.admin.createUser({
      email,
      password: PASSWORD,
      email_confirm: true,
    });
    if (created.error) throw created.error;
    const c = client(options);
    const { data, error } = await c.auth.signInWithPassword({ email, password: PASSWORD });
    if (error) throw error;
    return { email, client: c, user: created.data.user, session: data.session };
  }

  return { backend, fetch, client, admin, signedIn, close: () => backend.close() };
}

export type MemoryBackend = Awaited<ReturnType<typeof memoryBackend>>;

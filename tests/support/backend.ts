import { KEYS } from "@edge-notes/supabase-local";
import { createClient, type SupabaseClient } from "@supabase/supabase-js";

/** The in-memory backend the root globalSetup starts for the whole run (port 5178; another one
 * with TEST_BACKEND_PORT, for running the local tests beside a second checkout's run). */
export const BACKEND_URL = `http://127.0.0.1:${process.env.TEST_BACKEND_PORT ?? 5178}`;
/** The Supabase CLI's well-known local keys, as a local project would print them. */
export const PUBLISHABLE_KEY = KEYS.publishable;
export const SECRET_KEY = KEYS.secret;
export const ANON_KEY = KEYS.anon;
export const SERVICE_ROLE_KEY = KEYS.serviceRole;
/**
 * bcrypt cost of the test backends' password hashes: bcrypt's minimum, as upstream's own tests
 * hash (crypto.QuickHashCost), about 1 ms a hash instead of 70 at the real cost. Every test user
 * is signed up and signed in, so at the real cost hashing took about a quarter of the run's CPU.
 * The tests of the cost itself (password-timing) ask for the real one.
 */
export const QUICK_PASSWORD_HASH_COST = 4;

/**
 * [auth.rate_limit] of the test backends: every test signs in, verifies and signs up from
 * 127.0.0.1, far past the hosted defaults config.toml keeps. A bucket still holds 30 (as
 * upstream, whatever the setting), so these only make it refill at once. The limits themselves
 * are tested on backends of their own (packages/supabase-local/test/auth/rate-limit.test.ts,
 * tests/integration/auth/rate-limits.test.ts).
 */
export const TEST_RATE_LIMITS = {
  tokenRefresh: 1_000_000,
  signInSignUps: 1_000_000,
  tokenVerifications: 1_000_000,
  anonymousUsers: 1_000_000,
  mfaChallengeAndVerify: 1_000_000,
  passkey: 1_000_000,
};

/**
 * [auth.mfa.recovery_codes] of the test backends: on, for the tests of recovery codes. They are a
 * preview hosted Supabase lacks, off in supabase/local-backend.toml; the app without them is
 * tested on a backend of its own (tests/integration/account/recovery-codes-off.test.ts). Their
 * hashes are cheaper, as the passwords' (QUICK_PASSWORD_HASH_COST): each verification hashes every
 * unused code, ten scrypt hashes of 4 MB at the real cost, and on a busy machine that passed the
 * app's 1.5 s backend deadline ("can't be reached right now").
 */
export const TEST_RECOVERY_CODES = { enrollEnabled: true, verifyEnabled: true, hashCost: 10 };

const noPersist = { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false };

/** A browser-like client with the publishable key (its own in-memory session). */
export function anonClient(options: { flowType?: "implicit" | "pkce" } = {}): SupabaseClient {
  const store = new Map<string, string>();
  return createClient(BACKEND_URL, PUBLISHABLE_KEY, {
    auth: {
      ...noPersist,
      persistSession: true,
      flowType: options.flowType ?? "implicit",
      storage: {
        getItem: (k) => store.get(k) ?? null,
        setItem: (k, v) => void store.set(k, v),
        removeItem: (k) => void store.delete(k),
      },
    },
  });
}

/** A server-side admin client with the secret key. */
export function adminClient(): SupabaseClient {
  return createClient(BACKEND_URL, SECRET_KEY, { auth: noPersist });
}

/** A fresh, unique address for one test. */
export function randomEmail(prefix = "user"): string {
  return `${prefix}-${crypto.randomUUID().slice(0, 13)}@example.com`;
}

export const PASSWORD = "correct-horse-battery";

/** A confirmed user created through the admin API, with their password. */
export async function freshUser(options: { metadata?: Record<string, unknown> } = {}) {
  const email = randomEmail();
  const { data, error } = await adminClient().auth.admin.createUser({
    email,
    password: PASSWORD,
    email_confirm: true,
    user_metadata: options.metadata,
  });
  if (error) throw error;
  return { email, password: PASSWORD, user: data.user };
}

/** A fresh confirmed user, signed in on its own client. */
export async function signedInClient(options: { flowType?: "implicit" | "pkce" } = {}) {
  const created = await freshUser();
  const client = anonClient(options);
  const { data, error } = await client.auth.signInWithPassword({
    email: created.email,
    password: created.password,
  });
  if (error) throw error;
  return { ...created, client, session: data.session };
}

/** Raw call to the Auth API (for bad input the client would never send). */
export function authFetch(path: string, init: RequestInit & { key?: string } = {}) {
  const headers = new Headers(init.headers);
  if (!headers.has("apikey")) headers.set("apikey", init.key ?? PUBLISHABLE_KEY);
  if (init.body && !headers.has("content-type")) headers.set("content-type", "application/json");
  return fetch(`${BACKEND_URL}/auth/v1${path}`, { ...init, headers, redirect: "manual" });
}

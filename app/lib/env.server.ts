import { z } from "zod";
import type { PublicEnv } from "./public-env";

/**
 * The Supabase project the app talks to, read from the Worker's bindings (wrangler.toml [vars] and
 * the secret SUPABASE_SECRET_KEY) by the Worker entry, once per request; everything else reads it
 * from the request context (getSupabaseEnv in worker-context.server.ts).
 */
export interface SupabaseEnv {
  /** Project URL, e.g. https://abc.supabase.co or http://127.0.0.1:54321 (no trailing slash). */
  url: string;
  /** Publishable key (sb_publishable_…) or, for older projects, the legacy anon JWT. */
  publishableKey: string;
  /**
   * The project's secret key (sb_secret_…, a Wrangler secret): only ever on the rate-limited Auth
   * calls, which then carry the visitor's address (auth-fetch.server.ts). Never on data calls,
   * never in loader data, pages or logs. Undefined: limits count the Worker, not people.
   */
  secretKey?: string;
  /**
   * How long a page waits for each backend call before it gives up and says the backend is
   * unreachable (SUPABASE_TIMEOUT_MS; unset: BACKEND_TIMEOUT_MS, 1.5 s). For a backend that is
   * slow by nature (a far region, a loaded test machine), not to hide one that is down.
   */
  timeoutMs?: number;
}

const schema = z.object({
  SUPABASE_URL: z
    .string({ error: "SUPABASE_URL is not set" })
    .trim()
    .pipe(z.url({ protocol: /^https?$/, error: "SUPABASE_URL must be an http(s) URL" })),
  SUPABASE_PUBLISHABLE_KEY: z.string().trim().optional(),
  /** Accepted for projects that still use the legacy anon key. */
  SUPABASE_ANON_KEY: z.string().trim().optional(),
  // Only a secret key may carry Sb-Forwarded-For through the hosted gateway: the legacy
  // service_role JWT would be ignored there and is refused here. (The message never echoes it.)
  SUPABASE_SECRET_KEY: z
    .string()
    .trim()
    .refine((key) => key === "" || key.startsWith("sb_secret_"), {
      error: "SUPABASE_SECRET_KEY must be the project's secret key (sb_secret_…)",
    })
    .optional(),
  SUPABASE_TIMEOUT_MS: z.preprocess(
    (value) => (typeof value === "string" && value.trim() === "" ? undefined : value),
    z.coerce
      .number({ error: "SUPABASE_TIMEOUT_MS must be a number of milliseconds" })
      .int({ error: "SUPABASE_TIMEOUT_MS must be a whole number of milliseconds" })
      .min(100, { error: "SUPABASE_TIMEOUT_MS must be at least 100 (ms)" })
      .max(60_000, { error: "SUPABASE_TIMEOUT_MS must be at most 60000 (ms)" })
      .optional(),
  ),
});

/** Every variable the Worker reads (each is declared in wrangler.toml, or local runs drop it). */
export const SUPABASE_VARIABLES = Object.keys(schema.shape);

/**
 * Reads and validates the Supabase settings from the Worker bindings. A misconfigured deploy
 * fails loudly with a message naming the variable, never with a half-working client.
 */
export function readSupabaseEnv(bindings: Env): SupabaseEnv {
  const cached = parsedEnvs.get(bindings);
  if (cached) return cached;
  const env = validate(bindings);
  parsedEnvs.set(bindings, env);
  return env;
}

/**
 * What the Worker entry puts in the request context: the settings, or the misconfiguration as an
 * error that the code needing the settings throws (getSupabaseEnv), so requests that never need
 * them (a cross-origin refusal) are answered as usual.
 */
export function parseSupabaseEnv(bindings: Env): SupabaseEnv | Error {
  try {
    return readSupabaseEnv(bindings);
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/** The bindings object is the same for every request an isolate serves: parse it once. */
const parsedEnvs = new WeakMap<object, SupabaseEnv>();

function validate(bindings: Env): SupabaseEnv {
  const parsed = schema.safeParse(bindings);
  if (!parsed.success) {
    throw new Error(`Invalid Worker configuration: ${parsed.error.issues[0]?.message}`);
  }
  const {
    SUPABASE_URL,
    SUPABASE_PUBLISHABLE_KEY,
    SUPABASE_ANON_KEY,
    SUPABASE_SECRET_KEY,
    SUPABASE_TIMEOUT_MS,
  } = parsed.data;
  const publishableKey = SUPABASE_PUBLISHABLE_KEY || SUPABASE_ANON_KEY;
  if (!publishableKey) {
    throw new Error(
      "Invalid Worker configuration: set SUPABASE_PUBLISHABLE_KEY (or the legacy SUPABASE_ANON_KEY)",
    );
  }
  return {
    url: SUPABASE_URL.replace(/\/+$/, ""),
    publishableKey,
    ...(SUPABASE_SECRET_KEY ? { secretKey: SUPABASE_SECRET_KEY } : {}),
    ...(SUPABASE_TIMEOUT_MS ? { timeoutMs: SUPABASE_TIMEOUT_MS } : {}),
  };
}

export function toPublicEnv(env: SupabaseEnv): PublicEnv {
  return { SUPABASE_URL: env.url, SUPABASE_PUBLISHABLE_KEY: env.publishableKey };
}

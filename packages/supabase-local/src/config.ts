import { readFileSync } from "node:fs";
import { parse } from "smol-toml";
import { projectPaths } from "./project.ts";

/** The parts of supabase/config.toml the local backend honours, with the Supabase CLI's defaults. */
export interface Config {
  api: { port: number; schemas: string[]; maxRows: number };
  /** [db]: the Postgres port (54322) and [db.seed], the seed files of a fresh database. */
  db: {
    port: number;
    /** sql_paths are relative to supabase/ and may hold `*` globs, as the CLI reads them. */
    seed: { enabled: boolean; sqlPaths: string[] };
  };
  /** [inbucket]: the mail catcher (Mailpit in the CLI); its API port (54324). */
  inbucket: { enabled: boolean; port: number };
  auth: {
    siteUrl: string;
    additionalRedirectUrls: string[];
    jwtExpiry: number;
    enableSignup: boolean;
    enableAnonymousSignIns: boolean;
    enableRefreshTokenRotation: boolean;
    refreshTokenReuseInterval: number;
    enableManualLinking: boolean;
    minimumPasswordLength: number;
    email: {
      enableSignup: boolean;
      enableConfirmations: boolean;
      doubleConfirmChanges: boolean;
      securePasswordChange: boolean;
      maxFrequencySeconds: number;
      otpLength: number;
      otpExpiry: number;
      templates: Record<string, { subject?: string; contentPath?: string }>;
    };
    mfa: {
      maxEnrolledFactors: number;
      totp: { enrollEnabled: boolean; verifyEnabled: boolean };
    };
    /** [auth.external.<provider>]: which OAuth providers are on (served by the local provider page). */
    external: Record<string, { enabled: boolean }>;
    rateLimit: {
      emailSent: number;
      tokenRefresh: number;
      signInSignUps: number;
      tokenVerifications: number;
      anonymousUsers: number;
      /**
       * MFA challenges and verifications a minute per IP (GOTRUE_MFA_RATE_LIMIT_CHALLENGE_AND_VERIFY,
       * 15). The CLI has no config.toml key for it, so it is always the real default unless a
       * caller of createLocalBackend overrides it (the test runs do).
       */
      mfaChallengeAndVerify: number;
    };
  };
}

type Table = Record<string, unknown>;

export interface LoadConfigOptions {
  /** The project whose supabase/config.toml to read (default: the working directory). */
  projectDir?: string;
  /** Another config file instead of the project's. */
  configFile?: string;
  /** Deep-merged over the file (tests that need another setting). */
  overrides?: DeepPartial<Config>;
}

/** Reads supabase/config.toml (a missing file = all defaults), with the Supabase CLI's defaults
 * for absent keys; `overrides` is deep-merged on top. */
export function loadConfig(options: LoadConfigOptions = {}): Config {
  const path = options.configFile ?? projectPaths(options.projectDir).configFile;
  let toml: Table = {};
  try {
    toml = parse(readFileSync(path, "utf8")) as Table;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  return merge(fromToml(toml), options.overrides ?? {}) as Config;
}

function fromToml(toml: Table): Config {
  const api = table(toml.api);
  const db = table(toml.db);
  const seed = table(db.seed);
  const inbucket = table(toml.inbucket);
  const auth = table(toml.auth);
  const email = table(auth.email);
  const mfa = table(auth.mfa);
  const totp = table(mfa.totp);
  const rate = table(auth.rate_limit);
  const external: Config["auth"]["external"] = {};
  for (const [name, value] of Object.entries(table(auth.external))) {
    external[name] = { enabled: bool(table(value).enabled, false) };
  }
  const templates: Config["auth"]["email"]["templates"] = {};
  for (const [name, value] of Object.entries(table(email.template))) {
    const t = table(value);
    templates[name] = { subject: str(t.subject), contentPath: str(t.content_path) };
  }
  return {
    api: {
      port: num(api.port, 54321),
      schemas: strs(api.schemas, ["public", "graphql_public"]),
      maxRows: num(api.max_rows, 1000),
    },
    db: {
      port: num(db.port, 54322),
      seed: { enabled: bool(seed.enabled, true), sqlPaths: strs(seed.sql_paths, ["./seed.sql"]) },
    },
    inbucket: { enabled: bool(inbucket.enabled, true), port: num(inbucket.port, 54324) },
    auth: {
      siteUrl: str(auth.site_url) ?? "http://127.0.0.1:3000",
      additionalRedirectUrls: strs(auth.additional_redirect_urls, ["https://127.0.0.1:3000"]),
      jwtExpiry: num(auth.jwt_expiry, 3600),
      enableSignup: bool(auth.enable_signup, true),
      enableAnonymousSignIns: bool(auth.enable_anonymous_sign_ins, false),
      enableRefreshTokenRotation: bool(auth.enable_refresh_token_rotation, true),
      refreshTokenReuseInterval: num(auth.refresh_token_reuse_interval, 10),
      enableManualLinking: bool(auth.enable_manual_linking, false),
      minimumPasswordLength: num(auth.minimum_password_length, 6),
      email: {
        enableSignup: bool(email.enable_signup, true),
        enableConfirmations: bool(email.enable_confirmations, false),
        doubleConfirmChanges: bool(email.double_confirm_changes, true),
        securePasswordChange: bool(email.secure_password_change, false),
        maxFrequencySeconds: duration(email.max_frequency, 1),
        otpLength: num(email.otp_length, 6),
        otpExpiry: num(email.otp_expiry, 3600),
        templates,
      },
      mfa: {
        maxEnrolledFactors: num(mfa.max_enrolled_factors, 10),
        totp: {
          enrollEnabled: bool(totp.enroll_enabled, false),
          verifyEnabled: bool(totp.verify_enabled, false),
        },
      },
      external,
      rateLimit: {
        emailSent: num(rate.email_sent, 2),
        tokenRefresh: num(rate.token_refresh, 150),
        signInSignUps: num(rate.sign_in_sign_ups, 30),
        tokenVerifications: num(rate.token_verifications, 30),
        anonymousUsers: num(rate.anonymous_users, 30),
        mfaChallengeAndVerify: 15,
      },
    },
  };
}

const table = (v: unknown): Table => (v && typeof v === "object" ? (v as Table) : {});
const str = (v: unknown) => (typeof v === "string" ? v : undefined);
const num = (v: unknown, d: number) => (typeof v === "number" ? v : d);
const bool = (v: unknown, d: boolean) => (typeof v === "boolean" ? v : d);
const strs = (v: unknown, d: string[]) =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : d;

/** Go durations as the CLI writes them ("1s", "1m0s", "60s"); a bare number is seconds. */
function duration(v: unknown, d: number): number {
  if (typeof v === "number") return v;
  if (typeof v !== "string") return d;
  let total = 0;
  for (const [, n, unit] of v.matchAll(/(\d+(?:\.\d+)?)(h|m|s|ms)/g)) {
    const factor = { h: 3600, m: 60, s: 1, ms: 0.001 }[unit as "h" | "m" | "s" | "ms"];
    total += Number(n) * factor;
  }
  return total;
}

export type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] };

function merge(base: unknown, over: unknown): unknown {
  if (!over || typeof over !== "object" || Array.isArray(over)) return over ?? base;
  const out: Table = { ...(base as Table) };
  for (const [k, v] of Object.entries(over)) out[k] = v === undefined ? out[k] : merge(out[k], v);
  return out;
}

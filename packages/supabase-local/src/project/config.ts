import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parse, TomlError } from "smol-toml";
import { parseGoDuration } from "./go-duration.ts";
import { projectPaths } from "./paths.ts";

/** The parts of supabase/config.toml the local backend honours, with the Supabase CLI's defaults. */
export interface Config {
  api: {
    port: number;
    schemas: string[];
    extraSearchPath: string[];
    maxRows: number;
    /**
     * [api] auto_expose_new_tables, as the Supabase CLI 3.1.0 applies it to a new database: unset or
     * true, the API roles (anon, authenticated, service_role) keep their default privileges on what
     * `postgres` creates in `public`; false revokes them before the migrations run, so each table,
     * sequence and function needs its own GRANT, as on a hosted project with "Default privileges
     * for new entities" off. Like the CLI, it takes effect on a fresh database (a reset).
     */
    autoExposeNewTables: boolean;
  };
  /** [db]: the Postgres port (54322), [db.migrations] and [db.seed], the seed files of a fresh
   * database. */
  db: {
    port: number;
    /** [db.migrations] enabled: false starts the database without supabase/migrations, as the CLI. */
    migrations: { enabled: boolean };
    /** sql_paths are relative to supabase/ and may hold `*` globs, as the CLI reads them. */
    seed: { enabled: boolean; sqlPaths: string[] };
    /** [db.vault]: Vault secrets by name, `env(…)` already substituted (project/vault-secrets.ts). */
    vault: Record<string, string>;
  };
  /**
   * [local_smtp]: the mail catcher (Mailpit in the CLI); its API port (54324), and the sender Auth
   * writes from (`admin_email`, `sender_name`: the CLI's "admin@email.com" and "Admin"). The CLI's
   * old name, [inbucket], is refused as the CLI 3 refuses it.
   */
  localSmtp: { enabled: boolean; port: number; adminEmail: string; senderName: string };
  /** [storage]: Storage at /storage/v1 (sizes in bytes, from the CLI's "50MiB" strings). */
  storage: {
    enabled: boolean;
    /** [storage] file_size_limit: the largest upload of any bucket (the CLI's default 50MiB). */
    fileSizeLimit: number;
    /** [storage.image_transformation] enabled: /render/image (off when the table is absent). */
    imageTransformation: { enabled: boolean };
    /** [storage.vector]: vector buckets at /vector (on, 10 buckets of 5 indexes: the CLI's). */
    vector: { enabled: boolean; maxBuckets: number; maxIndexes: number };
    /**
     * [storage.s3_protocol] enabled: the S3 endpoint at /storage/v1/s3. Off without the table, as
     * the CLI reads it (its template, and so `supabase init`, turns it on).
     */
    s3Protocol: { enabled: boolean };
    /** [storage.buckets.<name>]: created or updated, and objects_path uploaded, on a fresh start. */
    buckets: Record<string, StorageBucketConfig>;
  };
  auth: {
    siteUrl: string;
    /** [auth] external_url: the public URL of Auth (email links, OAuth callbacks, the default
     * issuer); unset: the backend's own URL + /auth/v1, as the CLI's default. */
    externalUrl?: string;
    /** [auth] jwt_issuer: the `iss` of access tokens (GOTRUE_JWT_ISSUER); unset: externalUrl. */
    jwtIssuer?: string;
    additionalRedirectUrls: string[];
    jwtExpiry: number;
    enableSignup: boolean;
    enableAnonymousSignIns: boolean;
    enableRefreshTokenRotation: boolean;
    refreshTokenReuseInterval: number;
    enableManualLinking: boolean;
    minimumPasswordLength: number;
    /** [auth] password_requirements, as the CLI passes it to Auth (GOTRUE_PASSWORD_REQUIRED_CHARACTERS):
     * the sets a new password needs a character of each of. */
    passwordRequiredCharacters: string[];
    /**
     * bcrypt cost of new password hashes: 10 as the real service (Go's bcrypt.DefaultCost). Not a
     * config.toml key; a test run may lower it to bcrypt's minimum, 4, as upstream's own tests do
     * (crypto.QuickHashCost): a hash then takes about 1 ms instead of 70.
     */
    passwordHashCost: number;
    /**
     * [auth.sessions] timebox and inactivity_timeout (Go durations; unset or 0 is none): a
     * session older than the timebox, or not refreshed for the timeout, refreshes no more
     * (session_expired), as Auth's Session.CheckValidity. In milliseconds.
     */
    sessions: { timeboxMs: number; inactivityTimeoutMs: number };
    email: {
      /** [auth.email] enabled: the email provider (sign-up and sign-in with email; hosted's
       * external_email_enabled). The CLI still reads the deprecated enable_signup, with a warning. */
      enabled: boolean;
      enableConfirmations: boolean;
      doubleConfirmChanges: boolean;
      securePasswordChange: boolean;
      maxFrequencySeconds: number;
      otpLength: number;
      otpExpiry: number;
      templates: Record<string, { subject?: string; contentPath?: string }>;
      /** [auth.email.notification.<kind>]: security notices (password_changed, email_changed,
       * identity_linked, identity_unlinked, mfa_factor_enrolled, mfa_factor_unenrolled). */
      notifications: Record<string, { enabled: boolean; subject?: string; contentPath?: string }>;
    };
    mfa: {
      maxEnrolledFactors: number;
      totp: { enrollEnabled: boolean; verifyEnabled: boolean };
      /** [auth.mfa.web_authn]: WebAuthn as a second factor. */
      webAuthn: { enrollEnabled: boolean; verifyEnabled: boolean };
      /**
       * [auth.mfa.phone]: a code by SMS as a second factor. otp_length and template shape the SMS
       * of a real provider; none is sent here ([auth.sms.test_otp] numbers get their fixed code).
       */
      phone: {
        enrollEnabled: boolean;
        verifyEnabled: boolean;
        maxFrequencySeconds: number;
        /** The length of a challenge's code (GOTRUE_MFA_PHONE_OTP_LENGTH), for the send SMS hook. */
        otpLength: number;
      };
      /**
       * Recovery codes (GOTRUE_MFA_RECOVERY_CODES_*), a preview of Supabase Auth that hosted
       * projects do not have: the CLI has no config.toml key for them, so enroll_enabled /
       * verify_enabled come from local-backend.toml's [auth.mfa.recovery_codes], off by default.
       * Count, length, attempts and lockout have no key (createLocalBackend's `config` can change
       * them).
       */
      recoveryCodes: {
        enrollEnabled: boolean;
        verifyEnabled: boolean;
        count: number;
        codeLength: number;
        maxVerifyAttempts: number;
        lockoutSeconds: number;
        /** scrypt's cost (log2 N) for new codes: 12; the test backends use less, as for passwords
         * (each verification hashes every unused code). */
        hashCost: number;
      };
    };
    /** [auth.passkey]: passkey sign-in (GOTRUE_PASSKEY_ENABLED). */
    passkey: { enabled: boolean; maxPasskeysPerUser: number };
    /**
     * [auth.web3.solana] and [auth.web3.ethereum]: sign-in with a wallet (auth/api/web3.ts). How
     * long a signed message is good for around its Issued At is Auth's default (10 minutes,
     * GOTRUE_EXTERNAL_WEB3_*_MAXIMUM_VALIDITY_DURATION); config.toml has no key for it.
     */
    web3: Record<"solana" | "ethereum", { enabled: boolean; maximumValidityMs: number }>;
    /** [auth.webauthn]: the relying party of passkeys and WebAuthn factors (GOTRUE_WEBAUTHN_*). */
    webauthn: {
      rpId: string;
      rpDisplayName: string;
      rpOrigins: string[];
      /** GOTRUE_WEBAUTHN_CHALLENGE_EXPIRY_DURATION (5 min); no config.toml key. */
      challengeExpirySeconds: number;
    };
    /** [auth.external.<provider>]: which OAuth providers are on (served by the local provider page). */
    external: Record<string, { enabled: boolean }>;
    /** [auth.captcha] when enabled: the provider and secret CAPTCHA tokens are checked with. */
    captcha?: CaptchaConfig;
    /** [auth.hook.<name>]: the Auth hooks that are on (auth/hooks/). Absent: off. */
    hooks: Partial<Record<HookName, HookConfig>>;
    rateLimit: {
      emailSent: number;
      /** SMS codes an hour, project-wide (GOTRUE_RATE_LIMIT_SMS_SENT). */
      smsSent: number;
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
      /** POST /passkeys/authentication/options per 5 min per IP (GOTRUE_RATE_LIMIT_PASSKEY, 30); no
       * config.toml key. */
      passkey: number;
      /** Web3 sign-ins per 5 min per IP ([auth.rate_limit] web3, GOTRUE_RATE_LIMIT_WEB3, 30). */
      web3: number;
    };
    /** [auth] signing_keys_path, resolved against supabase/ as the CLI does (absolute here). */
    signingKeysPath?: string;
    /** [auth.sms]: phone sign-in. No SMS ever leaves the machine: only test_otp numbers get codes. */
    sms: {
      enableSignup: boolean;
      enableConfirmations: boolean;
      maxFrequencySeconds: number;
      /** [auth.sms.test_otp]: number (without +) -> its fixed code. */
      testOtp: Record<string, string>;
    };
  };
  /**
   * supabase/local-backend.toml: the local backend's own settings, beside the CLI's file. The
   * Supabase CLI refuses or warns on keys it does not know, so nothing local-only goes in
   * config.toml; hosted Supabase keeps these in the dashboard or has no such setting.
   */
  local: LocalSettings;
}

/** [auth.captcha]: a provider the CLI accepts and its secret. */
export interface CaptchaConfig {
  provider: "hcaptcha" | "turnstile";
  secret: string;
}

/** The Auth hooks config.toml can turn on ([auth.hook.<name>], the CLI's names). */
export const HOOK_NAMES = [
  "before_user_created",
  "custom_access_token",
  "mfa_verification_attempt",
  "password_verification_attempt",
  "send_email",
  "send_sms",
] as const;
export type HookName = (typeof HOOK_NAMES)[number];

/** An Auth hook that is on: a Postgres function (`pg-functions://<db>/<schema>/<function>`) or an
 * HTTP endpoint, with the Standard Webhooks secrets (`v1,whsec_…`) its requests are signed with. */
export interface HookConfig {
  uri: string;
  secrets: string[];
}

/** [storage.buckets.<name>], as the CLI reads it (objects_path resolved against supabase/). */
export interface StorageBucketConfig {
  public?: boolean;
  fileSizeLimit?: number;
  allowedMimeTypes?: string[];
  objectsPath?: string;
}

/** supabase/local-backend.toml, read (and validated) by loadConfig. */
export interface LocalSettings {
  /**
   * [auth] sb_forwarded_for: Auth takes the caller's address from `Sb-Forwarded-For` when a
   * server sends it with the secret key (the dashboard's "IP Address Forwarding",
   * GOTRUE_SECURITY_SB_FORWARDED_FOR_ENABLED). Off by default, as on a new hosted project.
   */
  sbForwardedFor: boolean;
  /**
   * [api] cors_origins: origins granted CORS besides those of auth.site_url and
   * auth.additional_redirect_urls (local-only.ts), e.g. another dev server of the project's.
   */
  corsOrigins: string[];
  /** [realtime]: the tenant limits, upstream's defaults unless raised (or lowered). */
  realtime: RealtimeSettings;
}

/**
 * [realtime] of local-backend.toml: upstream's tenant limits under their tenant field names
 * (max_concurrent_users = 200, …), raisable for a bench or a demo; hosted, the dashboard's.
 */
export interface RealtimeSettings {
  maxConcurrentUsers: number;
  maxChannelsPerClient: number;
  maxJoinsPerSecond: number;
  maxEventsPerSecond: number;
  /** Stored, as upstream stores it; v2.102.1 enforces nothing with it. */
  maxBytesPerSecond: number;
  maxPayloadSizeInKb: number;
  maxPresenceEventsPerSecond: number;
  /** A client's presence calls per window (upstream: CLIENT_PRESENCE_MAX_CALLS, 5). */
  maxClientPresenceEventsPerWindow: number;
  /** The window (upstream: CLIENT_PRESENCE_WINDOW_MS, 30 000). */
  clientPresenceWindowMs: number;
  /** The rate counters' tick (upstream: 5 s). Not in the file: tests lower it through `config`. */
  rateCounterTickMs: number;
}

/** Upstream's defaults (config/runtime.exs TENANT_MAX_*, Tenant's field defaults). */
export const REALTIME_DEFAULTS: RealtimeSettings = {
  maxConcurrentUsers: 200,
  maxChannelsPerClient: 100,
  maxJoinsPerSecond: 100,
  maxEventsPerSecond: 100,
  maxBytesPerSecond: 100_000,
  maxPayloadSizeInKb: 3000,
  maxPresenceEventsPerSecond: 1000,
  maxClientPresenceEventsPerWindow: 5,
  clientPresenceWindowMs: 30_000,
  rateCounterTickMs: 5000,
};

type Table = Record<string, unknown>;

/** A Go duration Auth reads (as the CLI passes it on), in milliseconds; unset or negative: 0. */
function goDurationMs(value: unknown, key: string): number {
  if (value === undefined || value === "") return 0;
  if (typeof value !== "string") throw new ConfigError(`${key}: expected a duration such as "24h"`);
  const nanoseconds = parseGoDuration(value);
  if (typeof nanoseconds === "string") throw new ConfigError(`${key}: ${nanoseconds}`);
  return nanoseconds > 0n ? Number(nanoseconds / 1_000_000n) : 0;
}

/** A project setting the backend cannot start with (the CLI prints its message, no stack). */
export class ConfigError extends Error {
  override name = "ConfigError";
}

export interface LoadConfigOptions {
  /** The project whose supabase/config.toml to read (default: the working directory). */
  projectDir?: string;
  /** Another config file instead of the project's. */
  configFile?: string;
  /** The local settings (default: local-backend.toml beside the config file). */
  localFile?: string;
  /** Deep-merged over the file (tests that need another setting). */
  overrides?: DeepPartial<Config>;
  /** Where the CLI's warnings about config.toml go (a deprecated key); default: stderr, as the CLI. */
  warn?: (message: string) => void;
}

/** Reads supabase/config.toml and supabase/local-backend.toml (a missing file = all defaults),
 * with the Supabase CLI's defaults for absent keys; `overrides` is deep-merged on top. */
export function loadConfig(options: LoadConfigOptions = {}): Config {
  const path = options.configFile ?? projectPaths(options.projectDir).configFile;
  const localPath = options.localFile ?? join(dirname(path), LOCAL_FILE);
  const warn = options.warn ?? ((message: string) => console.warn(`WARN: ${message}`));
  const localToml = readToml(localPath);
  const base = fromToml(readToml(path), warn);
  base.auth.mfa.recoveryCodes = {
    ...base.auth.mfa.recoveryCodes,
    ...localRecoveryCodes(localToml, localPath),
  };
  Object.assign(base, { local: fromLocalToml(localToml, localPath) });
  const config = merge(base, options.overrides ?? {}) as Config;
  const keys = config.auth.signingKeysPath;
  if (keys) config.auth.signingKeysPath = resolve(dirname(path), keys);
  // objects_path is relative to supabase/, as the CLI resolves it
  for (const bucket of Object.values(config.storage.buckets))
    if (bucket.objectsPath) bucket.objectsPath = resolve(dirname(path), bucket.objectsPath);
  return config;
}

/** The file the local settings live in, beside config.toml. */
export const LOCAL_FILE = "local-backend.toml";

function readToml(path: string): Table {
  try {
    return substituteEnv(parse(readFileSync(path, "utf8"))) as Table;
  } catch (error) {
    // a file that is not TOML stops the start with the file, the line and the column, as the
    // Supabase CLI refuses it, rather than with a stack trace
    if (error instanceof TomlError)
      throw new ConfigError(`failed to parse config: ${path}: ${error.message}`);
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    return {};
  }
}

function fromToml(toml: Table, warn: (message: string) => void): Omit<Config, "local"> {
  // the Supabase CLI 3's own refusals and deprecations, in its words
  if (toml.inbucket !== undefined)
    throw new ConfigError(
      "[inbucket] in supabase/config.toml is no longer supported. Use [local_smtp] instead.",
    );
  const api = table(toml.api);
  const db = table(toml.db);
  const seed = table(db.seed);
  const localSmtp = table(toml.local_smtp);
  const auth = table(toml.auth);
  const storage = table(toml.storage);
  const buckets: Config["storage"]["buckets"] = {};
  for (const [name, value] of Object.entries(table(storage.buckets))) {
    const b = table(value);
    buckets[name] = {
      public: typeof b.public === "boolean" ? b.public : undefined,
      fileSizeLimit:
        b.file_size_limit === undefined
          ? undefined
          : size(b.file_size_limit, `storage.buckets.${name}.file_size_limit`),
      allowedMimeTypes: Array.isArray(b.allowed_mime_types)
        ? strs(b.allowed_mime_types, [])
        : undefined,
      objectsPath: str(b.objects_path) || undefined,
    };
  }
  const email = table(auth.email);
  const mfa = table(auth.mfa);
  const totp = table(mfa.totp);
  const webAuthnFactor = table(mfa.web_authn);
  const phoneFactor = table(mfa.phone);
  const passkey = table(auth.passkey);
  const webauthn = table(auth.webauthn);
  const notifications: Config["auth"]["email"]["notifications"] = {};
  for (const [name, value] of Object.entries(table(email.notification))) {
    const n = table(value);
    notifications[name] = {
      enabled: bool(n.enabled, false),
      subject: str(n.subject),
      contentPath: str(n.content_path),
    };
  }
  const rate = table(auth.rate_limit);
  const web3 = table(auth.web3);
  const sms = table(auth.sms);
  const testOtp: Config["auth"]["sms"]["testOtp"] = {};
  for (const [phone, code] of Object.entries(table(sms.test_otp))) {
    testOtp[phone.replace(/^\+/, "").replaceAll(" ", "")] = String(code);
  }
  const external: Config["auth"]["external"] = {};
  for (const [name, value] of Object.entries(table(auth.external))) {
    external[name] = { enabled: bool(table(value).enabled, false) };
  }
  const hooks = hookConfigs(table(auth.hook));
  const templates: Config["auth"]["email"]["templates"] = {};
  for (const [name, value] of Object.entries(table(email.template))) {
    const t = table(value);
    templates[name] = { subject: str(t.subject), contentPath: str(t.content_path) };
  }
  return {
    api: {
      port: port(api.port, 54321, "api.port"),
      schemas: strs(api.schemas, ["public", "graphql_public"]),
      extraSearchPath: strs(api.extra_search_path, ["public", "extensions"]),
      maxRows: num(api.max_rows, 1000),
      autoExposeNewTables: bool(api.auto_expose_new_tables, true),
    },
    db: {
      port: port(db.port, 54322, "db.port"),
      migrations: { enabled: bool(table(db.migrations).enabled, true) },
      seed: { enabled: bool(seed.enabled, true), sqlPaths: strs(seed.sql_paths, ["./seed.sql"]) },
      vault: Object.fromEntries(
        Object.entries(table(db.vault)).filter(
          (entry): entry is [string, string] => typeof entry[1] === "string",
        ),
      ),
    },
    localSmtp: {
      enabled: bool(localSmtp.enabled, true),
      port: port(localSmtp.port, 54324, "local_smtp.port"),
      adminEmail: str(localSmtp.admin_email) || "admin@email.com",
      senderName: str(localSmtp.sender_name) ?? "Admin",
    },
    storage: {
      enabled: bool(storage.enabled, true),
      fileSizeLimit: size(storage.file_size_limit ?? "50MiB", "storage.file_size_limit"),
      imageTransformation: { enabled: bool(table(storage.image_transformation).enabled, false) },
      vector: {
        enabled: bool(table(storage.vector).enabled, true),
        maxBuckets: num(table(storage.vector).max_buckets, 10),
        maxIndexes: num(table(storage.vector).max_indexes, 5),
      },
      s3Protocol: { enabled: bool(table(storage.s3_protocol).enabled, false) },
      buckets,
    },
    auth: {
      siteUrl: str(auth.site_url) ?? "http://127.0.0.1:3000",
      externalUrl: str(auth.external_url) || undefined,
      jwtIssuer: str(auth.jwt_issuer) || undefined,
      additionalRedirectUrls: strs(auth.additional_redirect_urls, ["https://127.0.0.1:3000"]),
      jwtExpiry: num(auth.jwt_expiry, 3600),
      enableSignup: bool(auth.enable_signup, true),
      enableAnonymousSignIns: bool(auth.enable_anonymous_sign_ins, false),
      enableRefreshTokenRotation: bool(auth.enable_refresh_token_rotation, true),
      refreshTokenReuseInterval: num(auth.refresh_token_reuse_interval, 10),
      enableManualLinking: bool(auth.enable_manual_linking, false),
      minimumPasswordLength: num(auth.minimum_password_length, 6),
      passwordRequiredCharacters: passwordRequirements(auth.password_requirements),
      passwordHashCost: 10,
      sessions: {
        timeboxMs: goDurationMs(table(auth.sessions).timebox, "auth.sessions.timebox"),
        inactivityTimeoutMs: goDurationMs(
          table(auth.sessions).inactivity_timeout,
          "auth.sessions.inactivity_timeout",
        ),
      },
      email: {
        enabled: emailEnabled(email, warn),
        enableConfirmations: bool(email.enable_confirmations, false),
        doubleConfirmChanges: bool(email.double_confirm_changes, true),
        securePasswordChange: bool(email.secure_password_change, false),
        maxFrequencySeconds: duration(email.max_frequency, 1),
        otpLength: num(email.otp_length, 6),
        otpExpiry: num(email.otp_expiry, 3600),
        templates,
        notifications,
      },
      mfa: {
        maxEnrolledFactors: num(mfa.max_enrolled_factors, 10),
        totp: {
          enrollEnabled: bool(totp.enroll_enabled, false),
          verifyEnabled: bool(totp.verify_enabled, false),
        },
        webAuthn: {
          enrollEnabled: bool(webAuthnFactor.enroll_enabled, false),
          verifyEnabled: bool(webAuthnFactor.verify_enabled, false),
        },
        phone: {
          enrollEnabled: bool(phoneFactor.enroll_enabled, false),
          verifyEnabled: bool(phoneFactor.verify_enabled, false),
          maxFrequencySeconds: duration(phoneFactor.max_frequency, 5),
          otpLength: num(phoneFactor.otp_length, 6),
        },
        recoveryCodes: {
          enrollEnabled: false,
          verifyEnabled: false,
          count: 10,
          codeLength: 16,
          maxVerifyAttempts: 10,
          lockoutSeconds: 15 * 60,
          hashCost: 12,
        },
      },
      passkey: { enabled: bool(passkey.enabled, false), maxPasskeysPerUser: 10 },
      web3: {
        solana: { enabled: bool(table(web3.solana).enabled, false), maximumValidityMs: 600_000 },
        ethereum: {
          enabled: bool(table(web3.ethereum).enabled, false),
          maximumValidityMs: 600_000,
        },
      },
      webauthn: {
        rpId: str(webauthn.rp_id) ?? "",
        rpDisplayName: str(webauthn.rp_display_name) ?? "",
        rpOrigins: strs(webauthn.rp_origins, []),
        challengeExpirySeconds: 300,
      },
      external,
      captcha: captchaConfig(table(auth.captcha)),
      hooks,
      rateLimit: {
        emailSent: num(rate.email_sent, 2),
        smsSent: num(rate.sms_sent, 30),
        tokenRefresh: num(rate.token_refresh, 150),
        signInSignUps: num(rate.sign_in_sign_ups, 30),
        tokenVerifications: num(rate.token_verifications, 30),
        anonymousUsers: num(rate.anonymous_users, 30),
        mfaChallengeAndVerify: 15,
        passkey: 30,
        web3: num(rate.web3, 30),
      },
      signingKeysPath: str(auth.signing_keys_path) || undefined,
      sms: {
        enableSignup: bool(sms.enable_signup, false),
        enableConfirmations: bool(sms.enable_confirmations, false),
        maxFrequencySeconds: duration(sms.max_frequency, 5),
        testOtp,
      },
    },
  };
}

const LOWER = "abcdefghijklmnopqrstuvwxyz";
const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGITS = "0123456789";
/** The character sets of each `password_requirements` value (the CLI's ToChar, as Auth splits it). */
const PASSWORD_REQUIREMENTS: Record<string, string[]> = {
  "": [],
  letters_digits: [LOWER + UPPER, DIGITS],
  lower_upper_letters_digits: [LOWER, UPPER, DIGITS],
  lower_upper_letters_digits_symbols: [LOWER, UPPER, DIGITS, "!@#$%^&*()_+-=[]{};'\\:\"|<>?,./`~"],
};

function passwordRequirements(value: unknown): string[] {
  const sets = PASSWORD_REQUIREMENTS[typeof value === "string" ? value : ""];
  if (value !== undefined && (typeof value !== "string" || !sets))
    throw new ConfigError(
      `Invalid config for auth.password_requirements: must be one of [${Object.keys(PASSWORD_REQUIREMENTS).join(" ")}]`,
    );
  return sets ?? [];
}

/** [auth.captcha], checked as the CLI checks it; undefined when off. */
function captchaConfig(captcha: Table): CaptchaConfig | undefined {
  const provider = captcha.provider;
  if (provider !== undefined && provider !== "hcaptcha" && provider !== "turnstile")
    throw new ConfigError(
      "Invalid config for auth.captcha.provider: must be one of [hcaptcha turnstile]",
    );
  if (!bool(captcha.enabled, false)) return undefined;
  if (!provider) throw new ConfigError("Missing required field in config: auth.captcha.provider");
  const secret = (str(captcha.secret) ?? "").trim();
  if (!secret) throw new ConfigError("Missing required field in config: auth.captcha.secret");
  return { provider, secret };
}

/** Names Auth takes for a hook function's schema and name (conf.postgresNamesRegexp). */
const POSTGRES_NAME = /^[a-zA-Z_][a-zA-Z0-9_]{0,62}$/;
/** A Standard Webhooks secret as the CLI requires it (config.go hookSecretPattern). */
const HOOK_SECRET = /^v1,whsec_[A-Za-z0-9+/=]{32,88}$/;
/** The hosts Auth calls over plain http (ValidateExtensibilityPoint). */
const HTTP_HOOK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]", "host.docker.internal"]);

/**
 * [auth.hook.<name>] tables: each enabled one checked as the CLI checks it (hookConfig.validate)
 * and then as Auth does when it starts (ValidateExtensibilityPoint), with their messages.
 */
function hookConfigs(hook: Table): Partial<Record<HookName, HookConfig>> {
  const hooks: Partial<Record<HookName, HookConfig>> = {};
  for (const name of HOOK_NAMES) {
    const entry = table(hook[name]);
    if (!bool(entry.enabled, false)) continue;
    const uri = str(entry.uri) ?? "";
    const secretsValue = str(entry.secrets) ?? "";
    if (!uri) throw new ConfigError(`Missing required field in config: auth.hook.${name}.uri`);
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      throw new ConfigError(`failed to parse template url: ${uri}`);
    }
    const secrets = secretsValue.split("|").filter(Boolean);
    switch (url.protocol.toLowerCase()) {
      case "http:":
      case "https:":
        if (!secretsValue)
          throw new ConfigError(`Missing required field in config: auth.hook.${name}.secrets`);
        if (!secrets.every((secret) => HOOK_SECRET.test(secret)))
          throw new ConfigError(
            `Invalid hook config: auth.hook.${name}.secrets must be formatted as "v1,whsec_<base64_encoded_secret>" with a minimum length of 32 characters.`,
          );
        if (url.protocol === "http:" && !HTTP_HOOK_HOSTS.has(url.hostname))
          throw new ConfigError(
            `auth.hook.${name}.uri: only localhost, 127.0.0.1, and ::1 are supported with http`,
          );
        break;
      case "pg-functions:": {
        if (secretsValue)
          throw new ConfigError(
            `Invalid hook config: auth.hook.${name}.secrets is unsupported for pg-functions URI`,
          );
        const [, schema, fn] = url.pathname.split("/");
        if (schema === undefined || fn === undefined)
          throw new ConfigError(`auth.hook.${name}.uri: URI path does not contain enough parts`);
        if (!POSTGRES_NAME.test(schema))
          throw new ConfigError(`auth.hook.${name}.uri: invalid schema name: ${schema}`);
        if (!POSTGRES_NAME.test(fn))
          throw new ConfigError(`auth.hook.${name}.uri: invalid table name: ${fn}`);
        break;
      }
      default:
        throw new ConfigError(
          `Invalid hook config: auth.hook.${name}.uri should be a HTTP, HTTPS, or pg-functions URI`,
        );
    }
    hooks[name] = { uri, secrets };
  }
  return hooks;
}

/**
 * [auth.email] enabled, or the deprecated enable_signup the CLI still reads (with its warning);
 * the new key wins when both are there.
 */
function emailEnabled(email: Table, warn: (message: string) => void): boolean {
  if (email.enable_signup !== undefined)
    warn(
      "auth.email.enable_signup is deprecated and will be removed in v4, use auth.email.enabled instead.",
    );
  return bool(email.enabled, bool(email.enable_signup, true));
}

/**
 * Every key local-backend.toml may hold, each with its reader (a value of the wrong kind is a
 * ConfigError naming the key). Unlike config.toml, whose keys the CLI owns, an unknown key here is
 * refused too: a misspelt or misplaced setting would otherwise be silently off. A new setting is a
 * line here, a field of LocalSettings and its line in fromLocalToml (and the README's list).
 */
const LOCAL_SCHEMA: Schema = {
  auth: {
    sb_forwarded_for: boolean,
    mfa: { recovery_codes: { enroll_enabled: boolean, verify_enabled: boolean } },
  },
  api: { cors_origins: origins },
  realtime: {
    max_concurrent_users: positive,
    max_channels_per_client: positive,
    max_joins_per_second: positive,
    max_events_per_second: positive,
    max_bytes_per_second: positive,
    max_payload_size_in_kb: positive,
    max_presence_events_per_second: positive,
    max_client_presence_events_per_window: positive,
    client_presence_window_ms: positive,
  },
};

type Reader = (value: unknown, key: string, file: string) => unknown;
type Schema = { [key: string]: Schema | Reader };

/** [auth.mfa.recovery_codes] of local-backend.toml (checked with the rest by fromLocalToml). */
function localRecoveryCodes(toml: Table, file: string) {
  const codes = table(table(table(checked(toml, LOCAL_SCHEMA, "", file).auth).mfa).recovery_codes);
  return {
    enrollEnabled: (codes.enroll_enabled as boolean | undefined) ?? false,
    verifyEnabled: (codes.verify_enabled as boolean | undefined) ?? false,
  };
}

function fromLocalToml(toml: Table, file: string): LocalSettings {
  const local = checked(toml, LOCAL_SCHEMA, "", file);
  const auth = table(local.auth);
  const api = table(local.api);
  const realtime = table(local.realtime) as Record<string, number | undefined>;
  const d = REALTIME_DEFAULTS;
  return {
    sbForwardedFor: (auth.sb_forwarded_for as boolean | undefined) ?? false,
    corsOrigins: (api.cors_origins as string[] | undefined) ?? [],
    realtime: {
      maxConcurrentUsers: realtime.max_concurrent_users ?? d.maxConcurrentUsers,
      maxChannelsPerClient: realtime.max_channels_per_client ?? d.maxChannelsPerClient,
      maxJoinsPerSecond: realtime.max_joins_per_second ?? d.maxJoinsPerSecond,
      maxEventsPerSecond: realtime.max_events_per_second ?? d.maxEventsPerSecond,
      maxBytesPerSecond: realtime.max_bytes_per_second ?? d.maxBytesPerSecond,
      maxPayloadSizeInKb: realtime.max_payload_size_in_kb ?? d.maxPayloadSizeInKb,
      maxPresenceEventsPerSecond:
        realtime.max_presence_events_per_second ?? d.maxPresenceEventsPerSecond,
      maxClientPresenceEventsPerWindow:
        realtime.max_client_presence_events_per_window ?? d.maxClientPresenceEventsPerWindow,
      clientPresenceWindowMs: realtime.client_presence_window_ms ?? d.clientPresenceWindowMs,
      rateCounterTickMs: d.rateCounterTickMs,
    },
  };
}

/** The table with each value read by its schema entry; unknown keys and wrong kinds throw. */
function checked(toml: Table, schema: Schema, prefix: string, file: string): Table {
  const out: Table = {};
  for (const [key, value] of Object.entries(toml)) {
    const name = `${prefix}${key}`;
    const entry = schema[key];
    if (entry === undefined) {
      const known = Object.keys(schema).map((k) => `${prefix}${k}`);
      throw new ConfigError(
        `'${name}' in ${file} is not a setting of the local backend (known here: ${known.join(", ")})`,
      );
    }
    if (typeof entry === "function") out[key] = entry(value, name, file);
    else if (value && typeof value === "object" && !Array.isArray(value))
      out[key] = checked(value as Table, entry, `${name}.`, file);
    else throw new ConfigError(`'${name}' in ${file} must be a table ([${name}])`);
  }
  return out;
}

function positive(value: unknown, key: string, file: string): number {
  if (typeof value === "number" && Number.isInteger(value) && value > 0) return value;
  throw new ConfigError(
    `'${key}' in ${file} must be a whole number above 0, not ${JSON.stringify(value)}`,
  );
}

function boolean(value: unknown, key: string, file: string): boolean {
  if (typeof value === "boolean") return value;
  throw new ConfigError(`'${key}' in ${file} must be true or false, not ${JSON.stringify(value)}`);
}

/**
 * Origins as a browser sends them (scheme://host[:port], no path, no trailing slash); `*` and
 * `**` in the host or port match as in additional_redirect_urls (local-only.ts).
 */
function origins(value: unknown, key: string, file: string): string[] {
  const list = Array.isArray(value) ? value : [value];
  return list.map((origin) => {
    const ok =
      typeof origin === "string" &&
      /^https?:\/\/[^/?#\s]+$/.test(origin) &&
      (/[*?]/.test(origin) || (URL.canParse(origin) && new URL(origin).origin === origin));
    if (!Array.isArray(value) || !ok) {
      throw new ConfigError(
        `'${key}' in ${file} must be a list of origins such as "http://localhost:3000" (scheme, host and port, no path), not ${JSON.stringify(Array.isArray(value) ? origin : value)}`,
      );
    }
    return origin as string;
  });
}

/**
 * The CLI's env() substitution (LoadEnvHook): a string value that is exactly `env(NAME)` becomes
 * the variable's value when it is set and not empty; otherwise it stays as written. Array items
 * and nested tables too.
 */
function substituteEnv(value: unknown): unknown {
  if (typeof value === "string") {
    const match = /^env\((.*)\)$/.exec(value);
    const env = match ? process.env[match[1] ?? ""] : undefined;
    return env ? env : value;
  }
  if (Array.isArray(value)) return value.map(substituteEnv);
  if (value && typeof value === "object" && !(value instanceof Date)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteEnv(v)]));
  }
  return value;
}

const table = (v: unknown): Table => (v && typeof v === "object" ? (v as Table) : {});
const str = (v: unknown) => (typeof v === "string" ? v : undefined);
const num = (v: unknown, d: number) => (typeof v === "number" ? v : d);

/**
 * A port number, 0 to 65535 (the CLI reads its ports as uint16 and refuses anything else): a
 * start with another number would fail later, in Node's listen, with a stack trace.
 */
function port(v: unknown, d: number, key: string): number {
  const value = num(v, d);
  if (Number.isInteger(value) && value >= 0 && value <= 65535) return value;
  throw new ConfigError(`'${key}' in config.toml must be a port number (0 to 65535), not ${value}`);
}

/**
 * A size as the CLI reads it (go-units RAMInBytes: "50MiB", "50MB", "1.5GB", binary multiples
 * either way) or a number of bytes.
 */
function size(v: unknown, key: string): number {
  if (typeof v === "number" && v >= 0) return v;
  const match = typeof v === "string" ? /^(\d+(?:\.\d+)?)\s*([kmgtp])?i?b?$/i.exec(v.trim()) : null;
  if (!match) throw new ConfigError(`failed to parse ${key}: invalid size: '${String(v)}'`);
  const power = " kmgtp".indexOf((match[2] ?? " ").toLowerCase());
  return Math.floor(Number(match[1]) * 1024 ** power);
}
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

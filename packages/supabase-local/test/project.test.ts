// config.toml [db.seed] sql_paths resolved as the Supabase CLI resolves them: relative to
// supabase/, in the order listed, globs sorted by name, each file once.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { ConfigError, loadConfig, seedFiles } from "../src/index.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "seed-paths-"));
  await mkdir(join(dir, "seeds"));
  for (const name of ["seed.sql", "seeds/b.sql", "seeds/a.sql", "seeds/notes.txt"])
    await writeFile(join(dir, name), "");
});
afterAll(() => rm(dir, { recursive: true, force: true }));

test("sql_paths: in order, globs sorted, duplicates once, a missing literal path kept (skipped later)", async () => {
  const files = await seedFiles(dir, ["./seed.sql", "./seeds/*.sql", "seeds/a.sql", "./none.sql"]);
  expect(files).toEqual([
    join(dir, "seed.sql"),
    join(dir, "seeds/a.sql"),
    join(dir, "seeds/b.sql"),
    join(dir, "none.sql"),
  ]);
  expect(await seedFiles(dir, ["./nowhere/*.sql"])).toEqual([]);
});

test("a config.toml that is not TOML is refused with its path, line and column", async () => {
  const file = join(dir, "broken.toml");
  await writeFile(file, "[api]\nport = 54321\nthis is = not toml\n");
  let refused: unknown;
  try {
    loadConfig({ configFile: file });
  } catch (error) {
    refused = error;
  }
  expect(refused).toBeInstanceOf(ConfigError);
  const { message } = refused as ConfigError;
  expect(message.startsWith(`failed to parse config: ${file}: `)).toBe(true);
  // smol-toml's own account: what is wrong, then the line, with a caret under the column
  expect(message).toContain("3:  this is = not toml");
});

test("a port that is not a port number is refused, naming its key, as the CLI refuses it", async () => {
  for (const [toml, key, value] of [
    ["[api]\nport = 99999\n", "api.port", "99999"],
    ["[db]\nport = -1\n", "db.port", "-1"],
    ["[local_smtp]\nport = 543.5\n", "local_smtp.port", "543.5"],
  ] as const) {
    const file = join(dir, "ports.toml");
    await writeFile(file, toml);
    expect(() => loadConfig({ configFile: file })).toThrow(
      new ConfigError(`'${key}' in config.toml must be a port number (0 to 65535), not ${value}`),
    );
  }
});

test("[db], [db.migrations], [db.seed] and [local_smtp] have the CLI's defaults", async () => {
  const config = loadConfig({ configFile: join(dir, "no-config.toml") });
  expect(config.db).toEqual({
    port: 54322,
    migrations: { enabled: true },
    seed: { enabled: true, sqlPaths: ["./seed.sql"] },
    vault: {},
  });
  expect(config.localSmtp).toEqual({
    enabled: true,
    port: 54324,
    adminEmail: "admin@email.com",
    senderName: "Admin",
  });
  const sender = join(dir, "sender.toml");
  await writeFile(
    sender,
    '[local_smtp]\nadmin_email = "notes@example.com"\nsender_name = "Notes"\n',
  );
  expect(loadConfig({ configFile: sender }).localSmtp).toMatchObject({
    adminEmail: "notes@example.com",
    senderName: "Notes",
  });
  const file = join(dir, "migrations-off.toml");
  await writeFile(file, "[db.migrations]\nenabled = false\n");
  expect(loadConfig({ configFile: file }).db.migrations).toEqual({ enabled: false });
});

test("[inbucket] is refused with the Supabase CLI 3's message", async () => {
  const file = join(dir, "inbucket.toml");
  await writeFile(file, "[inbucket]\nenabled = true\nport = 54324\n");
  expect(() => loadConfig({ configFile: file })).toThrow(
    new ConfigError(
      "[inbucket] in supabase/config.toml is no longer supported. Use [local_smtp] instead.",
    ),
  );
});

test("[auth.email] enabled, and the deprecated enable_signup with the CLI's warning", async () => {
  const warnings: string[] = [];
  const warn = (message: string) => warnings.push(message);
  const load = async (toml: string) => {
    const file = join(dir, "email.toml");
    await writeFile(file, toml);
    return loadConfig({ configFile: file, warn }).auth.email.enabled;
  };
  expect(await load("")).toBe(true);
  expect(await load("[auth.email]\nenabled = false\n")).toBe(false);
  expect(warnings).toEqual([]);
  expect(await load("[auth.email]\nenable_signup = false\n")).toBe(false);
  expect(await load("[auth.email]\nenable_signup = false\nenabled = true\n")).toBe(true);
  expect(warnings).toEqual(
    Array(2).fill(
      "auth.email.enable_signup is deprecated and will be removed in v4, use auth.email.enabled instead.",
    ),
  );
});

test("recovery codes: off by default, on from local-backend.toml, never from config.toml", async () => {
  const project = await mkdtemp(join(tmpdir(), "recovery-codes-"));
  try {
    const configFile = join(project, "config.toml");
    const localFile = join(project, "local-backend.toml");
    await writeFile(configFile, "[auth.mfa.recovery_codes]\nenroll_enabled = true\n");
    const codes = () => loadConfig({ configFile }).auth.mfa.recoveryCodes;
    expect(codes()).toMatchObject({ enrollEnabled: false, verifyEnabled: false });
    await writeFile(localFile, "[auth.mfa.recovery_codes]\nenroll_enabled = true\n");
    expect(codes()).toMatchObject({ enrollEnabled: true, verifyEnabled: false, count: 10 });
    await writeFile(localFile, "[auth.mfa.recovery_codes]\nverify_enabled = 1\n");
    expect(codes).toThrow(
      new ConfigError(
        `'auth.mfa.recovery_codes.verify_enabled' in ${localFile} must be true or false, not 1`,
      ),
    );
  } finally {
    await rm(project, { recursive: true, force: true });
  }
});

test("[auth.mfa.phone] and [auth.rate_limit] sms_sent: the CLI's defaults, and as written", async () => {
  const defaults = loadConfig({ configFile: join(dir, "no-config.toml") });
  expect(defaults.auth.mfa.phone).toEqual({
    enrollEnabled: false,
    verifyEnabled: false,
    maxFrequencySeconds: 5,
    otpLength: 6,
  });
  expect(defaults.auth.rateLimit.smsSent).toBe(30);
  const file = join(dir, "phone-mfa.toml");
  await writeFile(
    file,
    `[auth.rate_limit]\nsms_sent = 7\n[auth.mfa.phone]\nenroll_enabled = true\nverify_enabled = true\nmax_frequency = "1m"\notp_length = 8\n`,
  );
  const config = loadConfig({ configFile: file });
  expect(config.auth.mfa.phone).toEqual({
    enrollEnabled: true,
    verifyEnabled: true,
    maxFrequencySeconds: 60,
    otpLength: 8,
  });
  expect(config.auth.rateLimit.smsSent).toBe(7);
});

test("[auth.web3.*] and [auth.rate_limit] web3: off and 30 by default, and as written", async () => {
  const defaults = loadConfig({ configFile: join(dir, "no-config.toml") });
  expect(defaults.auth.web3).toEqual({
    solana: { enabled: false, maximumValidityMs: 600_000 },
    ethereum: { enabled: false, maximumValidityMs: 600_000 },
  });
  expect(defaults.auth.rateLimit.web3).toBe(30);
  const file = join(dir, "web3.toml");
  await writeFile(file, `[auth.rate_limit]\nweb3 = 5\n[auth.web3.ethereum]\nenabled = true\n`);
  const config = loadConfig({ configFile: file });
  expect(config.auth.web3.ethereum.enabled).toBe(true);
  expect(config.auth.web3.solana.enabled).toBe(false);
  expect(config.auth.rateLimit.web3).toBe(5);
});

test("[auth.hook.*]: an enabled hook is read with its secrets, and one the CLI or Auth would refuse stops the start with their message", async () => {
  const load = async (hook: string) => {
    const file = join(dir, "hooks.toml");
    await writeFile(file, `[auth.hook.custom_access_token]\nenabled = true\n${hook}`);
    return () => loadConfig({ configFile: file });
  };
  const secret = `v1,whsec_${"a".repeat(32)}`;
  const ok = await load(`uri = "pg-functions://postgres/public/claims_hook"\n`);
  expect(ok().auth.hooks).toEqual({
    custom_access_token: { uri: "pg-functions://postgres/public/claims_hook", secrets: [] },
  });
  const http = await load(`uri = "http://localhost:9000/hook"\nsecrets = "${secret}|${secret}"\n`);
  expect(http().auth.hooks.custom_access_token?.secrets).toEqual([secret, secret]);
  const off = join(dir, "hook-off.toml");
  await writeFile(off, `[auth.hook.send_email]\nenabled = false\nuri = "nonsense"\n`);
  expect(loadConfig({ configFile: off }).auth.hooks).toEqual({});

  for (const [hook, message] of [
    ["", "Missing required field in config: auth.hook.custom_access_token.uri"],
    [
      'uri = "ftp://example.com/hook"\n',
      "Invalid hook config: auth.hook.custom_access_token.uri should be a HTTP, HTTPS, or pg-functions URI",
    ],
    [
      'uri = "https://example.com/hook"\n',
      "Missing required field in config: auth.hook.custom_access_token.secrets",
    ],
    [
      'uri = "https://example.com/hook"\nsecrets = "whsec_abc"\n',
      'Invalid hook config: auth.hook.custom_access_token.secrets must be formatted as "v1,whsec_<base64_encoded_secret>" with a minimum length of 32 characters.',
    ],
    [
      `uri = "http://example.com/hook"\nsecrets = "${secret}"\n`,
      "auth.hook.custom_access_token.uri: only localhost, 127.0.0.1, and ::1 are supported with http",
    ],
    [
      `uri = "pg-functions://postgres/public/hook"\nsecrets = "${secret}"\n`,
      "Invalid hook config: auth.hook.custom_access_token.secrets is unsupported for pg-functions URI",
    ],
    [
      'uri = "pg-functions://postgres/public"\n',
      "auth.hook.custom_access_token.uri: URI path does not contain enough parts",
    ],
    [
      'uri = "pg-functions://postgres/public/drop-table"\n',
      "auth.hook.custom_access_token.uri: invalid table name: drop-table",
    ],
  ] as const) {
    expect(await load(hook)).toThrow(new ConfigError(message));
  }
});

test("password_requirements: the CLI's names, each the sets Auth is given; any other is refused", async () => {
  const load = async (value: string) => {
    const file = join(dir, "password.toml");
    await writeFile(file, `[auth]\npassword_requirements = ${value}\n`);
    return () => loadConfig({ configFile: file }).auth.passwordRequiredCharacters;
  };
  expect((await load('""'))()).toEqual([]);
  expect((await load('"letters_digits"'))()).toEqual([
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "0123456789",
  ]);
  expect((await load('"lower_upper_letters_digits_symbols"'))()).toHaveLength(4);
  expect(await load('"symbols"')).toThrow(
    new ConfigError(
      "Invalid config for auth.password_requirements: must be one of [ letters_digits lower_upper_letters_digits lower_upper_letters_digits_symbols]",
    ),
  );
});

test("[auth.captcha]: read when enabled, refused as the CLI refuses it without a provider or a secret", async () => {
  const load = async (toml: string) => {
    const file = join(dir, "captcha.toml");
    await writeFile(file, `[auth.captcha]\n${toml}`);
    return () => loadConfig({ configFile: file }).auth.captcha;
  };
  expect(
    (
      await load(
        'enabled = true\nprovider = "turnstile"\nsecret = " 1x0000000000000000000000000000000AA "\n',
      )
    )(),
  ).toEqual({ provider: "turnstile", secret: "1x0000000000000000000000000000000AA" });
  expect((await load('enabled = false\nprovider = "hcaptcha"\n'))()).toBeUndefined();
  for (const [toml, message] of [
    ["enabled = true\n", "Missing required field in config: auth.captcha.provider"],
    [
      'enabled = true\nprovider = "hcaptcha"\n',
      "Missing required field in config: auth.captcha.secret",
    ],
    [
      'enabled = false\nprovider = "recaptcha"\n',
      "Invalid config for auth.captcha.provider: must be one of [hcaptcha turnstile]",
    ],
  ] as const) {
    expect(await load(toml)).toThrow(new ConfigError(message));
  }
});

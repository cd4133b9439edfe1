// Settings the shared test backend does not use (config.toml turns confirmations on, etc.): a
// second backend in this worker, in memory and without a socket, driven through its fetch handler
// by the same supabase-js.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  PASSWORD,
  PUBLISHABLE_KEY,
  QUICK_PASSWORD_HASH_COST,
  randomEmail,
} from "../../../tests/support/backend.ts";
import { workerDatabase } from "../../../tests/support/memory-backend.ts";
import { createLocalBackend, type LocalBackend } from "../src/backend.ts";
import { ConfigError, loadConfig, REALTIME_DEFAULTS } from "../src/project/config.ts";

let backend: LocalBackend;
const templateDir = mkdtempSync(join(tmpdir(), "local-templates-"));

beforeAll(async () => {
  const template = join(templateDir, "magic-link.html");
  writeFileSync(
    template,
    `<h2>Sign in to Edge Notes, {{ .Email }}</h2>
<p><a href="{{ .SiteURL }}/auth/confirm?token_hash={{ .TokenHash }}&type=email&next=/notes">Sign in</a></p>
<p>Or enter {{ .Token }}</p>`,
  );
  backend = await createLocalBackend({
    host: false,
    db: await workerDatabase(),
    config: {
      auth: {
        passwordHashCost: QUICK_PASSWORD_HASH_COST,
        refreshTokenReuseInterval: 0,
        email: {
          enableConfirmations: false,
          securePasswordChange: true,
          templates: { magic_link: { subject: "Your sign-in link", contentPath: template } },
        },
      },
    },
  });
}, 60_000);

afterAll(async () => {
  await backend?.close();
  rmSync(templateDir, { recursive: true, force: true });
});

function client(): SupabaseClient {
  return createClient(backend.url, PUBLISHABLE_KEY, {
    auth: { persistSession: false, autoRefreshToken: false },
    global: { fetch: (input, init) => backend.fetch(new Request(input, init)) },
  });
}

async function rawRefresh(token: string) {
  const response = await backend.fetch(
    new Request(`${backend.url}/auth/v1/token?grant_type=refresh_token`, {
      method: "POST",
      headers: {
        apikey: PUBLISHABLE_KEY,
        "Content-Type": "application/json",
        "X-Supabase-Api-Version": "2024-01-01",
      },
      body: JSON.stringify({ refresh_token: token }),
    }),
  );
  return { status: response.status, body: (await response.json()) as Record<string, string> };
}

describe("enable_confirmations = false", () => {
  it("signs up straight into a session; a repeat sign-up is user_already_exists", async () => {
    const email = randomEmail();
    const { data, error } = await client().auth.signUp({ email, password: PASSWORD });
    expect(error).toBeNull();
    expect(data.session?.access_token).toBeTruthy();
    expect(data.user?.email_confirmed_at).toBeTruthy();
    expect(backend.inbox.list(email)).toHaveLength(0);
    const again = await client().auth.signUp({ email, password: PASSWORD });
    expect(again.error).toMatchObject({
      status: 422,
      code: "user_already_exists",
      message: "User already registered",
    });
    const settings = await (
      await backend.fetch(
        new Request(`${backend.url}/auth/v1/settings`, { headers: { apikey: PUBLISHABLE_KEY } }),
      )
    ).json();
    expect(settings.mailer_autoconfirm).toBe(true);
  });
});

describe("enable_signup = false, enable_anonymous_sign_ins = false", () => {
  it("refuses sign-ups (signup_disabled) and anonymous sign-ins (anonymous_provider_disabled)", async () => {
    const { auth } = backend.config;
    const before = { signup: auth.enableSignup, anonymous: auth.enableAnonymousSignIns };
    auth.enableSignup = false;
    auth.enableAnonymousSignIns = false;
    try {
      const email = randomEmail();
      const signUp = await client().auth.signUp({ email, password: PASSWORD });
      expect(signUp.error).toMatchObject({
        status: 422,
        code: "signup_disabled",
        message: "Signups not allowed for this instance",
      });
      const anonymous = await client().auth.signInAnonymously();
      expect(anonymous.error).toMatchObject({
        status: 422,
        code: "anonymous_provider_disabled",
        message: "Anonymous sign-ins are disabled",
      });
      const otp = await client().auth.signInWithOtp({ email });
      expect(otp.error).toMatchObject({ status: 422, code: "otp_disabled" });
      expect(backend.inbox.list(email)).toHaveLength(0);
    } finally {
      auth.enableSignup = before.signup;
      auth.enableAnonymousSignIns = before.anonymous;
    }
  });
});

describe("refresh_token_reuse_interval = 0", () => {
  it("reusing an old refresh token revokes the whole family (refresh_token_already_used)", async () => {
    const { data } = await client().auth.signUp({ email: randomEmail(), password: PASSWORD });
    const t0 = data.session?.refresh_token ?? "";
    const t1 = (await rawRefresh(t0)).body.refresh_token ?? "";
    const t2 = (await rawRefresh(t1)).body.refresh_token ?? "";
    expect(new Set([t0, t1, t2]).size).toBe(3);

    // t1 is the parent of the active token: a client that lost the answer gets t2 back.
    expect((await rawRefresh(t1)).body.refresh_token).toBe(t2);
    // t0 is older: abuse; the family dies.
    expect(await rawRefresh(t0)).toEqual({
      status: 400,
      body: { code: "refresh_token_already_used", message: "Invalid Refresh Token: Already Used" },
    });
    await new Promise((r) => setTimeout(r, 5));
    expect((await rawRefresh(t2)).body.code).toBe("refresh_token_already_used");
  });
});

describe("secure_password_change = true", () => {
  it("a session older than 24 h needs the emailed nonce to change the password", async () => {
    const email = randomEmail();
    const c = client();
    const { data } = await c.auth.signUp({ email, password: PASSWORD });
    await c.auth.setSession({
      access_token: data.session?.access_token ?? "",
      refresh_token: data.session?.refresh_token ?? "",
    });
    await backend.db.query(
      "update auth.sessions set created_at = now() - interval '25 hours' where user_id = $1",
      [data.user?.id],
    );

    const denied = await c.auth.updateUser({ password: "brand-new-password" });
    expect(denied.error).toMatchObject({
      status: 400,
      code: "reauthentication_needed",
      message: "Password update requires reauthentication",
    });

    expect((await c.auth.reauthenticate()).error).toBeNull();
    const nonce = backend.inbox.list(email).find((m) => m.type === "reauthentication")?.token ?? "";
    expect(nonce).toMatch(/^\d{6}$/);
    const wrong = await c.auth.updateUser({
      password: "brand-new-password",
      nonce: nonce === "000000" ? "111111" : "000000",
    });
    expect(wrong.error).toMatchObject({
      status: 422,
      code: "reauthentication_not_valid",
      message: "Nonce has expired or is invalid",
    });
    expect((await c.auth.updateUser({ password: "brand-new-password", nonce })).error).toBeNull();
    expect(
      (await client().auth.signInWithPassword({ email, password: "brand-new-password" })).error,
    ).toBeNull();
  });
});

describe("auth.audit_log_entries", () => {
  it("records sign-up, login, token refresh and logout with the real payload shape", async () => {
    const email = randomEmail();
    const c = client();
    const { data } = await c.auth.signUp({ email, password: PASSWORD });
    const userId = data.user?.id;
    await c.auth.setSession({
      access_token: data.session?.access_token ?? "",
      refresh_token: data.session?.refresh_token ?? "",
    });
    await c.auth.refreshSession();
    await c.auth.signOut();
    const { rows } = await backend.db.query<{ payload: Record<string, unknown> }>(
      "select payload from auth.audit_log_entries where payload->>'actor_id' = $1 order by created_at",
      [userId],
    );
    expect(rows.map((r) => r.payload.action)).toEqual([
      "user_signedup",
      "login",
      "token_refreshed",
      "logout",
    ]);
    expect(rows[0]?.payload).toMatchObject({
      actor_username: email,
      log_type: "team",
      traits: { provider: "email" },
    });
    expect(rows[3]?.payload).toMatchObject({ log_type: "account" });
  });
});

describe("[auth.email.template.magic_link] from config", () => {
  it("renders the configured subject and template with {{ .TokenHash }} for an /auth/confirm link", async () => {
    const email = randomEmail();
    await client().auth.signUp({ email, password: PASSWORD });
    expect((await client().auth.signInWithOtp({ email })).error).toBeNull();
    const [mail] = backend.inbox.list(email);
    expect(mail?.subject).toBe("Your sign-in link");
    expect(mail?.html).toContain(`Sign in to Edge Notes, ${email}`);
    const link = new URL(mail?.links[0] ?? "");
    expect(link.origin + link.pathname).toBe("http://localhost:5173/auth/confirm");
    expect(link.searchParams.get("next")).toBe("/notes");
    const tokenHash = link.searchParams.get("token_hash") ?? "";
    expect(tokenHash).toBe(mail?.tokenHash);
    const { data, error } = await client().auth.verifyOtp({ token_hash: tokenHash, type: "email" });
    expect(error).toBeNull();
    expect(data.user?.email).toBe(email);
  });
});

describe("enable_manual_linking = false", () => {
  it("linkIdentity and unlinkIdentity answer 404 manual_linking_disabled", async () => {
    backend.config.auth.enableManualLinking = false;
    try {
      const email = randomEmail();
      const c = client();
      await c.auth.signUp({ email, password: PASSWORD });
      const linked = await c.auth.linkIdentity({
        provider: "github",
        options: { skipBrowserRedirect: true },
      });
      expect(linked.error).toMatchObject({
        status: 404,
        code: "manual_linking_disabled",
        message: "Manual linking is disabled",
      });
      const identities = (await c.auth.getUserIdentities()).data?.identities ?? [];
      expect(identities).toHaveLength(1);
      const unlinked = await c.auth.unlinkIdentity(identities[0] as (typeof identities)[number]);
      expect(unlinked.error).toMatchObject({ status: 404, code: "manual_linking_disabled" });
    } finally {
      backend.config.auth.enableManualLinking = true;
    }
  });
});

describe("supabase/local-backend.toml (the local backend's own settings)", () => {
  const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

  function project(localToml?: string, configToml = "") {
    const dir = mkdtempSync(join(tmpdir(), "local-settings-"));
    mkdirSync(join(dir, "supabase"));
    writeFileSync(join(dir, "supabase", "config.toml"), configToml);
    if (localToml !== undefined)
      writeFileSync(join(dir, "supabase", "local-backend.toml"), localToml);
    return dir;
  }

  it("defaults to a new hosted project's: no forwarding, no extra origins", () => {
    const dir = project();
    try {
      expect(loadConfig({ projectDir: dir }).local).toEqual({
        sbForwardedFor: false,
        corsOrigins: [],
        realtime: REALTIME_DEFAULTS,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the repository's file turns forwarding on; config.toml holds nothing of the local backend's", () => {
    expect(loadConfig({ projectDir: ROOT }).local).toEqual({
      sbForwardedFor: true,
      corsOrigins: [],
      realtime: REALTIME_DEFAULTS,
    });
    const configToml = readFileSync(join(ROOT, "supabase", "config.toml"), "utf8");
    expect(configToml).not.toMatch(/sb_forwarded_for|cors_origins|recovery_codes/);
  });

  it("reads its keys (env() too), and createLocalBackend's config deep-merges over them", () => {
    process.env.LOCAL_SETTINGS_TEST_ORIGIN = "http://localhost:4300";
    const dir = project(
      `[auth]\nsb_forwarded_for = true\n\n[api]\ncors_origins = ["http://localhost:4200", "https://*.preview.example", "env(LOCAL_SETTINGS_TEST_ORIGIN)"]\n\n[realtime]\nmax_events_per_second = 10000\nmax_concurrent_users = 1000\n`,
    );
    try {
      expect(loadConfig({ projectDir: dir }).local).toEqual({
        sbForwardedFor: true,
        corsOrigins: [
          "http://localhost:4200",
          "https://*.preview.example",
          "http://localhost:4300",
        ],
        realtime: { ...REALTIME_DEFAULTS, maxEventsPerSecond: 10_000, maxConcurrentUsers: 1000 },
      });
      const merged = loadConfig({
        projectDir: dir,
        overrides: { local: { sbForwardedFor: false } },
      }).local;
      expect(merged.sbForwardedFor).toBe(false);
      expect(merged.corsOrigins).toHaveLength(3);
    } finally {
      delete process.env.LOCAL_SETTINGS_TEST_ORIGIN;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses what it does not know or cannot use, naming the key and the file", () => {
    const cases: Array<[string, RegExp]> = [
      [
        '[auth]\nsb_forwarded_for = "yes"\n',
        /'auth\.sb_forwarded_for' in .*local-backend\.toml must be true or false, not "yes"/,
      ],
      // a misspelt or misplaced key would otherwise be silently off
      [
        "[auth]\nsb_forwarded = true\n",
        /'auth\.sb_forwarded' in .*local-backend\.toml is not a setting of the local backend \(known here: auth\.sb_forwarded_for, auth\.mfa\)/,
      ],
      [
        "sb_forwarded_for = true\n",
        /'sb_forwarded_for' in .*local-backend\.toml is not a setting of the local backend \(known here: auth, api, realtime\)/,
      ],
      [
        "[realtime]\nmax_concurrent_users = 0\n",
        /'realtime\.max_concurrent_users' in .*local-backend\.toml must be a whole number above 0, not 0/,
      ],
      [
        "[realtime]\nmax_users = 10\n",
        /'realtime\.max_users' in .*is not a setting of the local backend/,
      ],
      ["[api.cors_origins]\nx = 1\n", /'api\.cors_origins' in .*must be a list of origins/],
      [
        '[api]\ncors_origins = "http://localhost:4200"\n',
        /must be a list of origins such as "http:\/\/localhost:3000" \(scheme, host and port, no path\), not "http:\/\/localhost:4200"/,
      ],
      [
        '[api]\ncors_origins = ["http://localhost:4200/"]\n',
        /must be a list of origins .*not "http:\/\/localhost:4200\/"/,
      ],
      ['[api]\ncors_origins = ["localhost:4200"]\n', /must be a list of origins/],
      ["[api]\ncors_origins = [\n", /failed to parse config: .*local-backend\.toml/],
    ];
    for (const [toml, message] of cases) {
      const dir = project(toml);
      try {
        expect(() => loadConfig({ projectDir: dir }), toml).toThrow(ConfigError);
        expect(() => loadConfig({ projectDir: dir }), toml).toThrow(message);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });

  it("CORS: the origins of site_url and the redirect URLs (globs matched as Auth matches them), plus cors_origins", async () => {
    const local = await createLocalBackend({
      host: false,
      db: await workerDatabase(),
      config: {
        auth: {
          siteUrl: "https://notes.example.com/app",
          additionalRedirectUrls: [
            "https://*.preview.example.com/**",
            "http://localhost:4000/auth/callback",
            "http://LOCALHOST:4100/**",
            "myapp://callback",
            "http*://tricky.example/**",
          ],
        },
        local: { corsOrigins: ["http://127.0.0.1:4200", "http://localhost:43*"] },
      },
    });
    try {
      const allowed = async (origin: string) => {
        const response = await local.fetch(
          new Request(`${local.url}/auth/v1/settings`, {
            headers: { apikey: PUBLISHABLE_KEY, Origin: origin },
          }),
        );
        expect(response.status, origin).toBe(200);
        return response.headers.get("access-control-allow-origin") === origin;
      };
      for (const origin of [
        "https://notes.example.com",
        "https://pr-12.preview.example.com",
        "http://localhost:4000",
        "http://localhost:4100",
        "http://127.0.0.1:4200",
        "http://localhost:4300",
      ]) {
        expect(await allowed(origin), origin).toBe(true);
      }
      for (const origin of [
        // site_url's own origin only, not any loopback port as Auth's redirects allow
        "http://notes.example.com",
        // `*` stops at a dot, and needs a label
        "https://a.b.preview.example.com",
        "https://preview.example.com",
        "https://preview.example.com.evil.example",
        "http://localhost:4001",
        "http://127.0.0.1:4000",
        "http://localhost:4200",
        "null",
        "https://tricky.example",
        "myapp://callback",
      ]) {
        expect(await allowed(origin), origin).toBe(false);
      }
    } finally {
      await local.close();
    }
  });
});

import { RouterContextProvider } from "react-router";
import { parse } from "smol-toml";
import { describe, expect, it } from "vitest";
import {
  parseSupabaseEnv,
  readSupabaseEnv,
  SUPABASE_VARIABLES,
  toPublicEnv,
} from "../../../app/lib/env.server";
import { getSupabaseEnv, workerContext } from "../../../app/lib/worker-context.server";
import wranglerToml from "../../../wrangler.toml?raw";

const env = (values: Record<string, unknown>) => values as unknown as Env;

describe("readSupabaseEnv", () => {
  it("reads the URL (without trailing slash) and the publishable key", () => {
    expect(
      readSupabaseEnv(
        env({
          SUPABASE_URL: "https://abc.supabase.co/",
          SUPABASE_PUBLISHABLE_KEY: "sb_publishable_x",
        }),
      ),
    ).toEqual({ url: "https://abc.supabase.co", publishableKey: "sb_publishable_x" });
  });

  it("accepts a legacy anon key", () => {
    expect(
      readSupabaseEnv(
        env({ SUPABASE_URL: "http://127.0.0.1:54321", SUPABASE_ANON_KEY: "eyJhbGciOi" }),
      ),
    ).toEqual({ url: "http://127.0.0.1:54321", publishableKey: "eyJhbGciOi" });
  });

  it.each([
    [{ SUPABASE_PUBLISHABLE_KEY: "k" }, /SUPABASE_URL is not set/],
    [{ SUPABASE_URL: "not a url", SUPABASE_PUBLISHABLE_KEY: "k" }, /http\(s\) URL/],
    [{ SUPABASE_URL: "ftp://x.test", SUPABASE_PUBLISHABLE_KEY: "k" }, /http\(s\) URL/],
    [{ SUPABASE_URL: "https://x.test" }, /SUPABASE_PUBLISHABLE_KEY/],
  ])("rejects a misconfiguration with a message naming the variable (%o)", (values, message) => {
    expect(() => readSupabaseEnv(env(values))).toThrow(message);
  });

  it("reads the secret key (a Wrangler secret), and refuses anything but an sb_secret_ key without echoing it", () => {
    const base = { SUPABASE_URL: "https://abc.supabase.co", SUPABASE_PUBLISHABLE_KEY: "k" };
    expect(readSupabaseEnv(env({ ...base, SUPABASE_SECRET_KEY: " sb_secret_abc " }))).toEqual({
      url: "https://abc.supabase.co",
      publishableKey: "k",
      secretKey: "sb_secret_abc",
    });
    expect(readSupabaseEnv(env({ ...base, SUPABASE_SECRET_KEY: "" }))).not.toHaveProperty(
      "secretKey",
    );
    const legacy = "eyJhbGciOiJIUzI1NiJ9.service_role.sig";
    const parsed = parseSupabaseEnv(env({ ...base, SUPABASE_SECRET_KEY: legacy }));
    expect(parsed).toBeInstanceOf(Error);
    expect(String(parsed)).toMatch(/SUPABASE_SECRET_KEY must be the project's secret key/);
    expect(String(parsed)).not.toContain(legacy);
  });

  it("reads SUPABASE_TIMEOUT_MS as whole milliseconds, and refuses anything else naming it", () => {
    const base = { SUPABASE_URL: "https://abc.supabase.co", SUPABASE_PUBLISHABLE_KEY: "k" };
    expect(readSupabaseEnv(env({ ...base, SUPABASE_TIMEOUT_MS: " 8000 " })).timeoutMs).toBe(8000);
    expect(readSupabaseEnv(env({ ...base, SUPABASE_TIMEOUT_MS: "" }))).not.toHaveProperty(
      "timeoutMs",
    );
    expect(readSupabaseEnv(env(base))).not.toHaveProperty("timeoutMs");
    for (const bad of ["soon", "1.5", "0", "-100", "99", "60001"]) {
      const parsed = parseSupabaseEnv(env({ ...base, SUPABASE_TIMEOUT_MS: bad }));
      expect(parsed, bad).toBeInstanceOf(Error);
      expect(String(parsed), bad).toMatch(/SUPABASE_TIMEOUT_MS must be/);
    }
  });

  it("exposes only the URL and publishable key to the browser", () => {
    expect(
      toPublicEnv({
        url: "https://abc.supabase.co",
        publishableKey: "k",
        secretKey: "sb_secret_x",
      }),
    ).toEqual({
      SUPABASE_URL: "https://abc.supabase.co",
      SUPABASE_PUBLISHABLE_KEY: "k",
    });
  });
});

// Locally (`npm run dev`, `vite preview`, the test runs) wrangler passes .dev.vars and the process
// environment on to the Worker only for the names wrangler.toml declares, in [vars] or in [secrets]
// required; any other is dropped without a word (SUPABASE_TIMEOUT_MS, set for the end-to-end
// stacks, once never reached the Worker).
it("every variable the Worker reads is declared in wrangler.toml", () => {
  const config = parse(wranglerToml) as {
    vars?: Record<string, unknown>;
    secrets?: { required?: string[] };
  };
  const declared = new Set([
    ...Object.keys(config.vars ?? {}),
    ...(config.secrets?.required ?? []),
  ]);
  expect(SUPABASE_VARIABLES).toContain("SUPABASE_TIMEOUT_MS");
  expect(SUPABASE_VARIABLES.filter((name) => !declared.has(name))).toEqual([]);
});

describe("the Supabase settings in the request context", () => {
  function contextFor(bindings: Env) {
    const context = new RouterContextProvider();
    context.set(workerContext, {
      env: bindings,
      ctx: {} as ExecutionContext,
      nonce: "n",
      supabase: parseSupabaseEnv(bindings),
    });
    return context;
  }

  it("are read from the context the Worker entry filled in", () => {
    const context = contextFor(
      env({ SUPABASE_URL: "https://abc.supabase.co/", SUPABASE_PUBLISHABLE_KEY: "k" }),
    );
    expect(getSupabaseEnv(context)).toEqual({
      url: "https://abc.supabase.co",
      publishableKey: "k",
    });
  });

  it("a misconfiguration is kept, not thrown, by the entry, and thrown where the settings are needed", () => {
    const bindings = env({ SUPABASE_URL: "ftp://x.test", SUPABASE_PUBLISHABLE_KEY: "k" });
    const parsed = parseSupabaseEnv(bindings);
    expect(parsed).toBeInstanceOf(Error);
    expect(() => getSupabaseEnv(contextFor(bindings))).toThrow(
      /SUPABASE_URL must be an http\(s\) URL/,
    );
  });
});

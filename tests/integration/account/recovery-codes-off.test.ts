// The app on a backend without MFA recovery codes, as every hosted project is (they are a preview
// of Supabase Auth; supabase/local-backend.toml has them off): the built Worker, in workerd, against
// a local backend of its own with them off. The app asks the backend once (app/lib/
// backend-features.server.ts) and then shows none of it: no panel on /account/security, no "Use a
// recovery code" on /mfa, no notice on /account, and their form posts are refused with a 404. The
// user here even has codes, made while a backend of the same database had them on.
// tests/integration/account/recovery-codes.test.ts is the same app with them on.
import { fileURLToPath } from "node:url";
import { createLocalBackend, type LocalBackend } from "@edge-notes/supabase-local";
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  PASSWORD,
  PUBLISHABLE_KEY,
  QUICK_PASSWORD_HASH_COST,
  SECRET_KEY,
  TEST_RATE_LIMITS,
} from "../../support/backend.ts";
import { type MemoryBackend, memoryBackend, workerDatabase } from "../../support/memory-backend.ts";
import { enrollVerifiedTotp, totpCode } from "../../support/mfa.ts";
import { serveBuild, type WorkerServer } from "../../support/workerd.ts";
import { backendCalls } from "../support/app.ts";
import { BrowserLess } from "../support/browser-less.ts";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** The backend without recovery codes (a socket: the Worker in workerd calls it). */
let off: LocalBackend | undefined;
/** One with them, on the same database, to give a user codes first. */
let on: MemoryBackend | undefined;
let app: WorkerServer | undefined;

beforeAll(async () => {
  [off, on] = await Promise.all([
    createLocalBackend({
      projectDir: ROOT,
      db: await workerDatabase(),
      port: 0,
      host: "127.0.0.1",
      config: {
        auth: {
          passwordHashCost: QUICK_PASSWORD_HASH_COST,
          rateLimit: TEST_RATE_LIMITS,
          mfa: { recoveryCodes: { enrollEnabled: false, verifyEnabled: false } },
        },
      },
    }),
    memoryBackend({}),
  ]);
  app = await serveBuild({
    port: 0,
    vars: { SUPABASE_URL: off.url, SUPABASE_SECRET_KEY: SECRET_KEY },
  });
}, 60_000);

afterAll(async () => {
  await app?.stop();
  await Promise.all([off?.close(), on?.close()]);
});

/** A client of `url` with auth-js's recovery-codes API on, as the app's. */
function client(url: string, fetch?: typeof globalThis.fetch): SupabaseClient {
  const store = new Map<string, string>();
  return createClient(url, PUBLISHABLE_KEY, {
    auth: {
      autoRefreshToken: false,
      detectSessionInUrl: false,
      experimental: { recoveryCodes: true },
      storage: {
        getItem: (k) => store.get(k) ?? null,
        setItem: (k, v) => void store.set(k, v),
        removeItem: (k) => void store.delete(k),
      },
    },
    ...(fetch ? { global: { fetch } } : {}),
  });
}

/**
 * A user with an authenticator and two recovery codes left (few enough for the profile notice),
 * made on the backend that has them.
 */
async function userWithFewCodes() {
  const backend = on as MemoryBackend;
  const { email, user } = await backend.signedIn();
  const withCodes = client(backend.backend.url, backend.fetch);
  const signIn = await withCodes.auth.signInWithPassword({ email, password: PASSWORD });
  if (signIn.error) throw signIn.error;
  const { secret } = await enrollVerifiedTotp(withCodes);
  const made = await withCodes.auth.mfa.recoveryCodes.generate();
  if (made.error) throw made.error;
  await backend.backend.db.query(
    `update auth.mfa_recovery_codes set consumed_at = now()
      where id in (select c.id from auth.mfa_recovery_codes c
                     join auth.mfa_recovery_code_sets s on s.id = c.mfa_recovery_code_set_id
                    where s.user_id = $1 order by c.id limit 8)`,
    [user.id],
  );
  expect((await withCodes.auth.mfa.recoveryCodes.getStatus()).data).toMatchObject({
    total: 10,
    remaining: 2,
  });
  return { email, secret, codes: made.data.codes };
}

/** A password sign-in through the app: it lands on /mfa (the user has an authenticator). */
async function signIn(email: string) {
  const browser = new BrowserLess(app?.url);
  const visit = await browser.post("/sign-in", { intent: "password", email, password: PASSWORD });
  expect(new URL(visit.url).pathname).toBe("/mfa");
  return { browser, visit };
}

describe("the app on a backend without recovery codes", () => {
  it("shows none of them, and refuses their forms with a 404", async () => {
    const { email, secret, codes } = await userWithFewCodes();
    const { browser, visit } = await signIn(email);
    expect(visit.status).toBe(200);
    // The first page that needed to know asked the backend; the Worker remembers the answer.
    const again = await browser.get(`/mfa?next=${encodeURIComponent("/account")}`);
    // (the factors, read through GET /user; no second question)
    expect(backendCalls(again).auth).toBe(1);
    expect(backendCalls(visit).auth).toBeGreaterThan(1);
    expect(visit.body).toContain("Enter your code");
    expect(visit.body).not.toContain("Use a recovery code");
    expect(visit.body).not.toContain('name="recoveryCode"');
    const refused = await browser.post(`/mfa?next=${encodeURIComponent("/account")}`, {
      intent: "recovery",
      recoveryCode: codes[9] ?? "",
      next: "/account",
    });
    expect(refused.status).toBe(404);
    expect(refused.body).toContain("Recovery codes are not available here.");
    expect(new URL(refused.url).pathname).toBe("/mfa");

    const verified = await browser.post(`/mfa?next=${encodeURIComponent("/account")}`, {
      intent: "verify",
      code: totpCode(secret, 30),
      next: "/account",
    });
    expect(new URL(verified.url).pathname).toBe("/account");
    expect(verified.status).toBe(200);
    // Two codes left, but no notice: the backend has no recovery codes.
    expect(verified.body).toContain('data-testid="profile-form"');
    expect(verified.body).not.toContain("few-recovery-codes");
    expect(verified.body).not.toMatch(/recovery code/i);

    const security = await browser.get("/account/security");
    expect(security.status).toBe(200);
    expect(security.body).toContain("Authenticator apps");
    expect(security.body).not.toMatch(/recovery code/i);
    for (const intent of ["generate-recovery-codes", "regenerate-recovery-codes"]) {
      const made = await browser.post("/account/security", { intent });
      expect(made.status).toBe(404);
      expect(made.body).toContain("Recovery codes are not available here.");
      expect(made.body).not.toContain("data-code=");
    }
  });
});

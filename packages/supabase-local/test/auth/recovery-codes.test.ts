// MFA recovery codes through the real supabase-js (`mfa.recoveryCodes`, experimental): a set shown
// once, its status, regenerate, one code raising an aal1 session to aal2 (typed any case, with
// hyphens and spaces), single use, hashed storage, the lockout after wrong codes, aal1 attempts at
// aal2 actions, and the guards that keep recovery codes from being the only factor.
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BACKEND_URL,
  PASSWORD,
  PUBLISHABLE_KEY,
  signedInClient,
} from "../../../../tests/support/backend.ts";
import { type MemoryBackend, memoryBackend } from "../../../../tests/support/memory-backend.ts";
import { aalOf, enrollVerifiedTotp } from "../../../../tests/support/mfa.ts";

/** A browser-like client with the recovery-codes API switched on. */
function recoveryClient(fetch?: typeof globalThis.fetch, url = BACKEND_URL): SupabaseClient {
  const store = new Map<string, string>();
  return createClient(url, PUBLISHABLE_KEY, {
    auth: {
      persistSession: true,
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

/** A user with a verified TOTP factor: their aal2 client, and a way to open more aal1 sessions. */
async function userWithTotp(fetch?: typeof globalThis.fetch, url?: string, email?: string) {
  const created = email ? { email } : await signedInClient();
  const client = recoveryClient(fetch, url);
  const signIn = await client.auth.signInWithPassword({ email: created.email, password: PASSWORD });
  if (signIn.error) throw signIn.error;
  await enrollVerifiedTotp(client);
  const aal1 = async () => {
    const c = recoveryClient(fetch, url);
    const { error } = await c.auth.signInWithPassword({ email: created.email, password: PASSWORD });
    if (error) throw error;
    return c;
  };
  return { client, aal1, email: created.email };
}

/** How a person might type a code back: upper case, in blocks of four, a stray space. */
const typed = (code: string) =>
  ` ${code
    .toUpperCase()
    .match(/.{1,4}/g)
    ?.join("-")} `;

describe("generate and status", () => {
  it("makes one set of ten codes at aal2, shown once; the status counts them", async () => {
    const { client } = await userWithTotp();
    const before = await client.auth.mfa.recoveryCodes.getStatus();
    expect(before.error).toMatchObject({
      status: 404,
      code: "mfa_factor_not_found",
      message: "The user has not enrolled recovery codes",
    });
    const { data, error } = await client.auth.mfa.recoveryCodes.generate();
    expect(error).toBeNull();
    expect(data).toMatchObject({
      type: "recovery_code",
      friendly_name: "Recovery codes",
      total: 10,
    });
    expect(data?.codes).toHaveLength(10);
    for (const code of data?.codes ?? []) expect(code).toMatch(/^[a-z2-7]{16}$/);
    expect(new Set(data?.codes).size).toBe(10);

    const status = await client.auth.mfa.recoveryCodes.getStatus();
    expect(status.data).toEqual({ id: data?.id, type: "recovery_code", total: 10, remaining: 10 });
    const { data: user } = await client.auth.getUser();
    expect(user.user?.factors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          id: data?.id,
          factor_type: "recovery_code",
          status: "verified",
          friendly_name: "Recovery codes",
        }),
      ]),
    );
    const again = await client.auth.mfa.recoveryCodes.generate({ friendlyName: "Another" });
    expect(again.error).toMatchObject({ status: 422, code: "mfa_verified_factor_exists" });
  });

  it("refuses an aal1 session, and a user with no other factor", async () => {
    const { aal1 } = await userWithTotp();
    const low = await aal1();
    const refused = await low.auth.mfa.recoveryCodes.generate();
    expect(refused.error).toMatchObject({
      status: 403,
      code: "insufficient_aal",
      message: "AAL2 required to generate recovery codes",
    });
    expect((await low.auth.mfa.recoveryCodes.getStatus()).error).toMatchObject({ status: 404 });

    // aal2 without another factor cannot happen; an aal1 user without factors gets the aal error.
    const { email } = await signedInClient();
    const plain = recoveryClient();
    await plain.auth.signInWithPassword({ email, password: PASSWORD });
    expect((await plain.auth.mfa.recoveryCodes.generate()).error).toMatchObject({
      status: 403,
      code: "insufficient_aal",
    });
  });
});

describe("verify", () => {
  it("raises an aal1 session to aal2 with one code, once; the code is used up", async () => {
    const { client, aal1 } = await userWithTotp();
    const { data } = await client.auth.mfa.recoveryCodes.generate();
    const code = data?.codes[3] ?? "";

    const low = await aal1();
    expect(await aalOf(low)).toBe("aal1");
    const verified = await low.auth.mfa.recoveryCodes.verify({ code: typed(code) });
    expect(verified.error).toBeNull();
    const claims = decodeJwt(verified.data?.access_token ?? "");
    expect(claims.aal).toBe("aal2");
    expect((claims.amr as { method: string }[])[0]?.method).toBe("mfa/recovery_code");
    expect(await aalOf(low)).toBe("aal2");
    expect((await client.auth.mfa.recoveryCodes.getStatus()).data).toMatchObject({
      total: 10,
      remaining: 9,
    });

    const other = await aal1();
    const reused = await other.auth.mfa.recoveryCodes.verify({ code });
    expect(reused.error).toMatchObject({
      status: 422,
      code: "mfa_verification_failed",
      message: "Invalid recovery code entered",
    });
    expect(await aalOf(other)).toBe("aal1");
    const wrong = await other.auth.mfa.recoveryCodes.verify({ code: "aaaa-bbbb-cccc-dddd" });
    expect(wrong.error).toMatchObject({ status: 422, code: "mfa_verification_failed" });
    const empty = await other.auth.mfa.recoveryCodes.verify({ code: " - " });
    expect(empty.error).toMatchObject({
      status: 400,
      code: "validation_failed",
      message: "Code needs to be non-empty",
    });
    // A good code still works after wrong ones.
    expect(
      (await other.auth.mfa.recoveryCodes.verify({ code: data?.codes[0] ?? "" })).error,
    ).toBeNull();
  });

  it("regenerates at aal2 only: the old codes stop working, the factor stays", async () => {
    const { client, aal1 } = await userWithTotp();
    const first = await client.auth.mfa.recoveryCodes.generate({ friendlyName: "Paper" });
    const low = await aal1();
    expect((await low.auth.mfa.recoveryCodes.regenerate()).error).toMatchObject({
      status: 403,
      code: "insufficient_aal",
      message: "AAL2 required to regenerate recovery codes",
    });
    const second = await client.auth.mfa.recoveryCodes.regenerate();
    expect(second.data).toMatchObject({ id: first.data?.id, friendly_name: "Paper", total: 10 });
    expect(second.data?.codes).not.toEqual(first.data?.codes);
    const old = await low.auth.mfa.recoveryCodes.verify({ code: first.data?.codes[0] ?? "" });
    expect(old.error).toMatchObject({ code: "mfa_verification_failed" });
    const fresh = await low.auth.mfa.recoveryCodes.verify({ code: second.data?.codes[0] ?? "" });
    expect(fresh.error).toBeNull();
  });
});

describe("unenroll", () => {
  it("keeps recovery codes from being the only factor; they go through their own endpoint", async () => {
    const { client } = await userWithTotp();
    const codes = await client.auth.mfa.recoveryCodes.generate();
    const { data: factors } = await client.auth.mfa.listFactors();
    const totp = factors?.totp[0]?.id ?? "";
    const viaFactors = await client.auth.mfa.unenroll({ factorId: codes.data?.id ?? "" });
    expect(viaFactors.error).toMatchObject({ status: 422, code: "validation_failed" });
    const lastFactor = await client.auth.mfa.unenroll({ factorId: totp });
    expect(lastFactor.error).toMatchObject({ status: 422, code: "mfa_recovery_codes_sole_factor" });

    const removed = await client.auth.mfa.recoveryCodes.unenroll();
    expect(removed.data).toEqual({ id: codes.data?.id });
    expect((await client.auth.mfa.recoveryCodes.getStatus()).error).toMatchObject({ status: 404 });
    expect((await client.auth.mfa.unenroll({ factorId: totp })).error).toBeNull();
  });
});

describe("settings and storage", () => {
  let strict: MemoryBackend;
  let off: MemoryBackend;
  let enrollOff: MemoryBackend;
  let verifyOff: MemoryBackend;
  beforeAll(async () => {
    const codes = (recoveryCodes: object) => memoryBackend({ auth: { mfa: { recoveryCodes } } });
    [strict, off, enrollOff, verifyOff] = await Promise.all([
      codes({ maxVerifyAttempts: 3 }),
      codes({ enrollEnabled: false, verifyEnabled: false }),
      codes({ enrollEnabled: false }),
      codes({ verifyEnabled: false }),
    ]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([strict, off, enrollOff, verifyOff].map((backend) => backend?.close()));
  });

  it("stores only hashes, and locks verification after too many wrong codes (429)", async () => {
    const { email } = await strict.signedIn();
    const { client, aal1 } = await userWithTotp(strict.fetch, strict.backend.url, email);
    const { data } = await client.auth.mfa.recoveryCodes.generate();
    // This user's codes only: the worker's test files share one database (memoryBackend).
    const stored = await strict.backend.db.query<{ code_hash: string }>(
      `select c.code_hash from auth.mfa_recovery_codes c
         join auth.mfa_recovery_code_sets s on s.id = c.mfa_recovery_code_set_id
         join auth.users u on u.id = s.user_id
       where u.email = $1`,
      [email],
    );
    expect(stored.rows).toHaveLength(10);
    for (const { code_hash } of stored.rows) {
      expect(code_hash).toMatch(/^\$scrypt\$/);
      for (const code of data?.codes ?? []) expect(code_hash).not.toContain(code);
    }

    const low = await aal1();
    for (let i = 0; i < 3; i++) {
      const wrong = await low.auth.mfa.recoveryCodes.verify({ code: "aaaaaaaaaaaaaaaa" });
      expect(wrong.error).toMatchObject({ status: 422 });
    }
    const locked = await low.auth.mfa.recoveryCodes.verify({ code: data?.codes[0] ?? "" });
    expect(locked.error).toMatchObject({
      status: 429,
      code: "mfa_recovery_codes_locked",
      message: "Too many failed verification attempts, try again later",
    });
    expect(await aalOf(low)).toBe("aal1");
    // Regenerating lifts the lock.
    const renewed = await client.auth.mfa.recoveryCodes.regenerate();
    expect(
      (await low.auth.mfa.recoveryCodes.verify({ code: renewed.data?.codes[0] ?? "" })).error,
    ).toBeNull();
  });

  it("are absent with both settings off, as on hosted Auth v2.189.0", async () => {
    // Hosted Auth has no such routes: /factors/{factor_id} takes "recovery-codes" for a factor id,
    // and its loadFactor refuses it for any method, after the caller's checks.
    const { email } = await off.signedIn();
    const { client, aal1 } = await userWithTotp(off.fetch, off.backend.url, email);
    const absent = {
      status: 404,
      code: "validation_failed",
      message: "factor_id must be an UUID",
    };
    const codes = client.auth.mfa.recoveryCodes;
    expect((await codes.getStatus()).error).toMatchObject(absent);
    expect((await codes.generate()).error).toMatchObject(absent);
    expect((await codes.regenerate()).error).toMatchObject(absent);
    expect((await codes.unenroll()).error).toMatchObject(absent);
    expect((await (await aal1()).auth.mfa.recoveryCodes.verify({ code: "x" })).error).toMatchObject(
      absent,
    );
    // Without a user's token, the gateway's and Auth's refusals come first, as for any factor.
    const anonymous = await off.fetch(`${off.backend.url}/auth/v1/factors/recovery-codes`, {
      headers: { apikey: PUBLISHABLE_KEY },
    });
    expect(anonymous.status).toBe(403);
    expect(await anonymous.json()).toMatchObject({
      error_code: "bad_jwt",
      msg: "invalid claim: missing sub claim",
    });
  });

  it("answer mfa_recovery_codes_*_not_enabled with one setting off", async () => {
    const noEnroll = await userWithTotp(
      enrollOff.fetch,
      enrollOff.backend.url,
      (await enrollOff.signedIn()).email,
    );
    expect((await noEnroll.client.auth.mfa.recoveryCodes.generate()).error).toMatchObject({
      status: 422,
      code: "mfa_recovery_codes_enroll_not_enabled",
    });
    // The routes are there: the status of a user without codes.
    expect((await noEnroll.client.auth.mfa.recoveryCodes.getStatus()).error).toMatchObject({
      status: 404,
      code: "mfa_factor_not_found",
    });
    const noVerify = await userWithTotp(
      verifyOff.fetch,
      verifyOff.backend.url,
      (await verifyOff.signedIn()).email,
    );
    expect((await noVerify.client.auth.mfa.recoveryCodes.generate()).error).toBeNull();
    const low = await noVerify.aal1();
    expect((await low.auth.mfa.recoveryCodes.verify({ code: "x" })).error).toMatchObject({
      status: 422,
      code: "mfa_recovery_codes_verify_not_enabled",
    });
  });
});

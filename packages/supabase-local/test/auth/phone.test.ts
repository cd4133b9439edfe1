// Phone sign-up and sign-in with the CLI's [auth.sms] settings and [auth.sms.test_otp] codes, through
// supabase-js: two in-memory backends (confirmations off, the CLI's default, and on), and the
// project's shared backend, where phone sign-in is off. No SMS is ever sent: only numbers in
// test_otp get codes; any other number meets the answer of a server without an SMS provider.
import { createHash } from "node:crypto";
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  anonClient,
  PASSWORD,
  PUBLISHABLE_KEY,
  QUICK_PASSWORD_HASH_COST,
  SECRET_KEY,
} from "../../../../tests/support/backend.ts";
import { workerDatabase } from "../../../../tests/support/memory-backend.ts";
import { createLocalBackend, type LocalBackend } from "../../src/backend.ts";

const CODE = "123456";
let next = 100;
/** A fresh test number (E.164 without +), each with the test code. */
const numbers = Array.from({ length: 40 }, (_, i) => `1555555${String(1000 + i)}`);
const testOtp = Object.fromEntries(numbers.map((n) => [n, CODE]));
function freshNumber(): string {
  const n = numbers[next++ - 100];
  if (!n) throw new Error("out of test numbers");
  return n;
}

let autoconfirm: LocalBackend;
let confirming: LocalBackend;

beforeAll(async () => {
  const sms = { enableSignup: true, testOtp, maxFrequencySeconds: 5 };
  const passwordHashCost = QUICK_PASSWORD_HASH_COST;
  // both on this test worker's database (they differ in settings only; each number is used once)
  const db = await workerDatabase();
  [autoconfirm, confirming] = await Promise.all([
    createLocalBackend({ host: false, db, config: { auth: { sms, passwordHashCost } } }),
    createLocalBackend({
      host: false,
      db,
      config: { auth: { sms: { ...sms, enableConfirmations: true }, passwordHashCost } },
    }),
  ]);
}, 90_000);

afterAll(async () => {
  await Promise.all([autoconfirm?.close(), confirming?.close()]);
});

function client(backend: LocalBackend, key = PUBLISHABLE_KEY): SupabaseClient {
  return createClient(backend.url, key, {
    auth: { persistSession: false, autoRefreshToken: false },
    global: { fetch: (input, init) => backend.fetch(new Request(input, init)) },
  });
}

describe("phone with confirmations off (the CLI's default)", () => {
  it("signUp with a phone and password signs in at once; the number is stored as digits", async () => {
    const phone = freshNumber();
    const formatted = `+${phone.slice(0, 1)} ${phone.slice(1, 4)} ${phone.slice(4)}`;
    const { data, error } = await client(autoconfirm).auth.signUp({
      phone: formatted,
      password: PASSWORD,
    });
    expect(error).toBeNull();
    expect(data.session?.access_token).toBeTruthy();
    expect(data.user).toMatchObject({
      phone,
      email: "",
      app_metadata: { provider: "phone", providers: ["phone"] },
    });
    expect(data.user?.phone_confirmed_at).toBeTruthy();
    expect(data.user?.identities?.[0]).toMatchObject({
      provider: "phone",
      identity_data: { sub: data.user?.id, email_verified: false, phone_verified: false },
    });
    // the same number again: user_already_exists
    const again = await client(autoconfirm).auth.signUp({ phone, password: PASSWORD });
    expect(again.error).toMatchObject({
      status: 422,
      code: "user_already_exists",
      message: "User already registered",
    });
    // and signInWithPassword with the phone
    const signedIn = await client(autoconfirm).auth.signInWithPassword({
      phone: `+${phone}`,
      password: PASSWORD,
    });
    expect(signedIn.error).toBeNull();
    expect(signedIn.data.user?.id).toBe(data.user?.id);
    const wrong = await client(autoconfirm).auth.signInWithPassword({
      phone,
      password: "not-the-password",
    });
    expect(wrong.error).toMatchObject({ status: 400, code: "invalid_credentials" });
  });

  it("signInWithOtp sends the test code of a new number; verifyOtp signs in", async () => {
    const phone = freshNumber();
    const supabase = client(autoconfirm);
    const sent = await supabase.auth.signInWithOtp({ phone: `+${phone}` });
    expect(sent).toEqual({
      data: { user: null, session: null, messageId: "test-otp" },
      error: null,
    });
    const bad = await supabase.auth.verifyOtp({ phone, token: "000000", type: "sms" });
    expect(bad.error).toMatchObject({
      status: 403,
      code: "otp_expired",
      message: "Token has expired or is invalid",
    });
    const { data, error } = await supabase.auth.verifyOtp({ phone, token: CODE, type: "sms" });
    expect(error).toBeNull();
    expect(data.user).toMatchObject({ phone });
    const claims = JSON.parse(
      Buffer.from(
        (data.session?.access_token as string).split(".")[1] as string,
        "base64url",
      ).toString("utf8"),
    );
    expect(claims).toMatchObject({ phone, amr: [{ method: "otp" }] });
  });

  it("a second code within max_frequency is 429 over_sms_send_rate_limit", async () => {
    const phone = freshNumber();
    const supabase = client(autoconfirm);
    expect((await supabase.auth.signInWithOtp({ phone })).error).toBeNull();
    const { error } = await supabase.auth.signInWithOtp({ phone });
    expect(error).toMatchObject({ status: 429, code: "over_sms_send_rate_limit" });
    expect(error?.message).toMatch(
      /^For security purposes, you can only request this after [45] seconds\.$/,
    );
  });

  it("a number without a test code meets the answer of a server without an SMS provider", async () => {
    // supabase-js reports a 500 as retryable, without the code: the wire has it
    const { error } = await client(autoconfirm).auth.signInWithOtp({ phone: "+15550009999" });
    expect(error).toMatchObject({
      name: "AuthRetryableFetchError",
      status: 500,
      message: "Unable to get SMS provider",
    });
    const response = await autoconfirm.fetch(
      new Request(`${autoconfirm.url}/auth/v1/otp`, {
        method: "POST",
        headers: { apikey: PUBLISHABLE_KEY, "Content-Type": "application/json" },
        body: JSON.stringify({ phone: "15550009997" }),
      }),
    );
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({
      code: 500,
      error_code: "unexpected_failure",
      msg: "Unable to get SMS provider",
    });
    const none = await client(autoconfirm).auth.signInWithOtp({
      phone: "+15550009998",
      options: { shouldCreateUser: false },
    });
    expect(none.error).toMatchObject({
      status: 422,
      code: "otp_disabled",
      message: "Signups not allowed for otp",
    });
  });

  it("refuses numbers that are not E.164 and channels other than sms", async () => {
    const supabase = client(autoconfirm);
    const invalid = {
      status: 400,
      code: "validation_failed",
      message: "Invalid phone number format (E.164 required)",
    };
    expect(
      (await supabase.auth.signUp({ phone: "555-0100", password: PASSWORD })).error,
    ).toMatchObject(invalid);
    expect((await supabase.auth.signInWithOtp({ phone: "+0123456" })).error).toMatchObject(invalid);
    expect(
      (await supabase.auth.verifyOtp({ phone: "0123", token: CODE, type: "sms" })).error,
    ).toMatchObject(invalid);
    const emailWithChannel = await autoconfirm.fetch(
      new Request(`${autoconfirm.url}/auth/v1/otp`, {
        method: "POST",
        headers: { apikey: PUBLISHABLE_KEY, "X-Supabase-Api-Version": "2024-01-01" },
        body: JSON.stringify({ email: "a@example.com", channel: "sms" }),
      }),
    );
    expect(await emailWithChannel.json()).toEqual({
      code: "validation_failed",
      message: "Channel should only be specified with Phone OTP",
    });
    const whatsapp = await supabase.auth.signInWithOtp({
      phone: freshNumber(),
      options: { channel: "whatsapp" },
    });
    expect(whatsapp.error).toMatchObject({
      status: 400,
      code: "validation_failed",
      message:
        "Invalid channel, supported values are 'sms' or 'whatsapp'. 'whatsapp' is only supported if Twilio or Twilio Verify is used as the provider.",
    });
  });

  it("updateUser({phone}) changes the number at once; a taken number is phone_exists", async () => {
    const supabase = client(autoconfirm);
    const first = freshNumber();
    const { data } = await supabase.auth.signUp({ phone: first, password: PASSWORD });
    await supabase.auth.setSession(data.session as never);
    const second = freshNumber();
    const changed = await supabase.auth.updateUser({ phone: second });
    expect(changed.error).toBeNull();
    expect(changed.data.user).toMatchObject({ phone: second });
    expect(changed.data.user?.identities?.[0]?.identity_data).toMatchObject({
      phone: second,
      phone_verified: true,
    });
    const other = freshNumber();
    await client(autoconfirm).auth.signUp({ phone: other, password: PASSWORD });
    const taken = await supabase.auth.updateUser({ phone: other });
    expect(taken.error).toMatchObject({
      status: 422,
      code: "phone_exists",
      message: "A user with this phone number has already been registered",
    });
  });

  it("admin createUser and updateUserById take a phone and phone_confirm", async () => {
    const admin = client(autoconfirm, SECRET_KEY);
    const phone = freshNumber();
    const created = await admin.auth.admin.createUser({
      phone,
      password: PASSWORD,
      phone_confirm: true,
    });
    expect(created.error).toBeNull();
    expect(created.data.user).toMatchObject({
      phone,
      app_metadata: { provider: "phone", providers: ["phone"] },
    });
    expect(created.data.user?.phone_confirmed_at).toBeTruthy();
    expect(created.data.user?.identities?.[0]).toMatchObject({
      provider: "phone",
      identity_data: { phone, phone_verified: false, email_verified: false },
    });
    const duplicate = await admin.auth.admin.createUser({ phone });
    expect(duplicate.error).toMatchObject({
      status: 422,
      code: "phone_exists",
      message: "Phone number already registered by another user",
    });
    // an email user gets a phone from the admin
    const withEmail = await admin.auth.admin.createUser({
      email: `phone-${phone}@example.com`,
      email_confirm: true,
    });
    const newPhone = freshNumber();
    const updated = await admin.auth.admin.updateUserById(withEmail.data.user?.id as string, {
      phone: `+${newPhone}`,
      phone_confirm: true,
    });
    expect(updated.error).toBeNull();
    expect(updated.data.user).toMatchObject({ phone: newPhone });
    expect(updated.data.user?.phone_confirmed_at).toBeTruthy();
    expect(updated.data.user?.identities?.map((i) => i.provider).sort()).toEqual([
      "email",
      "phone",
    ]);
    // and signs in with it
    const signedIn = await client(autoconfirm).auth.signInWithPassword({
      phone,
      password: PASSWORD,
    });
    expect(signedIn.error).toBeNull();
  });
});

describe("reauthentication of a phone-only user", () => {
  it("sends the nonce as the number's test code (max_frequency applies)", async () => {
    const phone = freshNumber();
    const { data } = await client(autoconfirm).auth.signUp({ phone, password: PASSWORD });
    const reauth = () =>
      autoconfirm.fetch(
        new Request(`${autoconfirm.url}/auth/v1/reauthenticate`, {
          headers: {
            apikey: PUBLISHABLE_KEY,
            Authorization: `Bearer ${data.session?.access_token}`,
            "X-Supabase-Api-Version": "2024-01-01",
          },
        }),
      );
    const first = await reauth();
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ message_id: "test-otp" });
    const second = await reauth();
    expect(second.status).toBe(429);
    expect(await second.json()).toMatchObject({ code: "over_sms_send_rate_limit" });
  });
});

describe("phone with [auth.sms] enable_confirmations", () => {
  it("signUp sends the code; the password works only after verifyOtp", async () => {
    const supabase = client(confirming);
    const phone = freshNumber();
    const { data, error } = await supabase.auth.signUp({ phone, password: PASSWORD });
    expect(error).toBeNull();
    expect(data.session).toBeNull();
    expect(data.user).toMatchObject({ phone });
    expect(data.user?.phone_confirmed_at).toBeUndefined();
    expect(data.user?.confirmation_sent_at).toBeTruthy();
    const early = await supabase.auth.signInWithPassword({ phone, password: PASSWORD });
    expect(early.error).toMatchObject({
      status: 400,
      code: "phone_not_confirmed",
      message: "Phone not confirmed",
    });
    const verified = await supabase.auth.verifyOtp({ phone, token: CODE, type: "sms" });
    expect(verified.error).toBeNull();
    expect(verified.data.user?.phone_confirmed_at).toBeTruthy();
    expect(
      (await supabase.auth.signInWithPassword({ phone, password: PASSWORD })).error,
    ).toBeNull();
  });

  it("a phone change waits for the new number's code (verifyOtp type phone_change)", async () => {
    const supabase = client(confirming);
    const phone = freshNumber();
    await supabase.auth.signUp({ phone, password: PASSWORD });
    const { data } = await supabase.auth.verifyOtp({ phone, token: CODE, type: "sms" });
    await supabase.auth.setSession(data.session as never);
    const newPhone = freshNumber();
    const pending = await supabase.auth.updateUser({ phone: newPhone });
    expect(pending.error).toBeNull();
    expect(pending.data.user).toMatchObject({ phone, new_phone: newPhone });
    const resent = await supabase.auth.resend({ type: "phone_change", phone });
    expect(resent.error).toMatchObject({ status: 429, code: "over_sms_send_rate_limit" });
    const changed = await supabase.auth.verifyOtp({
      phone: newPhone,
      token: CODE,
      type: "phone_change",
    });
    expect(changed.error).toBeNull();
    expect(changed.data.user).toMatchObject({ phone: newPhone });
    expect(changed.data.user).not.toHaveProperty("new_phone");
  });
});

describe("verifyOtp with a token_hash of an SMS code", () => {
  it("is refused for sms and phone_change (verifyTokenHash knows emailed types only); the code still works", async () => {
    const supabase = client(confirming);
    const phone = freshNumber();
    expect((await supabase.auth.signUp({ phone, password: PASSWORD })).error).toBeNull();
    // the hash the real service stores for the code (crypto.GenerateTokenHash)
    const hash = createHash("sha224").update(`${phone}${CODE}`).digest("hex");
    for (const type of ["sms", "phone_change"] as const) {
      const { data, error } = await supabase.auth.verifyOtp({ token_hash: hash, type });
      expect(error).toMatchObject({
        status: 400,
        code: "validation_failed",
        message: "Invalid email verification type",
      });
      expect(data.session).toBeNull();
    }
    // a redirect_to in the body is refused beside a token_hash, as email and phone are
    const response = await confirming.fetch(
      new Request(`${confirming.url}/auth/v1/verify`, {
        method: "POST",
        headers: {
          apikey: PUBLISHABLE_KEY,
          "Content-Type": "application/json",
          "X-Supabase-Api-Version": "2024-01-01",
        },
        body: JSON.stringify({ type: "signup", token_hash: hash, redirect_to: "http://a.test" }),
      }),
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      code: "validation_failed",
      message: "Only the token_hash and type should be provided",
    });
    const verified = await supabase.auth.verifyOtp({ phone, token: CODE, type: "sms" });
    expect(verified.error).toBeNull();
  });
});

describe("phone off (the project's config.toml has no [auth.sms] enable_signup)", () => {
  it("answers as a project without phone sign-in", async () => {
    const supabase = anonClient();
    expect(
      (await supabase.auth.signUp({ phone: "+15555550100", password: PASSWORD })).error,
    ).toMatchObject({
      status: 400,
      code: "phone_provider_disabled",
      message: "Phone signups are disabled",
    });
    expect((await supabase.auth.signInWithOtp({ phone: "+15555550100" })).error).toMatchObject({
      status: 400,
      code: "phone_provider_disabled",
      message: "Unsupported phone provider",
    });
    expect(
      (await supabase.auth.signInWithPassword({ phone: "+15555550100", password: PASSWORD })).error,
    ).toMatchObject({
      status: 422,
      code: "phone_provider_disabled",
      message: "Phone logins are disabled",
    });
  });
});

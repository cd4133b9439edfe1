// Phone MFA ([auth.mfa.phone]) through supabase-js: enroll a number, challenge it (no SMS leaves the
// machine: a number in [auth.sms.test_otp] is challenged with its fixed code, any other meets the
// real service's answer without an SMS provider), verify to aal2 with `mfa/phone` in amr, list,
// unenroll; the switches off give the hosted service's errors.
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PUBLISHABLE_KEY } from "../../../../tests/support/backend.ts";
import { type MemoryBackend, memoryBackend } from "../../../../tests/support/memory-backend.ts";

const CODE = "246810";
const numbers = Array.from({ length: 10 }, (_, i) => `1555010${String(1000 + i)}`);
let next = 0;
function testNumber(): string {
  const n = numbers[next++];
  if (!n) throw new Error("out of test numbers");
  return n;
}
const testOtp = Object.fromEntries(numbers.map((n) => [n, CODE]));

let on: MemoryBackend;
let enrollOff: MemoryBackend;
let verifyOff: MemoryBackend;

beforeAll(async () => {
  const sms = { testOtp };
  [on, enrollOff, verifyOff] = await Promise.all([
    memoryBackend({
      auth: { sms, mfa: { phone: { enrollEnabled: true, verifyEnabled: true } } },
    }),
    memoryBackend({ auth: { sms, mfa: { phone: { enrollEnabled: false, verifyEnabled: true } } } }),
    memoryBackend({ auth: { sms, mfa: { phone: { enrollEnabled: true, verifyEnabled: false } } } }),
  ]);
}, 90_000);

afterAll(async () => {
  await Promise.all([on?.close(), enrollOff?.close(), verifyOff?.close()]);
});

/** POST /auth/v1/factors with the user's token, as the wire carries it. */
async function rawEnroll(backend: MemoryBackend, token: string, body: unknown) {
  const response = await backend.fetch(`${backend.backend.url}/auth/v1/factors`, {
    method: "POST",
    headers: {
      apikey: PUBLISHABLE_KEY,
      Authorization: `Bearer ${token}`,
      "Content-Type": "application/json",
      "X-Supabase-Api-Version": "2024-01-01",
    },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

describe("phone factor", () => {
  it("enrolls, challenges with the test code, verifies to aal2 (mfa/phone), lists and unenrolls", async () => {
    const { client } = await on.signedIn();
    const phone = testNumber();
    const written = `+${phone.slice(0, 1)} ${phone.slice(1)}`;
    const enrolled = await client.auth.mfa.enroll({
      factorType: "phone",
      phone: written,
      friendlyName: "Work phone",
    });
    expect(enrolled.error).toBeNull();
    // the number comes back as the client wrote it
    expect(enrolled.data).toEqual({
      id: expect.any(String),
      type: "phone",
      friendly_name: "Work phone",
      phone: written,
    });
    const factorId = enrolled.data?.id ?? "";
    const listed = await client.auth.mfa.listFactors();
    expect(listed.data?.all).toEqual([
      expect.objectContaining({ id: factorId, factor_type: "phone", status: "unverified", phone }),
    ]);
    expect(listed.data?.phone).toEqual([]);

    const challenge = await client.auth.mfa.challenge({ factorId });
    expect(challenge.error).toBeNull();
    expect(challenge.data).toMatchObject({ id: expect.any(String), type: "phone" });
    const expiresIn = (challenge.data?.expires_at ?? 0) - Date.now() / 1000;
    expect(expiresIn).toBeGreaterThan(290);
    expect(expiresIn).toBeLessThanOrEqual(300);
    const challengeId = challenge.data?.id ?? "";

    const wrong = await client.auth.mfa.verify({ factorId, challengeId, code: "135790" });
    expect(wrong.error).toMatchObject({
      status: 422,
      code: "mfa_verification_failed",
      message: "Invalid MFA Phone code entered",
    });

    const verified = await client.auth.mfa.verify({ factorId, challengeId, code: CODE });
    expect(verified.error).toBeNull();
    const claims = decodeJwt(verified.data?.access_token ?? "");
    expect(claims.aal).toBe("aal2");
    expect((claims.amr as Array<{ method: string }>).map((a) => a.method)).toEqual([
      "mfa/phone",
      "password",
    ]);
    const aal = await client.auth.mfa.getAuthenticatorAssuranceLevel();
    expect(aal.data).toMatchObject({ currentLevel: "aal2", nextLevel: "aal2" });
    const after = await client.auth.mfa.listFactors();
    expect(after.data?.phone).toEqual([
      expect.objectContaining({ id: factorId, factor_type: "phone", status: "verified", phone }),
    ]);

    // the challenge is spent
    const again = await client.auth.mfa.verify({ factorId, challengeId, code: CODE });
    expect(again.error).toMatchObject({ status: 422, code: "mfa_ip_address_mismatch" });
    // the same number cannot be enrolled twice once verified
    const twice = await client.auth.mfa.enroll({ factorType: "phone", phone: `+${phone}` });
    expect(twice.error).toMatchObject({
      status: 422,
      code: "mfa_verified_factor_exists",
      message: "A verified phone factor already exists, unenroll the existing factor to continue",
    });

    const removed = await client.auth.mfa.unenroll({ factorId });
    expect(removed.error).toBeNull();
    expect(removed.data).toEqual({ id: factorId });
    expect((await client.auth.mfa.listFactors()).data?.all).toEqual([]);
  });

  it("enrolling a number again replaces its unverified factor", async () => {
    const { client } = await on.signedIn();
    const phone = testNumber();
    const first = await client.auth.mfa.enroll({ factorType: "phone", phone, friendlyName: "a" });
    const second = await client.auth.mfa.enroll({ factorType: "phone", phone, friendlyName: "b" });
    expect(second.error).toBeNull();
    const all = (await client.auth.mfa.listFactors()).data?.all ?? [];
    expect(all.map((f) => f.id)).toEqual([second.data?.id]);
    expect(all.map((f) => f.id)).not.toContain(first.data?.id);
  });

  it("refuses a missing or malformed number", async () => {
    const { session } = await on.signedIn();
    const token = session?.access_token ?? "";
    expect(await rawEnroll(on, token, { factor_type: "phone" })).toEqual({
      status: 400,
      body: { code: "validation_failed", message: "Phone number required to enroll Phone factor" },
    });
    expect(await rawEnroll(on, token, { factor_type: "phone", phone: "+0123" })).toEqual({
      status: 400,
      body: { code: "validation_failed", message: "Invalid phone number format (E.164 required)" },
    });
  });

  it("challenge: the channel is checked, max_frequency holds, and a number without a test code is refused", async () => {
    const { client, session } = await on.signedIn();
    const token = session?.access_token ?? "";
    const enrolled = await client.auth.mfa.enroll({ factorType: "phone", phone: testNumber() });
    const factorId = enrolled.data?.id ?? "";

    const whatsapp = await client.auth.mfa.challenge({ factorId, channel: "whatsapp" });
    expect(whatsapp.error).toMatchObject({
      status: 400,
      code: "validation_failed",
      message:
        "Invalid channel, supported values are 'sms' or 'whatsapp'. 'whatsapp' is only supported if Twilio or Twilio Verify is used as the provider.",
    });
    // the wire needs a JSON body, as Go's decoder does
    const empty = await on.fetch(`${on.backend.url}/auth/v1/factors/${factorId}/challenge`, {
      method: "POST",
      headers: {
        apikey: PUBLISHABLE_KEY,
        Authorization: `Bearer ${token}`,
        "X-Supabase-Api-Version": "2024-01-01",
      },
    });
    expect(empty.status).toBe(400);
    expect((await empty.json()).code).toBe("bad_json");

    expect((await client.auth.mfa.challenge({ factorId, channel: "sms" })).error).toBeNull();
    const soon = await client.auth.mfa.challenge({ factorId });
    expect(soon.error).toMatchObject({ status: 429, code: "over_sms_send_rate_limit" });
    expect(soon.error?.message).toMatch(
      /^For security purposes, you can only request this after [0-4] seconds\.$/,
    );

    const unknown = await client.auth.mfa.enroll({
      factorType: "phone",
      phone: "+15550199999",
      friendlyName: "not a test number",
    });
    // supabase-js hides a 500's body (AuthRetryableFetchError): read the wire
    const refused = await on.fetch(
      `${on.backend.url}/auth/v1/factors/${unknown.data?.id}/challenge`,
      {
        method: "POST",
        headers: {
          apikey: PUBLISHABLE_KEY,
          Authorization: `Bearer ${token}`,
          "Content-Type": "application/json",
          "X-Supabase-Api-Version": "2024-01-01",
        },
        body: JSON.stringify({ channel: "sms" }),
      },
    );
    expect(refused.status).toBe(500);
    expect(await refused.json()).toEqual({
      code: "unexpected_failure",
      message: "Failed to get SMS provider",
    });
  });
});

describe("[auth.mfa.phone] switched off", () => {
  it("enroll_enabled = false: mfa_phone_enroll_not_enabled", async () => {
    const { client } = await enrollOff.signedIn();
    const { error } = await client.auth.mfa.enroll({ factorType: "phone", phone: testNumber() });
    expect(error).toMatchObject({
      status: 422,
      code: "mfa_phone_enroll_not_enabled",
      message: "MFA enroll is disabled for Phone",
    });
  });

  it("verify_enabled = false: challenge and verify answer mfa_phone_verify_not_enabled", async () => {
    const { client } = await verifyOff.signedIn();
    const enrolled = await client.auth.mfa.enroll({ factorType: "phone", phone: testNumber() });
    expect(enrolled.error).toBeNull();
    const factorId = enrolled.data?.id ?? "";
    const disabled = {
      status: 422,
      code: "mfa_phone_verify_not_enabled",
      message: "MFA verification is disabled for Phone",
    };
    expect((await client.auth.mfa.challenge({ factorId })).error).toMatchObject(disabled);
    const challengeId = "8b4f4f4e-9f6c-4f4e-8c65-2c1b1d2c1a11";
    const verify = await client.auth.mfa.verify({ factorId, challengeId, code: CODE });
    expect(verify.error).toMatchObject(disabled);
  });
});

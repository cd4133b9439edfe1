// [auth.rate_limit] sms_sent: SMS codes an hour for the whole project, counted as the real service
// counts them: only codes that would go to a provider (a number without a test code) and only with
// [auth.sms] enable_confirmations on (the CLI's GOTRUE_SMS_AUTOCONFIRM off). Locally such a code
// then meets the missing provider; once the hour's count is spent it is 429 first.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PASSWORD, PUBLISHABLE_KEY } from "../../../../tests/support/backend.ts";
import { type MemoryBackend, memoryBackend } from "../../../../tests/support/memory-backend.ts";

const TEST_NUMBER = "15550123000";
const CODE = "123456";
const sms = { enableSignup: true, testOtp: { [TEST_NUMBER]: CODE } };

let confirming: MemoryBackend;
let autoconfirm: MemoryBackend;

beforeAll(async () => {
  [confirming, autoconfirm] = await Promise.all([
    memoryBackend({
      auth: { sms: { ...sms, enableConfirmations: true }, rateLimit: { smsSent: 2 } },
    }),
    memoryBackend({ auth: { sms, rateLimit: { smsSent: 1 } } }),
  ]);
}, 90_000);

afterAll(async () => {
  await Promise.all([confirming?.close(), autoconfirm?.close()]);
});

/** POST /auth/v1/<path> as the wire carries it (supabase-js hides a 500's body). */
async function post(backend: MemoryBackend, path: string, body: unknown) {
  const response = await backend.fetch(`${backend.backend.url}/auth/v1/${path}`, {
    method: "POST",
    headers: {
      apikey: PUBLISHABLE_KEY,
      "Content-Type": "application/json",
      "X-Supabase-Api-Version": "2024-01-01",
    },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

const noProvider = {
  status: 500,
  body: { code: "unexpected_failure", message: "Unable to get SMS provider" },
};

describe("sms_sent", () => {
  it("codes to numbers without a test code count across endpoints; the third of the hour is 429", async () => {
    expect(await post(confirming, "otp", { phone: "+15550124001" })).toEqual(noProvider);
    expect(await post(confirming, "signup", { phone: "+15550124002", password: PASSWORD })).toEqual(
      noProvider,
    );
    const over = await confirming.client().auth.signInWithOtp({ phone: "+15550124003" });
    expect(over.error).toMatchObject({
      status: 429,
      code: "over_sms_send_rate_limit",
      message: "SMS rate limit exceeded",
    });
    expect(await post(confirming, "otp", { phone: "+15550124004" })).toEqual({
      status: 429,
      body: { code: "over_sms_send_rate_limit", message: "SMS rate limit exceeded" },
    });
    // a test number's code is no SMS: it is still sent
    const test = await confirming.client().auth.signInWithOtp({ phone: `+${TEST_NUMBER}` });
    expect(test.error).toBeNull();
    const verified = await confirming
      .client()
      .auth.verifyOtp({ phone: `+${TEST_NUMBER}`, token: CODE, type: "sms" });
    expect(verified.error).toBeNull();
  });

  it("with confirmations off (SMS autoconfirm) nothing is counted", async () => {
    for (const phone of ["+15550125001", "+15550125002", "+15550125003"]) {
      expect(await post(autoconfirm, "otp", { phone })).toEqual(noProvider);
    }
  });
});

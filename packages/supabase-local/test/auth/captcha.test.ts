// [auth.captcha] as Auth's verifyCaptcha applies it, through the real supabase-js (its
// `captchaToken` options), with the providers' documented test secrets, which the local backend
// answers as the providers do, so nothing leaves the machine.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PASSWORD, PUBLISHABLE_KEY, randomEmail } from "../../../../tests/support/backend.ts";
import { type MemoryBackend, memoryBackend } from "../../../../tests/support/memory-backend.ts";

/** Turnstile's test secrets: one that always passes, one that always fails. */
let passing: MemoryBackend;
let failing: MemoryBackend;
/** hCaptcha's test secret: its test token passes, any other fails. */
let hcaptcha: MemoryBackend;

const turnstile = (secret: string) =>
  memoryBackend({
    auth: {
      email: { enableConfirmations: false },
      enableAnonymousSignIns: true,
      captcha: { provider: "turnstile", secret },
    },
  });

beforeAll(async () => {
  passing = await turnstile("1x0000000000000000000000000000000AA");
  failing = await turnstile("2x0000000000000000000000000000000AA");
  hcaptcha = await memoryBackend({
    auth: {
      email: { enableConfirmations: false },
      captcha: { provider: "hcaptcha", secret: "0x0000000000000000000000000000000000000000" },
    },
  });
}, 60_000);
afterAll(async () => {
  await Promise.all([passing?.close(), failing?.close(), hcaptcha?.close()]);
});

const NO_TOKEN = {
  status: 400,
  code: "captcha_failed",
  message: "captcha protection: request disallowed (no captcha_token found)",
};

describe("[auth.captcha]", () => {
  it("asks every sign-up and sign-in for a token, and lets it through when the provider passes it", async () => {
    const client = passing.client();
    const email = randomEmail("captcha");
    expect((await client.auth.signUp({ email, password: PASSWORD })).error).toMatchObject(NO_TOKEN);
    const captchaToken = "XXXX.DUMMY.TOKEN.XXXX";
    const signedUp = await client.auth.signUp({
      email,
      password: PASSWORD,
      options: { captchaToken },
    });
    expect(signedUp.error).toBeNull();

    const refusals = await Promise.all([
      client.auth.signInWithPassword({ email, password: PASSWORD }),
      client.auth.signInWithOtp({ email }),
      client.auth.resetPasswordForEmail(email),
      client.auth.resend({ type: "signup", email }),
      passing.client().auth.signInAnonymously(),
    ]);
    for (const { error } of refusals) expect(error).toMatchObject(NO_TOKEN);

    const signedIn = await client.auth.signInWithPassword({
      email,
      password: PASSWORD,
      options: { captchaToken },
    });
    expect(signedIn.error).toBeNull();
    // a refresh follows a sign-in that had its token: not asked again
    expect((await client.auth.refreshSession()).error).toBeNull();
    expect(
      (await client.auth.signInWithOtp({ email, options: { captchaToken } })).error,
    ).toBeNull();
    // the admin API is not asked
    const created = await passing.admin().auth.admin.createUser({ email: randomEmail("admin") });
    expect(created.error).toBeNull();
  });

  it("a token of the wrong type, or a security field that is no object, is a 400 bad_json, as Go's decoder answers", async () => {
    const signUp = (security: unknown) =>
      passing.fetch(`${passing.backend.url}/auth/v1/signup`, {
        method: "POST",
        headers: { apikey: PUBLISHABLE_KEY, "Content-Type": "application/json" },
        body: JSON.stringify({
          email: randomEmail("typed"),
          password: PASSWORD,
          gotrue_meta_security: security,
        }),
      });
    for (const security of [{ captcha_token: 5 }, "XXXX.DUMMY.TOKEN.XXXX", [1]]) {
      const response = await signUp(security);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error_code: "bad_json" });
    }
    // null is no token: the plain refusal
    expect(await (await signUp(null)).json()).toMatchObject({
      error_code: "captcha_failed",
      msg: NO_TOKEN.message,
    });
  });

  it("refuses with the provider's error codes when it fails the token", async () => {
    const { error } = await failing.client().auth.signUp({
      email: randomEmail("bot"),
      password: PASSWORD,
      options: { captchaToken: "XXXX.DUMMY.TOKEN.XXXX" },
    });
    expect(error).toMatchObject({
      status: 400,
      code: "captcha_failed",
      message: "captcha protection: request disallowed (invalid-input-response)",
    });
  });

  it("hCaptcha's test secret passes its test token only", async () => {
    const signUp = (captchaToken: string) =>
      hcaptcha.client().auth.signUp({
        email: randomEmail("hcaptcha"),
        password: PASSWORD,
        options: { captchaToken },
      });
    expect((await signUp("10000000-aaaa-bbbb-cccc-000000000001")).error).toBeNull();
    expect((await signUp("XXXX.DUMMY.TOKEN.XXXX")).error).toMatchObject({
      code: "captcha_failed",
      message: "captcha protection: request disallowed (invalid-input-response)",
    });
  });
});

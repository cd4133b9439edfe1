// [auth.rate_limit] with small limits on a second, in-memory backend (the shared test backend keeps
// config.toml's generous ones). Each test speaks from its own client address, as the real service
// counts per IP: this backend is told to trust X-Forwarded-For (as behind a proxy that sets it),
// which a default backend ignores (client-address.test.ts).
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { PASSWORD, randomEmail } from "../../../../tests/support/backend.ts";
import { type MemoryBackend, memoryBackend } from "../../../../tests/support/memory-backend.ts";
import { enroll, enrollVerified, otherCode, totpCode } from "../../../../tests/support/mfa.ts";

let local: MemoryBackend;

beforeAll(async () => {
  local = await memoryBackend(
    {
      auth: {
        enableAnonymousSignIns: true,
        rateLimit: {
          signInSignUps: 2,
          tokenRefresh: 3,
          tokenVerifications: 2,
          anonymousUsers: 1,
          emailSent: 2,
        },
      },
    },
    { trustProxyHeader: "X-Forwarded-For" },
  );
}, 60_000);
afterAll(() => local?.close());
afterEach(() => vi.restoreAllMocks());

const from = (ip: string) => local.client({ headers: { "X-Forwarded-For": ip } });

const overRequestLimit = {
  status: 429,
  code: "over_request_rate_limit",
  message: "Request rate limit reached",
};

async function confirmedUser() {
  const email = randomEmail("limits");
  const { data, error } = await local.admin().auth.admin.createUser({
    email,
    password: PASSWORD,
    email_confirm: true,
  });
  if (error) throw error;
  return { email, user: data.user };
}

describe("sign_in_sign_ups (5-minute window per IP)", () => {
  it("counts sign-ups, recoveries and OTP requests together; another address is not affected", async () => {
    const client = from("10.0.0.1");
    expect((await client.auth.resetPasswordForEmail(randomEmail("nobody"))).error).toBeNull();
    expect((await client.auth.resetPasswordForEmail(randomEmail("nobody"))).error).toBeNull();
    const third = await client.auth.resetPasswordForEmail(randomEmail("nobody"));
    expect(third.error).toMatchObject(overRequestLimit);

    const email = randomEmail("refused");
    const signUp = await client.auth.signUp({ email, password: PASSWORD });
    expect(signUp.error).toMatchObject(overRequestLimit);
    const created = await local.backend.db.query("select 1 from auth.users where email = $1", [
      email,
    ]);
    expect(created.rows).toHaveLength(0);

    const other = from("10.0.0.2");
    expect((await other.auth.resetPasswordForEmail(randomEmail("nobody"))).error).toBeNull();
  });

  it("opens again when the window has passed", async () => {
    const client = from("10.0.0.3");
    await client.auth.resetPasswordForEmail(randomEmail("nobody"));
    await client.auth.resetPasswordForEmail(randomEmail("nobody"));
    expect((await client.auth.resetPasswordForEmail(randomEmail("nobody"))).error).toMatchObject(
      overRequestLimit,
    );
    const later = Date.now() + 5 * 60 * 1000 + 1000;
    vi.spyOn(Date, "now").mockReturnValue(later);
    expect((await client.auth.resetPasswordForEmail(randomEmail("nobody"))).error).toBeNull();
  });
});

describe("token_refresh (every /token grant, 5-minute window per IP)", () => {
  it("password sign-ins and refreshes share the limit; wrong passwords count too", async () => {
    const { email } = await confirmedUser();
    const client = from("10.0.1.1");
    const wrong = await client.auth.signInWithPassword({ email, password: "wrong-password" });
    expect(wrong.error).toMatchObject({ status: 400, code: "invalid_credentials" });
    const signedIn = await client.auth.signInWithPassword({ email, password: PASSWORD });
    expect(signedIn.error).toBeNull();
    expect((await client.auth.refreshSession()).error).toBeNull();
    const refused = await client.auth.signInWithPassword({ email, password: PASSWORD });
    expect(refused.error).toMatchObject(overRequestLimit);

    const raw = await local.fetch(`${local.backend.url}/auth/v1/token?grant_type=refresh_token`, {
      method: "POST",
      headers: {
        apikey: "sb_publishable_ACJWlzQHlZjBrEguHvfOxg_3BJgxAaH",
        "Content-Type": "application/json",
        "X-Forwarded-For": "10.0.1.1",
      },
      body: JSON.stringify({ refresh_token: signedIn.data.session?.refresh_token }),
    });
    expect(raw.status).toBe(429);
    expect(raw.headers.get("x-sb-error-code")).toBe("over_request_rate_limit");
    expect(await raw.json()).toEqual({
      code: 429,
      error_code: "over_request_rate_limit",
      msg: "Request rate limit reached",
    });
  });
});

describe("token_verifications (/verify, 5-minute window per IP)", () => {
  it("wrong codes count; the third verification is refused", async () => {
    const { email } = await confirmedUser();
    const client = from("10.0.2.1");
    for (let i = 0; i < 2; i++) {
      const { error } = await client.auth.verifyOtp({ email, token: "000000", type: "email" });
      expect(error).toMatchObject({ status: 403, code: "otp_expired" });
    }
    const third = await client.auth.verifyOtp({ email, token: "000000", type: "email" });
    expect(third.error).toMatchObject(overRequestLimit);
  });
});

describe("anonymous_users (1-hour window per IP)", () => {
  it("one anonymous sign-in per hour here", async () => {
    const client = from("10.0.3.1");
    expect((await client.auth.signInAnonymously()).error).toBeNull();
    const second = await from("10.0.3.1").auth.signInAnonymously();
    expect(second.error).toMatchObject(overRequestLimit);
    expect((await from("10.0.3.2").auth.signInAnonymously()).error).toBeNull();
  });
});

describe("email_sent (per hour, for the whole project)", () => {
  it("the third email of the hour is refused with over_email_send_rate_limit", async () => {
    const users = await Promise.all([confirmedUser(), confirmedUser(), confirmedUser()]);
    const results = [];
    for (const [i, { email }] of users.entries()) {
      results.push(await from(`10.0.4.${i}`).auth.resetPasswordForEmail(email));
    }
    expect(results[0]?.error).toBeNull();
    expect(results[1]?.error).toBeNull();
    expect(results[2]?.error).toMatchObject({
      status: 429,
      code: "over_email_send_rate_limit",
      message: "email rate limit exceeded",
    });
    expect(local.backend.inbox.list(users[2]?.email ?? "")).toHaveLength(0);
    expect(local.backend.inbox.list(users[1]?.email ?? "")).toHaveLength(1);
  });
});

describe("MFA challenge and verify (15 a minute per IP, bursts of 30: the real service's defaults)", () => {
  /** The password is known, the second factor is not: guesses from one address. */
  async function attackerOnVictim() {
    const victim = await local.signedIn({ headers: { "X-Forwarded-For": "10.0.5.1" } });
    const { factor } = await enrollVerified(victim.client);
    const attacker = from("10.0.5.2");
    const signedIn = await attacker.auth.signInWithPassword({
      email: victim.email,
      password: PASSWORD,
    });
    expect(signedIn.error).toBeNull();
    return { attacker, email: victim.email, factor, secret: factor.totp.secret };
  }

  it("30 wrong codes in a row are checked, the 31st challenge and verify are refused unchecked", async () => {
    const { attacker, email, factor, secret } = await attackerOnVictim();
    // The clock stands still during the burst: no tokens come back in between.
    const start = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(start);
    let challengeId = "";
    for (let i = 0; i < 30; i++) {
      const challenge = await attacker.auth.mfa.challenge({ factorId: factor.id });
      expect(challenge.error).toBeNull();
      challengeId = challenge.data?.id ?? "";
      const guess = await attacker.auth.mfa.verify({
        factorId: factor.id,
        challengeId,
        code: otherCode(totpCode(secret)),
      });
      expect(guess.error).toMatchObject({ status: 422, code: "mfa_verification_failed" });
    }
    const refusedChallenge = await attacker.auth.mfa.challenge({ factorId: factor.id });
    expect(refusedChallenge.error).toMatchObject(overRequestLimit);
    // Even the right code is not looked at once the limit is spent.
    const refusedVerify = await attacker.auth.mfa.verify({
      factorId: factor.id,
      challengeId,
      code: totpCode(secret, 30),
    });
    expect(refusedVerify.error).toMatchObject(overRequestLimit);
    const aal = await attacker.auth.mfa.getAuthenticatorAssuranceLevel();
    expect(aal.data?.currentLevel).toBe("aal1");

    // Another address has its own limit.
    const elsewhere = from("10.0.5.3");
    await elsewhere.auth.signInWithPassword({ email, password: PASSWORD });
    expect((await elsewhere.auth.mfa.challenge({ factorId: factor.id })).error).toBeNull();

    // 15 a minute: one more of each every 4 seconds.
    vi.spyOn(Date, "now").mockReturnValue(start + 4_000);
    const again = await attacker.auth.mfa.challenge({ factorId: factor.id });
    expect(again.error).toBeNull();
    expect((await attacker.auth.mfa.challenge({ factorId: factor.id })).error).toMatchObject(
      overRequestLimit,
    );
    const verified = await attacker.auth.mfa.verify({
      factorId: factor.id,
      challengeId: again.data?.id ?? "",
      code: totpCode(secret, 30),
    });
    expect(verified.error).toBeNull();
  });

  it("an unknown factor is refused before the limiter counts (404, as loadFactor runs first)", async () => {
    const { client } = await local.signedIn({ headers: { "X-Forwarded-For": "10.0.5.4" } });
    const factor = await enroll(client, "Phone");
    for (let i = 0; i < 35; i++) {
      const { error } = await client.auth.mfa.challenge({ factorId: crypto.randomUUID() });
      expect(error).toMatchObject({ status: 404, code: "mfa_factor_not_found" });
    }
    expect((await client.auth.mfa.challenge({ factorId: factor.id })).error).toBeNull();
  });
});

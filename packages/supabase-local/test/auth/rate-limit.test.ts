// [auth.rate_limit] at the hosted defaults, on a second, in-memory backend (the shared test backend
// raises them: every test file signs in from 127.0.0.1). Upstream (internal/api/apilimiter) every
// per-address limiter is a token bucket that holds 30 and refills at the configured rate, so each
// test spends a bucket of 30, sees the 31st refused, then lets the frozen clock run for one token.
// Each test speaks from its own client address, as the real service counts per IP: this backend is
// told to trust X-Forwarded-For (as behind a proxy that sets it), which a default backend ignores
// (client-address.test.ts).
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { PASSWORD, PUBLISHABLE_KEY, randomEmail } from "../../../../tests/support/backend.ts";
import { type MemoryBackend, memoryBackend } from "../../../../tests/support/memory-backend.ts";
import { enroll, enrollVerified, otherCode, totpCode } from "../../../../tests/support/mfa.ts";

let local: MemoryBackend;

beforeAll(async () => {
  local = await memoryBackend(
    {
      auth: {
        enableAnonymousSignIns: true,
        // The hosted defaults (the CLI's config.toml template), whatever config.toml says.
        rateLimit: {
          signInSignUps: 30,
          tokenRefresh: 150,
          tokenVerifications: 30,
          anonymousUsers: 30,
          // As config.toml keeps it locally (the bursts of sign-ups here send mail); the hosted 2
          // an hour is tested below on a backend of its own.
          emailSent: 1000,
          mfaChallengeAndVerify: 15,
        },
        mfa: {
          recoveryCodes: { enrollEnabled: true, verifyEnabled: true, maxVerifyAttempts: 100 },
        },
      },
    },
    { trustProxyHeader: "X-Forwarded-For" },
  );
}, 60_000);
afterAll(() => local?.close());
afterEach(() => vi.restoreAllMocks());

const from = (ip: string) => local.client({ headers: { "X-Forwarded-For": ip } });

/** Stops the clock at `ms` (tokens come back only when the test moves it). */
const at = (ms: number) => vi.spyOn(Date, "now").mockReturnValue(ms);

const overRequestLimit = {
  status: 429,
  code: "over_request_rate_limit",
  message: "Request rate limit reached",
};

/** POST /auth/v1/<path> with a JSON body from `ip`: the status and error_code of the answer. */
async function post(ip: string, path: string, body: object, token?: string) {
  const response = await local.fetch(`${local.backend.url}/auth/v1/${path}`, {
    method: path.startsWith("user") ? "PUT" : "POST",
    headers: {
      apikey: PUBLISHABLE_KEY,
      "Content-Type": "application/json",
      "X-Forwarded-For": ip,
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  });
  const json = (await response.json()) as { error_code?: string };
  return { status: response.status, code: json.error_code };
}

/** `count` requests made by `send`, one after another: their statuses. */
async function statuses(count: number, send: (i: number) => Promise<{ status: number }>) {
  const seen: number[] = [];
  for (let i = 0; i < count; i++) seen.push((await send(i)).status);
  return seen;
}

const refused = { status: 429, code: "over_request_rate_limit" };

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

describe("/token: one bucket of 30 per address for every grant, refilled at token_refresh (150) per 5 minutes", () => {
  it("30 sign-ins at once, wrong passwords among them, then 429 until a token comes back (one every 2 s)", async () => {
    const { email } = await confirmedUser();
    const start = Date.now();
    at(start);
    const signIn = (ip: string, password: string) =>
      post(ip, "token?grant_type=password", { email, password });
    const burst = await statuses(30, (i) =>
      signIn("10.0.1.1", i % 2 ? PASSWORD : "wrong-password"),
    );
    expect(burst.filter((s) => s === 200)).toHaveLength(15);
    expect(burst.filter((s) => s === 400)).toHaveLength(15);
    expect(await signIn("10.0.1.1", PASSWORD)).toEqual(refused);

    // The raw answer, as GoTrue writes it.
    const raw = await local.fetch(`${local.backend.url}/auth/v1/token?grant_type=refresh_token`, {
      method: "POST",
      headers: {
        apikey: PUBLISHABLE_KEY,
        "Content-Type": "application/json",
        "X-Forwarded-For": "10.0.1.1",
      },
      body: JSON.stringify({ refresh_token: "anything" }),
    });
    expect(raw.status).toBe(429);
    expect(raw.headers.get("x-sb-error-code")).toBe("over_request_rate_limit");
    expect(await raw.json()).toEqual({
      code: 429,
      error_code: "over_request_rate_limit",
      msg: "Request rate limit reached",
    });

    // Another address has a full bucket of its own.
    expect((await signIn("10.0.1.2", PASSWORD)).status).toBe(200);

    // 150 per 5 minutes: one more every 2 seconds, not a fresh 150 after a window.
    at(start + 1_900);
    expect(await signIn("10.0.1.1", PASSWORD)).toEqual(refused);
    at(start + 2_000);
    expect((await signIn("10.0.1.1", PASSWORD)).status).toBe(200);
    expect(await signIn("10.0.1.1", PASSWORD)).toEqual(refused);
    // Ten seconds give five.
    at(start + 12_000);
    expect(await statuses(6, () => signIn("10.0.1.1", PASSWORD))).toEqual([
      200, 200, 200, 200, 200, 429,
    ]);
  });

  it("refreshes and PKCE exchanges spend the same bucket as password sign-ins", async () => {
    const { email } = await confirmedUser();
    at(Date.now());
    const client = from("10.0.1.3");
    const signedIn = await client.auth.signInWithPassword({ email, password: PASSWORD });
    expect(signedIn.error).toBeNull();
    for (let i = 0; i < 28; i++) expect((await client.auth.refreshSession()).error).toBeNull();
    const exchange = await post("10.0.1.3", "token?grant_type=pkce", {
      auth_code: crypto.randomUUID(),
      code_verifier: "v".repeat(43),
    });
    expect(exchange.status).not.toBe(429);
    expect((await client.auth.refreshSession()).error).toMatchObject(overRequestLimit);
  });
});

describe("sign-up, OTP, magic link, recover, resend and PUT /user: a bucket of 30 each, refilled at sign_in_sign_ups (30) per 5 minutes", () => {
  it("each endpoint has its own bucket per address, as upstream's six limiters", async () => {
    const start = Date.now();
    at(start);
    const recover = (ip: string) => post(ip, "recover", { email: randomEmail("nobody") });
    expect(new Set(await statuses(30, () => recover("10.0.0.1")))).toEqual(new Set([200]));
    expect(await recover("10.0.0.1")).toEqual(refused);

    // A spent /recover bucket leaves this address's sign-ups, OTPs, magic links and resends alone.
    const email = randomEmail("other-bucket");
    expect((await post("10.0.0.1", "signup", { email, password: PASSWORD })).status).toBe(200);
    const others = [
      await post("10.0.0.1", "otp", { email: randomEmail("nobody"), create_user: false }),
      await post("10.0.0.1", "magiclink", { email: randomEmail("nobody") }),
      await post("10.0.0.1", "resend", { type: "signup", email: randomEmail("nobody") }),
    ];
    for (const answer of others) expect(answer.code).not.toBe("over_request_rate_limit");
    // Another address can recover.
    expect((await recover("10.0.0.2")).status).toBe(200);

    // 30 per 5 minutes: one every 10 seconds.
    at(start + 9_000);
    expect(await recover("10.0.0.1")).toEqual(refused);
    at(start + 10_000);
    expect((await recover("10.0.0.1")).status).toBe(200);
    expect(await recover("10.0.0.1")).toEqual(refused);
  });

  it("a refused sign-up creates nobody; PUT /user is limited too", async () => {
    at(Date.now());
    const signUps = await statuses(30, () =>
      post("10.0.0.3", "signup", { email: randomEmail("burst"), password: PASSWORD }),
    );
    expect(new Set(signUps)).toEqual(new Set([200]));
    const email = randomEmail("refused");
    expect(await post("10.0.0.3", "signup", { email, password: PASSWORD })).toEqual(refused);
    const created = await local.backend.db.query("select 1 from auth.users where email = $1", [
      email,
    ]);
    expect(created.rows).toHaveLength(0);

    const { session } = await local.signedIn({ headers: { "X-Forwarded-For": "10.0.0.4" } });
    const token = session.access_token;
    const updates = await statuses(30, (i) => post("10.0.0.4", "user", { data: { i } }, token));
    expect(new Set(updates)).toEqual(new Set([200]));
    expect(await post("10.0.0.4", "user", { data: { i: 30 } }, token)).toEqual(refused);
  });
});

describe("/verify: a bucket of 30 per address, refilled at token_verifications (30) per 5 minutes", () => {
  it("wrong codes count; the 31st verification is refused, one more after 10 s", async () => {
    const { email } = await confirmedUser();
    const start = Date.now();
    at(start);
    const verify = () => post("10.0.2.1", "verify", { email, token: "000000", type: "email" });
    expect(new Set(await statuses(30, verify))).toEqual(new Set([403]));
    expect(await verify()).toEqual(refused);
    at(start + 10_000);
    expect((await verify()).status).toBe(403);
    expect(await verify()).toEqual(refused);
  });
});

describe("anonymous sign-ins: a bucket of anonymous_users (30) per address, refilled over the hour", () => {
  it("30 at once, then one every 2 minutes; another address is not affected", async () => {
    const start = Date.now();
    at(start);
    const anonymous = (ip: string) => post(ip, "signup", {});
    expect(new Set(await statuses(30, () => anonymous("10.0.3.1")))).toEqual(new Set([200]));
    expect(await anonymous("10.0.3.1")).toEqual(refused);
    expect((await anonymous("10.0.3.2")).status).toBe(200);
    at(start + 120_000);
    expect((await anonymous("10.0.3.1")).status).toBe(200);
    expect(await anonymous("10.0.3.1")).toEqual(refused);
  });
});

describe("email_sent (per hour, for the whole project, as upstream's interval limiter)", () => {
  let mail: MemoryBackend;
  beforeAll(async () => {
    mail = await memoryBackend(
      { auth: { rateLimit: { emailSent: 2 } } },
      { trustProxyHeader: "X-Forwarded-For" },
    );
  }, 60_000);
  afterAll(() => mail?.close());

  it("the third email of the hour is refused with over_email_send_rate_limit, whatever the address", async () => {
    const users = [];
    for (let i = 0; i < 3; i++) {
      const email = randomEmail("mail");
      const created = await mail.admin().auth.admin.createUser({ email, email_confirm: true });
      if (created.error) throw created.error;
      users.push({ email });
    }
    const results = [];
    for (const [i, { email }] of users.entries()) {
      const client = mail.client({ headers: { "X-Forwarded-For": `10.0.4.${i}` } });
      results.push(await client.auth.resetPasswordForEmail(email));
    }
    expect(results[0]?.error).toBeNull();
    expect(results[1]?.error).toBeNull();
    expect(results[2]?.error).toMatchObject({
      status: 429,
      code: "over_email_send_rate_limit",
      message: "email rate limit exceeded",
    });
    expect(mail.backend.inbox.list(users[2]?.email ?? "")).toHaveLength(0);
    expect(mail.backend.inbox.list(users[1]?.email ?? "")).toHaveLength(1);
  });
});

describe("MFA challenge and verify (15 a minute per IP, bursts of 30: the real service's defaults)", () => {
  /** The password is known, the second factor is not: guesses from one address. */
  async function attackerOnVictim(address: string) {
    const victim = await local.signedIn({ headers: { "X-Forwarded-For": "10.0.5.1" } });
    const { factor } = await enrollVerified(victim.client);
    const attacker = from(address);
    const signedIn = await attacker.auth.signInWithPassword({
      email: victim.email,
      password: PASSWORD,
    });
    expect(signedIn.error).toBeNull();
    return { attacker, email: victim.email, factor, secret: factor.totp.secret };
  }

  it("30 wrong codes in a row are checked, the 31st challenge and verify are refused unchecked", async () => {
    const { attacker, email, factor, secret } = await attackerOnVictim("10.0.5.2");
    // The clock stands still during the burst: no tokens come back in between.
    const start = Date.now();
    at(start);
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
    at(start + 4_000);
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

  it("recovery codes are guessed within the same MFA verify bucket (our choice: upstream has none yet)", async () => {
    // The owner, at aal2, makes a set of codes.
    const owner = await local.signedIn({ headers: { "X-Forwarded-For": "10.0.6.1" } });
    const { factor } = await enrollVerified(owner.client);
    const ownerToken = (await owner.client.auth.getSession()).data.session?.access_token;
    const generated = await local.fetch(`${local.backend.url}/auth/v1/factors/recovery-codes`, {
      method: "POST",
      headers: { apikey: PUBLISHABLE_KEY, Authorization: `Bearer ${ownerToken}` },
    });
    expect(generated.status).toBe(200);
    const { codes } = (await generated.json()) as { codes: string[] };

    // The attacker knows the password and guesses codes (each guess hashes every unused code).
    const attacker = from("10.0.6.2");
    const signedIn = await attacker.auth.signInWithPassword({
      email: owner.email,
      password: PASSWORD,
    });
    const token = signedIn.data.session?.access_token;
    at(Date.now());
    const guess = (code: string) =>
      post("10.0.6.2", "factors/recovery-codes/verify", { code }, token);
    // TOTP guesses and recovery-code guesses spend one bucket of 30.
    for (let i = 0; i < 10; i++) {
      const challenge = await attacker.auth.mfa.challenge({ factorId: factor.id });
      const wrong = await attacker.auth.mfa.verify({
        factorId: factor.id,
        challengeId: challenge.data?.id ?? "",
        code: otherCode(totpCode(factor.totp.secret)),
      });
      expect(wrong.error).toMatchObject({ code: "mfa_verification_failed" });
    }
    const wrongCodes = await statuses(20, (i) => guess(`wrongcode${String(i).padStart(7, "a")}`));
    expect(new Set(wrongCodes)).toEqual(new Set([422]));
    // Even a right code is not looked at once the bucket is spent.
    expect(await guess(codes[0] ?? "")).toEqual(refused);
    expect(await attacker.auth.mfa.getAuthenticatorAssuranceLevel()).toMatchObject({
      data: { currentLevel: "aal1" },
    });
    // The owner, elsewhere, still can.
    const ownerAal1 = from("10.0.6.3");
    const again = await ownerAal1.auth.signInWithPassword({
      email: owner.email,
      password: PASSWORD,
    });
    const right = await post(
      "10.0.6.3",
      "factors/recovery-codes/verify",
      { code: codes[0] ?? "" },
      again.data.session?.access_token,
    );
    expect(right.status).toBe(200);
  });
});

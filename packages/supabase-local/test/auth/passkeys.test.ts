// Passkeys through the real supabase-js (auth.passkey.*, auth.admin.passkey.*), answered by a
// software authenticator (tests/support/authenticator.ts): registration and sign-in ceremonies,
// the options in go-webauthn's JSON, the session a passkey starts (amr `passkey`, aal1), the list,
// rename and delete, the admin endpoints, and every bad input: forged, replayed or out-of-date
// assertions, a wrong RP ID or origin, other users' passkeys, expired challenges, aal1 at aal2
// actions, passkeys switched off, the rate limit.
import type { SupabaseClient } from "@supabase/supabase-js";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SoftAuthenticator, type Tamper } from "../../../../tests/support/authenticator.ts";
import {
  adminClient,
  anonClient,
  authFetch,
  PUBLISHABLE_KEY,
  signedInClient,
} from "../../../../tests/support/backend.ts";
import { type MemoryBackend, memoryBackend } from "../../../../tests/support/memory-backend.ts";
import { enrollVerifiedTotp } from "../../../../tests/support/mfa.ts";

type Options = Record<string, unknown> & { challenge: string };

/** Registers a passkey for the client's user with the authenticator; returns its metadata. */
async function register(client: SupabaseClient, authenticator: SoftAuthenticator) {
  const started = await client.auth.passkey.startRegistration();
  if (started.error) throw started.error;
  const credential = authenticator.create(started.data.options as unknown as Options);
  const verified = await client.auth.passkey.verifyRegistration({
    challengeId: started.data.challenge_id,
    credential: credential as never,
  });
  if (verified.error) throw verified.error;
  return verified.data;
}

/** A sign-in ceremony on a fresh client: options, then the assertion (bent by `tamper`). */
async function signIn(authenticator: SoftAuthenticator, tamper: Tamper = {}) {
  const client = anonClient();
  const started = await client.auth.passkey.startAuthentication();
  if (started.error) throw started.error;
  const assertion = authenticator.get(started.data.options as unknown as Options, tamper);
  const result = await client.auth.passkey.verifyAuthentication({
    challengeId: started.data.challenge_id,
    credential: assertion as never,
  });
  return { client, result, challengeId: started.data.challenge_id, assertion };
}

async function listed(client: SupabaseClient) {
  const { data, error } = await client.auth.passkey.list();
  if (error) throw error;
  return data;
}

describe("registration", () => {
  it("offers creation options for a discoverable credential of this user, excluding their passkeys", async () => {
    const { client, user, email } = await signedInClient();
    const started = await client.auth.passkey.startRegistration();
    expect(started.error).toBeNull();
    const { challenge_id, options, expires_at } = started.data as unknown as {
      challenge_id: string;
      options: Record<string, unknown>;
      expires_at: number;
    };
    expect(challenge_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(expires_at - Date.now() / 1000).toBeGreaterThan(290);
    expect(expires_at - Date.now() / 1000).toBeLessThanOrEqual(301);
    expect(options).toEqual({
      rp: { name: "Edge Notes", id: "localhost" },
      user: { name: email, displayName: email, id: Buffer.from(user.id).toString("base64url") },
      challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      pubKeyCredParams: [-7, -35, -36, -257, -258, -259, -37, -38, -39, -8].map((alg) => ({
        type: "public-key",
        alg,
      })),
      timeout: 300000,
      authenticatorSelection: { residentKey: "required", userVerification: "preferred" },
      attestation: "none",
    });

    const authenticator = new SoftAuthenticator();
    const passkey = await register(client, authenticator);
    const again = await client.auth.passkey.startRegistration();
    expect((again.data?.options as unknown as Record<string, unknown>).excludeCredentials).toEqual([
      { type: "public-key", id: authenticator.credentials[0]?.id },
    ]);
    expect(passkey).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      friendly_name: "Passkey",
      created_at: expect.any(String),
    });
    expect(await listed(client)).toEqual([
      { id: passkey.id, friendly_name: "Passkey", created_at: passkey.created_at },
    ]);
  });

  it("refuses a forged, replayed, mis-addressed or expired attestation and stores nothing", async () => {
    const { client } = await signedInClient();
    const authenticator = new SoftAuthenticator();
    const attempt = async (tamper: Tamper) => {
      const started = await client.auth.passkey.startRegistration();
      const options = started.data?.options as unknown as Options;
      const credential = authenticator.create(options, tamper);
      const result = await client.auth.passkey.verifyRegistration({
        challengeId: started.data?.challenge_id ?? "",
        credential: credential as never,
      });
      return { result, challengeId: started.data?.challenge_id ?? "", credential };
    };
    const failed = { status: 400, code: "webauthn_verification_failed" };
    for (const tamper of [
      { origin: "https://evil.example" },
      { rpId: "evil.example" },
      { challenge: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" },
      { type: "webauthn.get" },
    ]) {
      const { result } = await attempt(tamper);
      expect(result.error, JSON.stringify(tamper)).toMatchObject({
        ...failed,
        message: "Credential verification failed",
      });
    }
    // The challenge went with the first try: the same answer again finds none.
    const { result, challengeId, credential } = await attempt({ origin: "https://evil.example" });
    expect(result.error).toMatchObject(failed);
    const replay = await client.auth.passkey.verifyRegistration({
      challengeId,
      credential: credential as never,
    });
    expect(replay.error).toMatchObject({
      status: 400,
      code: "webauthn_challenge_not_found",
      message: "Challenge not found or already used",
    });
    expect(await listed(client)).toEqual([]);
  });

  it("checks the request before the challenge (raw HTTP)", async () => {
    const { session } = await signedInClient();
    const call = (body: unknown) =>
      authFetch("/passkeys/registration/verify", {
        method: "POST",
        headers: {
          Authorization: `Bearer ${session?.access_token}`,
          "X-Supabase-Api-Version": "2024-01-01",
        },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
    const cases: Array<[unknown, number, string, string]> = [
      ["{", 400, "bad_json", "Could not parse request body as JSON: "],
      [{ credential: {} }, 400, "validation_failed", "challenge_id is required"],
      [{ challenge_id: "x" }, 400, "validation_failed", "credential is required"],
      [
        { challenge_id: "x", credential: {} },
        400,
        "validation_failed",
        "challenge_id must be a valid UUID",
      ],
      [
        { challenge_id: crypto.randomUUID(), credential: {} },
        400,
        "webauthn_challenge_not_found",
        "Challenge not found or already used",
      ],
    ];
    for (const [body, status, code, message] of cases) {
      const response = await call(body);
      expect(response.status).toBe(status);
      const json = (await response.json()) as { code: string; message: string };
      expect(json.code).toBe(code);
      expect(json.message.startsWith(message)).toBe(true);
    }
    // Someone else's challenge is not found either, and a malformed credential uses it up.
    const other = await signedInClient();
    const started = await other.client.auth.passkey.startRegistration();
    const stolen = await call({ challenge_id: started.data?.challenge_id, credential: {} });
    expect(((await stolen.json()) as { code: string }).code).toBe("webauthn_challenge_not_found");
    const mine = await anonClient().auth.passkey.startAuthentication();
    expect(mine.error).toBeNull();
    const malformed = await other.client.auth.passkey.verifyRegistration({
      challengeId: started.data?.challenge_id ?? "",
      credential: { id: "not base64!", type: "public-key", response: {} } as never,
    });
    expect(malformed.error).toMatchObject({
      status: 400,
      code: "webauthn_verification_failed",
      message: "Invalid credential response",
    });
  });

  it("needs an aal2 session once the user has a second factor", async () => {
    const { client, email } = await signedInClient();
    await enrollVerifiedTotp(client);
    const aal1 = anonClient();
    await aal1.auth.signInWithPassword({ email, password: "correct-horse-battery" });
    const refused = await aal1.auth.passkey.startRegistration();
    expect(refused.error).toMatchObject({
      status: 403,
      code: "insufficient_aal",
      message: "AAL2 session is required to manage passkeys when MFA is enabled",
    });
    // The aal2 session that verified the factor may.
    expect((await client.auth.passkey.startRegistration()).error).toBeNull();
  });
});

describe("sign-in", () => {
  it("starts an aal1 session whose amr is passkey, for the passkey's user", async () => {
    const { client, user } = await signedInClient();
    const authenticator = new SoftAuthenticator();
    const passkey = await register(client, authenticator);

    const fresh = anonClient();
    const started = await fresh.auth.passkey.startAuthentication();
    expect(started.data?.options).toEqual({
      challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      timeout: 300000,
      rpId: "localhost",
      userVerification: "preferred",
    });
    const result = await fresh.auth.passkey.verifyAuthentication({
      challengeId: started.data?.challenge_id ?? "",
      credential: authenticator.get(started.data?.options as unknown as Options) as never,
    });
    expect(result.error).toBeNull();
    expect(result.data?.user?.id).toBe(user.id);
    const claims = decodeJwt(result.data?.session?.access_token ?? "");
    expect(claims).toMatchObject({ sub: user.id, aal: "aal1" });
    expect((claims.amr as { method: string }[]).map((a) => a.method)).toEqual(["passkey"]);
    expect((await fresh.auth.getUser()).data.user?.id).toBe(user.id);

    const [item] = await listed(client);
    expect(item?.id).toBe(passkey.id);
    expect(item?.last_used_at).toEqual(expect.any(String));
  });

  it("leaves a user with a verified factor at aal1, with aal2 to reach", async () => {
    const { client } = await signedInClient();
    const authenticator = new SoftAuthenticator();
    await enrollVerifiedTotp(client);
    await register(client, authenticator);
    const { client: passkeyClient, result } = await signIn(authenticator);
    expect(result.error).toBeNull();
    const aal = await passkeyClient.auth.mfa.getAuthenticatorAssuranceLevel();
    expect(aal.data).toMatchObject({ currentLevel: "aal1", nextLevel: "aal2" });
  });

  it("refuses forged, replayed and mis-addressed assertions; the passkey stays unused", async () => {
    const { client } = await signedInClient();
    const authenticator = new SoftAuthenticator();
    await register(client, authenticator);
    const failed = {
      status: 400,
      code: "webauthn_verification_failed",
      message: "Credential verification failed",
    };
    for (const tamper of [
      { forgeSignature: true },
      { origin: "http://localhost:9999" },
      { rpId: "example.com" },
      { challenge: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" },
      { userHandle: Buffer.from(crypto.randomUUID()).toString("base64url") },
    ]) {
      const { result } = await signIn(authenticator, tamper);
      expect(result.error, JSON.stringify(tamper)).toMatchObject(failed);
      expect(result.data?.session ?? null).toBeNull();
    }
    expect((await listed(client))[0]?.last_used_at).toBeUndefined();

    // A good assertion once; the same assertion again (its challenge is used up), or on a new
    // challenge, or with a counter that did not move, is refused.
    const good = await signIn(authenticator);
    expect(good.result.error).toBeNull();
    const replay = await anonClient().auth.passkey.verifyAuthentication({
      challengeId: good.challengeId,
      credential: good.assertion as never,
    });
    expect(replay.error).toMatchObject({ status: 400, code: "webauthn_challenge_not_found" });
    const fresh = anonClient();
    const started = await fresh.auth.passkey.startAuthentication();
    const reused = await fresh.auth.passkey.verifyAuthentication({
      challengeId: started.data?.challenge_id ?? "",
      credential: good.assertion as never,
    });
    expect(reused.error).toMatchObject(failed);
    const sameCounter = await signIn(authenticator, { signCount: 1 });
    expect(sameCounter.result.error).toMatchObject(failed);
    expect((await signIn(authenticator)).result.error).toBeNull();
  });

  it("answers a challenge only with its own ceremony", async () => {
    // A sign-in challenge answered with a new key's registration registers nothing, and a
    // registration challenge answered with an assertion signs no one in.
    const { client, user, email } = await signedInClient();
    const authenticator = new SoftAuthenticator();
    await register(client, authenticator);
    const signInStarted = await anonClient().auth.passkey.startAuthentication();
    const signInOptions = signInStarted.data?.options as unknown as Options;
    const registration = new SoftAuthenticator().create({
      challenge: signInOptions.challenge,
      rp: { id: "localhost", name: "Edge Notes" },
      user: { id: Buffer.from(user.id).toString("base64url"), name: email, displayName: email },
    });
    const registered = await client.auth.passkey.verifyRegistration({
      challengeId: signInStarted.data?.challenge_id ?? "",
      credential: registration as never,
    });
    expect(registered.error).toMatchObject({ status: 400, code: "webauthn_challenge_not_found" });

    const registrationStarted = await client.auth.passkey.startRegistration();
    const registrationOptions = registrationStarted.data?.options as unknown as Options;
    const fresh = anonClient();
    const signedIn = await fresh.auth.passkey.verifyAuthentication({
      challengeId: registrationStarted.data?.challenge_id ?? "",
      credential: authenticator.get({
        challenge: registrationOptions.challenge,
        rpId: "localhost",
      }) as never,
    });
    expect(signedIn.error).toMatchObject({ status: 400, code: "webauthn_challenge_not_found" });
    expect(signedIn.data?.session ?? null).toBeNull();
    expect(await listed(client)).toHaveLength(1);
  });

  it("refuses a banned user's passkey (403 user_banned)", async () => {
    const { client, user } = await signedInClient();
    const authenticator = new SoftAuthenticator();
    await register(client, authenticator);
    await adminClient().auth.admin.updateUserById(user.id, { ban_duration: "1h" });
    const { result } = await signIn(authenticator);
    expect(result.error).toMatchObject({
      status: 403,
      code: "user_banned",
      message: "User is banned",
    });
  });
});

describe("managing passkeys", () => {
  it("renames a passkey (any aal) and refuses a name that is empty or too long", async () => {
    const { client } = await signedInClient();
    const passkey = await register(client, new SoftAuthenticator());
    const renamed = await client.auth.passkey.update({
      passkeyId: passkey.id,
      friendlyName: "Chrome on macOS",
    });
    expect(renamed.data).toEqual({
      id: passkey.id,
      friendly_name: "Chrome on macOS",
      created_at: passkey.created_at,
    });
    for (const [name, message] of [
      ["", "friendly_name is required"],
      ["x".repeat(121), "friendly_name must be 120 characters or less"],
    ] as const) {
      const refused = await client.auth.passkey.update({
        passkeyId: passkey.id,
        friendlyName: name,
      });
      expect(refused.error).toMatchObject({ status: 400, code: "validation_failed", message });
    }
    expect((await listed(client))[0]?.friendly_name).toBe("Chrome on macOS");
  });

  it("answers 404 for another user's passkey and changes nothing", async () => {
    const owner = await signedInClient();
    const passkey = await register(owner.client, new SoftAuthenticator());
    const other = await signedInClient();
    const notFound = { status: 404, code: "validation_failed", message: "Passkey not found" };
    const rename = await other.client.auth.passkey.update({
      passkeyId: passkey.id,
      friendlyName: "mine now",
    });
    expect(rename.error).toMatchObject(notFound);
    const remove = await other.client.auth.passkey.delete({ passkeyId: passkey.id });
    expect(remove.error).toMatchObject(notFound);
    const malformed = await other.client.auth.passkey.delete({ passkeyId: "not-a-uuid" });
    expect(malformed.error).toMatchObject(notFound);
    expect(await listed(owner.client)).toEqual([
      { id: passkey.id, friendly_name: "Passkey", created_at: passkey.created_at },
    ]);
  });

  it("deletes a passkey (204); with MFA on only from an aal2 session", async () => {
    const { client, email } = await signedInClient();
    const authenticator = new SoftAuthenticator();
    const first = await register(client, authenticator);
    expect((await client.auth.passkey.delete({ passkeyId: first.id })).error).toBeNull();
    expect(await listed(client)).toEqual([]);
    // Its credential no longer signs in.
    authenticator.credentials.length = 0;
    const second = await register(client, authenticator);
    await enrollVerifiedTotp(client);
    const aal1 = anonClient();
    await aal1.auth.signInWithPassword({ email, password: "correct-horse-battery" });
    const refused = await aal1.auth.passkey.delete({ passkeyId: second.id });
    expect(refused.error).toMatchObject({ status: 403, code: "insufficient_aal" });
    expect((await listed(client)).map((p) => p.id)).toEqual([second.id]);
    expect((await client.auth.passkey.delete({ passkeyId: second.id })).error).toBeNull();
    const { result } = await signIn(authenticator);
    expect(result.error).toMatchObject({ status: 400, code: "webauthn_verification_failed" });
  });

  it("lets the admin list and delete a user's passkeys", async () => {
    const { client, user } = await signedInClient();
    const passkey = await register(client, new SoftAuthenticator());
    const admin = adminClient();
    const list = await admin.auth.admin.passkey.listPasskeys({ userId: user.id });
    expect(list.data).toEqual([
      { id: passkey.id, friendly_name: "Passkey", created_at: passkey.created_at },
    ]);
    const removed = await admin.auth.admin.passkey.deletePasskey({
      userId: user.id,
      passkeyId: passkey.id,
    });
    expect(removed.error).toBeNull();
    expect(await listed(client)).toEqual([]);
    const again = await admin.auth.admin.passkey.deletePasskey({
      userId: user.id,
      passkeyId: passkey.id,
    });
    expect(again.error).toMatchObject({ status: 404, code: "validation_failed" });
    // A user's key is not an admin key.
    const { data } = await client.auth.getSession();
    const asUser = await authFetch(`/admin/users/${user.id}/passkeys`, {
      headers: { Authorization: `Bearer ${data.session?.access_token}` },
    });
    expect(asUser.status).toBe(403);
  });
});

describe("settings", () => {
  // One backend with passkeys off, one whose challenges expire at once (and a rate limit of its own).
  let off: MemoryBackend;
  let quick: MemoryBackend;
  beforeAll(async () => {
    [off, quick] = await Promise.all([
      memoryBackend({ auth: { passkey: { enabled: false } } }),
      // the real passkey limit (the test backends raise it)
      memoryBackend({
        auth: { webauthn: { challengeExpirySeconds: 0 }, rateLimit: { passkey: 30 } },
      }),
    ]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([off?.close(), quick?.close()]);
  });

  it("answers 404 passkey_disabled on every passkey route while [auth.passkey] is off", async () => {
    const settings = async (local: MemoryBackend) =>
      (await (
        await local.fetch(`${local.backend.url}/auth/v1/settings`, {
          headers: { apikey: PUBLISHABLE_KEY },
        })
      ).json()) as { passkeys_enabled: boolean };
    expect((await settings(off)).passkeys_enabled).toBe(false);
    expect((await settings(quick)).passkeys_enabled).toBe(true);
    const { client } = await off.signedIn();
    const error = { status: 404, code: "passkey_disabled", message: "Passkeys are disabled" };
    expect((await client.auth.passkey.startAuthentication()).error).toMatchObject(error);
    expect((await client.auth.passkey.startRegistration()).error).toMatchObject(error);
    expect((await client.auth.passkey.list()).error).toMatchObject(error);
  });

  it("lets a challenge expire (400 webauthn_challenge_expired, used up)", async () => {
    const { client } = await quick.signedIn();
    const started = await client.auth.passkey.startRegistration();
    const credential = new SoftAuthenticator().create(started.data?.options as unknown as Options);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const late = await client.auth.passkey.verifyRegistration({
      challengeId: started.data?.challenge_id ?? "",
      credential: credential as never,
    });
    expect(late.error).toMatchObject({
      status: 400,
      code: "webauthn_challenge_expired",
      message: "Challenge has expired",
    });
    const again = await client.auth.passkey.verifyRegistration({
      challengeId: started.data?.challenge_id ?? "",
      credential: credential as never,
    });
    expect(again.error).toMatchObject({ code: "webauthn_challenge_not_found" });
    expect((await client.auth.passkey.list()).data).toEqual([]);
  });

  it("limits sign-in options to 30 at once per client address (429)", async () => {
    const client = quick.client();
    for (let i = 0; i < 30; i++) {
      expect((await client.auth.passkey.startAuthentication()).error).toBeNull();
    }
    expect((await client.auth.passkey.startAuthentication()).error).toMatchObject({
      status: 429,
      code: "over_request_rate_limit",
    });
  });
});

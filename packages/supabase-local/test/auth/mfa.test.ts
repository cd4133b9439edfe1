// MFA with TOTP through the real supabase-js: enroll, challenge, verify with codes computed from the
// returned secret (otpauth), aal/amr in the JWT as getAuthenticatorAssuranceLevel() reads them,
// unenroll, and every bad input (wrong, reused, expired codes; other factors and users).
import type { SupabaseClient } from "@supabase/supabase-js";
import { decodeJwt } from "jose";
import { Secret, TOTP } from "otpauth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  adminClient,
  anonClient,
  authFetch,
  PASSWORD,
  signedInClient,
} from "../../../../tests/support/backend.ts";
import { type MemoryBackend, memoryBackend } from "../../../../tests/support/memory-backend.ts";
import { enroll, enrollVerified, totpCode } from "../../../../tests/support/mfa.ts";

async function accessToken(client: SupabaseClient): Promise<string> {
  const { data } = await client.auth.getSession();
  if (!data.session) throw new Error("no session");
  return data.session.access_token;
}

describe("enroll", () => {
  it("returns the secret, the otpauth URI and the QR code as SVG; the factor is listed unverified", async () => {
    const { client, email } = await signedInClient();
    const before = await client.auth.getUser();
    expect(before.data.user?.factors).toBeUndefined();

    const factor = await enroll(client, "My phone");
    expect(factor).toMatchObject({ type: "totp", friendly_name: "My phone" });
    expect(factor.totp.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(factor.totp.qr_code).toMatch(/^data:image\/svg\+xml;utf-8,<svg/);
    const uri = new URL(factor.totp.uri);
    expect(uri.protocol).toBe("otpauth:");
    expect(uri.host).toBe("totp");
    expect(decodeURIComponent(uri.pathname)).toBe(`/localhost:5173:${email}`);
    expect(uri.searchParams.get("secret")).toBe(factor.totp.secret);
    expect(uri.searchParams.get("issuer")).toBe("localhost:5173");

    const listed = await client.auth.mfa.listFactors();
    expect(listed.data?.all).toEqual([
      expect.objectContaining({
        id: factor.id,
        friendly_name: "My phone",
        factor_type: "totp",
        status: "unverified",
      }),
    ]);
    expect(listed.data?.totp).toEqual([]);
    const aal = await client.auth.mfa.getAuthenticatorAssuranceLevel();
    expect(aal.data).toMatchObject({ currentLevel: "aal1", nextLevel: "aal1" });
  });

  it("uses the issuer given by the client", async () => {
    const { client } = await signedInClient();
    const { data } = await client.auth.mfa.enroll({ factorType: "totp", issuer: "Edge Notes" });
    expect(data?.totp.uri).toContain("issuer=Edge%20Notes");
  });

  it("an issuer whose otpauth URI cannot fit a QR code is refused at once, and nothing is enrolled", async () => {
    const { client } = await signedInClient();
    const token = await accessToken(client);
    const post = async (body: Record<string, unknown>) => {
      const response = await authFetch("/factors", {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "X-Supabase-Api-Version": "2024-01-01" },
        body: JSON.stringify({ factor_type: "totp", ...body }),
      });
      return { status: response.status, body: await response.json() };
    };
    // the URI holds the issuer twice; a QR code at level H holds at most 1273 bytes
    const short = await post({ friendly_name: "short", issuer: "a" });
    expect(short.status).toBe(200);
    const fits = 1 + Math.floor((1273 - short.body.totp.uri.length) / 2);
    const longest = await post({ friendly_name: "longest", issuer: "a".repeat(fits) });
    expect(longest.status).toBe(200);
    expect(longest.body.totp.uri).toHaveLength(short.body.totp.uri.length + 2 * (fits - 1));
    expect(longest.body.totp.qr_code).toMatch(/^<svg/);

    const tooLong = await post({ friendly_name: "too long", issuer: "a".repeat(fits + 1) });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.code).toBe("validation_failed");
    expect(tooLong.body.message).toMatch(/QR code/);
    // a huge one is refused as quickly: no QR code is attempted
    const started = performance.now();
    const huge = await post({ friendly_name: "huge", issuer: "1a".repeat(200_000) });
    expect(huge.status).toBe(400);
    expect(huge.body.code).toBe("validation_failed");
    expect(performance.now() - started).toBeLessThan(1000);

    const names = ((await client.auth.mfa.listFactors()).data?.all ?? []).map(
      (f) => f.friendly_name,
    );
    expect(names.sort()).toEqual(["longest", "short"]);
  });

  it("a friendly_name over 120 bytes is refused for every factor type, as for passkeys", async () => {
    const { client } = await signedInClient();
    const token = await accessToken(client);
    const tooLong = {
      code: "validation_failed",
      message: "friendly_name must be 120 characters or less",
    };
    for (const factor_type of ["totp", "webauthn"]) {
      for (const friendly_name of ["n".repeat(121), "é".repeat(61), "x".repeat(8192)]) {
        const response = await authFetch("/factors", {
          method: "POST",
          headers: { Authorization: `Bearer ${token}`, "X-Supabase-Api-Version": "2024-01-01" },
          body: JSON.stringify({ factor_type, friendly_name }),
        });
        expect(response.status, factor_type).toBe(400);
        expect(await response.json()).toEqual(tooLong);
      }
    }
    expect((await client.auth.mfa.listFactors()).data?.all).toEqual([]);
    const longest = await client.auth.mfa.enroll({
      factorType: "totp",
      friendlyName: "n".repeat(120),
    });
    expect(longest.error).toBeNull();
  });

  it("refuses a duplicate friendly name and an unknown factor type", async () => {
    const { client } = await signedInClient();
    await enroll(client, "Laptop");
    const duplicate = await client.auth.mfa.enroll({ factorType: "totp", friendlyName: "Laptop" });
    expect(duplicate.error).toMatchObject({
      status: 422,
      code: "mfa_factor_name_conflict",
      message: 'A factor with the friendly name "Laptop" for this user already exists',
    });

    // An empty name is a name like any other (the real service allows one per user).
    await enroll(client);
    const emptyAgain = await client.auth.mfa.enroll({ factorType: "totp" });
    expect(emptyAgain.error).toMatchObject({
      status: 422,
      code: "mfa_factor_name_conflict",
      message: 'A factor with the friendly name "" for this user already exists',
    });

    const token = await accessToken(client);
    const bogus = await authFetch("/factors", {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "X-Supabase-Api-Version": "2024-01-01" },
      body: JSON.stringify({ factor_type: "sms" }),
    });
    expect(bogus.status).toBe(400);
    expect(await bogus.json()).toEqual({
      code: "validation_failed",
      message: "factor_type needs to be totp, phone, or webauthn",
    });
    const phone = await client.auth.mfa.enroll({ factorType: "phone", phone: "+15555550100" });
    expect(phone.error).toMatchObject({ status: 422, code: "mfa_phone_enroll_not_enabled" });
    // Anonymous users are refused too: test/auth/anonymous.test.ts (config.toml has them off).
    const all = (await client.auth.mfa.listFactors()).data?.all ?? [];
    expect(all.map((f) => f.friendly_name).sort()).toEqual(["", "Laptop"]);
  });

  it("needs a signed-in user", async () => {
    const response = await authFetch("/factors", {
      method: "POST",
      body: JSON.stringify({ factor_type: "totp" }),
    });
    expect(response.status).toBe(403);
    expect((await response.json()).error_code).toBe("bad_jwt");
  });
});

describe("challenge and verify", () => {
  it("a correct code verifies the factor and raises the session to aal2 with totp in amr", async () => {
    const { client } = await signedInClient();
    const factor = await enroll(client, "Phone");
    const challenge = await client.auth.mfa.challenge({ factorId: factor.id });
    expect(challenge.error).toBeNull();
    expect(challenge.data).toMatchObject({ type: "totp" });
    const expiresIn = (challenge.data?.expires_at ?? 0) - Date.now() / 1000;
    expect(expiresIn).toBeGreaterThan(290);
    expect(expiresIn).toBeLessThanOrEqual(300);

    const before = await accessToken(client);
    const { data, error } = await client.auth.mfa.verify({
      factorId: factor.id,
      challengeId: challenge.data?.id ?? "",
      code: totpCode(factor.totp.secret),
    });
    expect(error).toBeNull();
    const claims = decodeJwt(data?.access_token ?? "");
    expect(claims.aal).toBe("aal2");
    expect(claims.session_id).toBe(decodeJwt(before).session_id);
    const amr = claims.amr as Array<{ method: string; timestamp: number }>;
    expect(amr.map((a) => a.method)).toEqual(["totp", "password"]);
    expect(amr[0]?.timestamp).toBeGreaterThanOrEqual(amr[1]?.timestamp ?? 0);

    const aal = await client.auth.mfa.getAuthenticatorAssuranceLevel();
    expect(aal.data).toMatchObject({ currentLevel: "aal2", nextLevel: "aal2" });
    expect(aal.data?.currentAuthenticationMethods).toEqual([
      expect.objectContaining({ method: "totp" }),
      expect.objectContaining({ method: "password" }),
    ]);
    const listed = await client.auth.mfa.listFactors();
    expect(listed.data?.totp).toEqual([
      expect.objectContaining({ id: factor.id, status: "verified" }),
    ]);
    expect(listed.data?.totp[0]?.last_challenged_at).toBeTruthy();
  });

  it("the refresh grant keeps aal2; the aal1 refresh token from before no longer works", async () => {
    const { client, session } = await signedInClient();
    await enrollVerified(client);
    const refreshed = await client.auth.refreshSession();
    expect(refreshed.error).toBeNull();
    expect(decodeJwt(refreshed.data.session?.access_token ?? "").aal).toBe("aal2");

    const old = await authFetch("/token?grant_type=refresh_token", {
      method: "POST",
      headers: { "X-Supabase-Api-Version": "2024-01-01" },
      body: JSON.stringify({ refresh_token: session?.refresh_token }),
    });
    expect(old.status).toBe(400);
    expect((await old.json()).code).toBe("refresh_token_not_found");
  });

  it("a new sign-in of a user with a verified factor is aal1 with nextLevel aal2", async () => {
    const { client, email } = await signedInClient();
    const { factor } = await enrollVerified(client);
    const other = anonClient();
    await other.auth.signInWithPassword({ email, password: PASSWORD });
    const aal = await other.auth.mfa.getAuthenticatorAssuranceLevel();
    expect(aal.data).toMatchObject({ currentLevel: "aal1", nextLevel: "aal2" });
    // The second device steps up with a later code (the current one was used).
    const { data, error } = await other.auth.mfa.challengeAndVerify({
      factorId: factor.id,
      code: totpCode(factor.totp.secret, 30),
    });
    expect(error).toBeNull();
    expect(decodeJwt(data?.access_token ?? "").aal).toBe("aal2");
  });

  it("verifying signs out the user's other aal1 sessions and drops other unverified factors", async () => {
    const { client, email } = await signedInClient();
    const other = anonClient();
    await other.auth.signInWithPassword({ email, password: PASSWORD });
    const spare = await enroll(client, "Spare");
    await enrollVerified(client);
    const response = await authFetch("/user", {
      headers: { Authorization: `Bearer ${await accessToken(other)}` },
    });
    expect(response.status).toBe(403);
    expect((await response.json()).error_code).toBe("session_not_found");
    const all = (await client.auth.mfa.listFactors()).data?.all ?? [];
    expect(all.map((f) => f.id)).not.toContain(spare.id);
  });

  it("refuses a wrong code, an expired code and a code already used", async () => {
    const { client } = await signedInClient();
    const factor = await enroll(client, "Phone");
    const secret = factor.totp.secret;
    const verify = async (code: string) => {
      const challenge = await client.auth.mfa.challenge({ factorId: factor.id });
      return client.auth.mfa.verify({
        factorId: factor.id,
        challengeId: challenge.data?.id ?? "",
        code,
      });
    };
    const current = totpCode(secret);
    const wrong = String((Number(current) + 1) % 1_000_000).padStart(6, "0");
    expect((await verify(wrong)).error).toMatchObject({
      status: 422,
      code: "mfa_verification_failed",
      message: "Invalid TOTP code entered",
    });
    expect((await verify(totpCode(secret, -120))).error).toMatchObject({
      status: 422,
      code: "mfa_verification_failed",
    });
    expect((await verify("12345")).error).toMatchObject({ code: "mfa_verification_failed" });
    let listed = await client.auth.mfa.listFactors();
    expect(listed.data?.all[0]?.status).toBe("unverified");
    expect(decodeJwt(await accessToken(client)).aal).toBe("aal1");

    expect((await verify(current)).error).toBeNull();
    expect((await verify(current)).error).toMatchObject({
      status: 422,
      code: "mfa_verification_failed",
      message: "Invalid TOTP code entered",
    });
    listed = await client.auth.mfa.listFactors();
    expect(listed.data?.totp).toHaveLength(1);
  });

  it("a challenge verifies once; verify needs a challenge of this factor and a code", async () => {
    const { client } = await signedInClient();
    const factor = await enroll(client, "A");
    const otherFactor = await enroll(client, "B");
    const challenge = await client.auth.mfa.challenge({ factorId: factor.id });
    const challengeId = challenge.data?.id ?? "";

    const ofOtherFactor = await client.auth.mfa.verify({
      factorId: otherFactor.id,
      challengeId,
      code: totpCode(otherFactor.totp.secret),
    });
    expect(ofOtherFactor.error).toMatchObject({
      status: 422,
      code: "mfa_factor_not_found",
      message: "MFA factor with the provided challenge ID not found",
    });

    const token = await accessToken(client);
    const raw = (body: unknown) =>
      authFetch(`/factors/${factor.id}/verify`, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "X-Supabase-Api-Version": "2024-01-01" },
        body: JSON.stringify(body),
      });
    const noChallenge = await raw({ code: totpCode(factor.totp.secret) });
    expect(noChallenge.status).toBe(422);
    expect((await noChallenge.json()).code).toBe("mfa_factor_not_found");
    const badChallenge = await raw({ challenge_id: "abc", code: "123456" });
    expect(badChallenge.status).toBe(400);
    expect((await badChallenge.json()).code).toBe("bad_json");
    const noCode = await raw({ challenge_id: challengeId });
    expect(noCode.status).toBe(400);
    expect(await noCode.json()).toEqual({
      code: "validation_failed",
      message: "Code needs to be non-empty",
    });

    const first = await client.auth.mfa.verify({
      factorId: factor.id,
      challengeId,
      code: totpCode(factor.totp.secret),
    });
    expect(first.error).toBeNull();
    const again = await client.auth.mfa.verify({
      factorId: factor.id,
      challengeId,
      code: totpCode(factor.totp.secret, 30),
    });
    expect(again.error).toMatchObject({
      status: 422,
      code: "mfa_ip_address_mismatch",
      message: "Challenge and verify IP addresses mismatch.",
    });
  });

  it("another user's factor is not found (challenge, verify, unenroll)", async () => {
    const owner = await signedInClient();
    const factor = await enroll(owner.client, "Mine");
    const ownerChallenge = await owner.client.auth.mfa.challenge({ factorId: factor.id });
    const intruder = await signedInClient();

    const challenge = await intruder.client.auth.mfa.challenge({ factorId: factor.id });
    expect(challenge.error).toMatchObject({
      status: 404,
      code: "mfa_factor_not_found",
      message: "Factor not found",
    });
    const verify = await intruder.client.auth.mfa.verify({
      factorId: factor.id,
      challengeId: ownerChallenge.data?.id ?? "",
      code: totpCode(factor.totp.secret),
    });
    expect(verify.error).toMatchObject({ status: 404, code: "mfa_factor_not_found" });
    const unenroll = await intruder.client.auth.mfa.unenroll({ factorId: factor.id });
    expect(unenroll.error).toMatchObject({ status: 404, code: "mfa_factor_not_found" });
    const notUuid = await intruder.client.auth.mfa.unenroll({ factorId: "not-a-uuid" });
    expect(notUuid.error).toMatchObject({
      status: 404,
      code: "validation_failed",
      message: "factor_id must be an UUID",
    });

    // The owner's challenge id against the intruder's own factor is no challenge of that factor.
    const own = await enroll(intruder.client, "Own");
    const crossed = await intruder.client.auth.mfa.verify({
      factorId: own.id,
      challengeId: ownerChallenge.data?.id ?? "",
      code: totpCode(own.totp.secret),
    });
    expect(crossed.error).toMatchObject({ status: 422, code: "mfa_factor_not_found" });

    const listed = await owner.client.auth.mfa.listFactors();
    expect(listed.data?.all).toHaveLength(1);
    expect(decodeJwt(await accessToken(intruder.client)).aal).toBe("aal1");
  });
});

describe("unenroll", () => {
  it("removes an unverified factor at aal1", async () => {
    const { client } = await signedInClient();
    const factor = await enroll(client, "Old");
    const { data, error } = await client.auth.mfa.unenroll({ factorId: factor.id });
    expect(error).toBeNull();
    expect(data).toEqual({ id: factor.id });
    expect((await client.auth.getUser()).data.user?.factors).toBeUndefined();
  });

  it("a verified factor needs aal2; afterwards the session is aal1 again", async () => {
    const { client, email } = await signedInClient();
    const { factor } = await enrollVerified(client);

    const aal1 = anonClient();
    await aal1.auth.signInWithPassword({ email, password: PASSWORD });
    const refused = await aal1.auth.mfa.unenroll({ factorId: factor.id });
    expect(refused.error).toMatchObject({
      status: 422,
      code: "insufficient_aal",
      message: "AAL2 required to unenroll verified factor",
    });
    const second = await aal1.auth.mfa.enroll({ factorType: "totp", friendlyName: "Second" });
    expect(second.error).toMatchObject({
      status: 403,
      code: "insufficient_aal",
      message: "AAL2 required to enroll a new factor",
    });

    const { error } = await client.auth.mfa.unenroll({ factorId: factor.id });
    expect(error).toBeNull();
    const refreshed = await client.auth.refreshSession();
    const claims = decodeJwt(refreshed.data.session?.access_token ?? "");
    expect(claims.aal).toBe("aal1");
    expect((claims.amr as Array<{ method: string }>).map((a) => a.method)).toEqual(["password"]);
    const aal = await client.auth.mfa.getAuthenticatorAssuranceLevel();
    expect(aal.data).toMatchObject({ currentLevel: "aal1", nextLevel: "aal1" });
  });
});

describe("admin factors (auth.admin.mfa)", () => {
  it("lists a user's factors and deletes one; the user's sessions drop to aal1", async () => {
    const { client, user } = await signedInClient();
    const { factor } = await enrollVerified(client);
    const admin = adminClient();
    const listed = await admin.auth.admin.mfa.listFactors({ userId: user.id });
    expect(listed.error).toBeNull();
    expect(listed.data?.factors).toEqual([
      expect.objectContaining({ id: factor.id, status: "verified", factor_type: "totp" }),
    ]);
    const deleted = await admin.auth.admin.mfa.deleteFactor({ userId: user.id, id: factor.id });
    expect(deleted.error).toBeNull();
    expect((await admin.auth.admin.mfa.listFactors({ userId: user.id })).data?.factors).toEqual([]);
    const refreshed = await client.auth.refreshSession();
    expect(decodeJwt(refreshed.data.session?.access_token ?? "").aal).toBe("aal1");
    const again = await admin.auth.admin.mfa.deleteFactor({ userId: user.id, id: factor.id });
    expect(again.error).toMatchObject({ status: 404, code: "mfa_factor_not_found" });
    const asUser = await authFetch(`/admin/users/${user.id}/factors`, {
      headers: { Authorization: `Bearer ${await accessToken(client)}` },
    });
    expect(asUser.status).toBe(403);
  });
});

describe("MFA settings ([auth.mfa])", () => {
  let local: MemoryBackend;

  beforeAll(async () => {
    local = await memoryBackend({ auth: { mfa: { maxEnrolledFactors: 1 } } });
  }, 60_000);
  afterAll(() => local?.close());

  it("max_enrolled_factors caps the factors a user has", async () => {
    const { client } = await local.signedIn();
    await enroll(client, "One");
    const second = await client.auth.mfa.enroll({ factorType: "totp", friendlyName: "Two" });
    expect(second.error).toMatchObject({
      status: 422,
      code: "too_many_enrolled_mfa_factors",
      message: "Maximum number of verified factors reached, unenroll to continue",
    });
  });

  it("an expired challenge is refused (and removed)", async () => {
    const { client } = await local.signedIn();
    const factor = await enroll(client, "Phone");
    const challenge = await client.auth.mfa.challenge({ factorId: factor.id });
    const id = challenge.data?.id ?? "";
    await local.backend.db.query(
      "update auth.mfa_challenges set created_at = now() - interval '301 seconds' where id = $1",
      [id],
    );
    const { error } = await client.auth.mfa.verify({
      factorId: factor.id,
      challengeId: id,
      code: totpCode(factor.totp.secret),
    });
    expect(error).toMatchObject({
      status: 422,
      code: "mfa_challenge_expired",
      message: `MFA challenge ${id} has expired, verify against another challenge or create a new challenge.`,
    });
    const left = await local.backend.db.query("select 1 from auth.mfa_challenges where id = $1", [
      id,
    ]);
    expect(left.rows).toHaveLength(0);
  });

  it("enroll_enabled and verify_enabled switch TOTP off", async () => {
    const { client, user } = await local.signedIn();
    const { totp } = local.backend.config.auth.mfa;
    totp.enrollEnabled = false;
    totp.verifyEnabled = false;
    try {
      const enrolled = await client.auth.mfa.enroll({ factorType: "totp" });
      expect(enrolled.error).toMatchObject({
        status: 422,
        code: "mfa_totp_enroll_not_enabled",
        message: "MFA enroll is disabled for TOTP",
      });
      const factorId = crypto.randomUUID();
      await local.backend.db.query(
        `insert into auth.mfa_factors (id, user_id, friendly_name, factor_type, status, created_at, updated_at, secret)
         values ($1, $2, 'Earlier', 'totp', 'verified', now(), now(), $3)`,
        [factorId, user.id, new Secret({ size: 20 }).base32],
      );
      const challenge = await client.auth.mfa.challenge({ factorId });
      expect(challenge.error).toMatchObject({
        status: 422,
        code: "mfa_totp_verify_not_enabled",
        message: "MFA verification is disabled for TOTP",
      });
    } finally {
      totp.enrollEnabled = true;
      totp.verifyEnabled = true;
    }
  });
});

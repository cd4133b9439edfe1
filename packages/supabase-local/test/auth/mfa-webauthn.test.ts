// WebAuthn as an MFA factor: enroll with supabase-js, then challenge and verify over raw HTTP with
// the software authenticator (supabase-js's webauthn helpers need a browser's credential objects):
// "create" on the first challenge verifies the factor, "request" later raises an aal1 session to
// aal2 with `mfa/webauthn`; forged, replayed and mis-addressed answers change nothing.
import type { SupabaseClient } from "@supabase/supabase-js";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { SoftAuthenticator, type Tamper } from "../../../../tests/support/authenticator.ts";
import {
  anonClient,
  authFetch,
  PASSWORD,
  signedInClient,
} from "../../../../tests/support/backend.ts";
import { aalOf } from "../../../../tests/support/mfa.ts";

type Options = Record<string, unknown> & { challenge: string };
interface Challenge {
  id: string;
  type: string;
  expires_at: number;
  webauthn: { type: "create" | "request"; credential_options: { publicKey: Options } };
}

async function token(client: SupabaseClient): Promise<string> {
  const { data } = await client.auth.getSession();
  return data.session?.access_token ?? "";
}

function call(client: SupabaseClient, path: string, body: unknown) {
  return token(client).then((jwt) =>
    authFetch(path, {
      method: "POST",
      headers: { Authorization: `Bearer ${jwt}`, "X-Supabase-Api-Version": "2024-01-01" },
      body: JSON.stringify(body),
    }),
  );
}

async function challenge(client: SupabaseClient, factorId: string): Promise<Challenge> {
  const response = await call(client, `/factors/${factorId}/challenge`, {
    webauthn: { rpId: "localhost", rpOrigins: ["http://localhost:5173"] },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Challenge;
}

async function verify(
  client: SupabaseClient,
  factorId: string,
  ch: Challenge,
  credential: unknown,
): Promise<Response> {
  return call(client, `/factors/${factorId}/verify`, {
    challenge_id: ch.id,
    webauthn: { type: ch.webauthn.type, credential_response: credential },
  });
}

/** A user with a verified WebAuthn factor made by `authenticator`. */
async function enrolled(authenticator: SoftAuthenticator) {
  const user = await signedInClient();
  const { data, error } = await user.client.auth.mfa.enroll({
    factorType: "webauthn",
    friendlyName: "Security key",
  });
  if (error) throw error;
  const ch = await challenge(user.client, data.id);
  const response = await verify(
    user.client,
    data.id,
    ch,
    authenticator.create(ch.webauthn.credential_options.publicKey),
  );
  expect(response.status).toBe(200);
  const session = (await response.json()) as { access_token: string; refresh_token: string };
  await user.client.auth.setSession(session);
  return { ...user, factorId: data.id };
}

async function aal1Client(email: string) {
  const client = anonClient();
  const { error } = await client.auth.signInWithPassword({ email, password: PASSWORD });
  if (error) throw error;
  return client;
}

describe("WebAuthn factors", () => {
  it("enrolls, and the first challenge's creation options verify the factor (aal2)", async () => {
    const { client, user, email } = await signedInClient();
    const { data, error } = await client.auth.mfa.enroll({
      factorType: "webauthn",
      friendlyName: "Security key",
    });
    expect(error).toBeNull();
    expect(data).toEqual({
      id: expect.any(String),
      type: "webauthn",
      friendly_name: "Security key",
    });

    const ch = await challenge(client, data?.id ?? "");
    expect(ch).toMatchObject({ type: "webauthn", webauthn: { type: "create" } });
    expect(ch.expires_at - Date.now() / 1000).toBeGreaterThan(290);
    expect(ch.webauthn.credential_options.publicKey).toMatchObject({
      rp: { name: "Edge Notes", id: "localhost" },
      user: { name: email, displayName: email, id: Buffer.from(user.id).toString("base64url") },
      timeout: 300000,
      authenticatorSelection: {},
    });
    const authenticator = new SoftAuthenticator();
    const response = await verify(
      client,
      data?.id ?? "",
      ch,
      authenticator.create(ch.webauthn.credential_options.publicKey),
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as { access_token: string };
    const claims = decodeJwt(body.access_token);
    expect(claims.aal).toBe("aal2");
    expect((claims.amr as { method: string }[])[0]?.method).toBe("mfa/webauthn");
    const listed = await client.auth.mfa.listFactors();
    expect(listed.data?.webauthn).toEqual([
      expect.objectContaining({ id: data?.id, status: "verified", factor_type: "webauthn" }),
    ]);
  });

  it("raises a later aal1 session with a request ceremony for the factor's credential", async () => {
    const authenticator = new SoftAuthenticator();
    const { email, factorId } = await enrolled(authenticator);
    const low = await aal1Client(email);
    const ch = await challenge(low, factorId);
    expect(ch.webauthn.type).toBe("request");
    expect(ch.webauthn.credential_options.publicKey).toEqual({
      challenge: expect.any(String),
      timeout: 300000,
      rpId: "localhost",
      allowCredentials: [
        { type: "public-key", id: authenticator.credentials[0]?.id, transports: ["internal"] },
      ],
    });
    const response = await verify(
      low,
      factorId,
      ch,
      authenticator.get(ch.webauthn.credential_options.publicKey),
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as { access_token: string };
    expect(decodeJwt(body.access_token).aal).toBe("aal2");
  });

  it("refuses forged, replayed and mis-addressed answers; the session stays aal1", async () => {
    const authenticator = new SoftAuthenticator();
    const { email, factorId } = await enrolled(authenticator);
    // Another session signs in with the key, so the server knows its counter (and the user's
    // aal1 sessions of the moment end, as on the real service).
    const other = await aal1Client(email);
    const good = await challenge(other, factorId);
    const ok = await verify(
      other,
      factorId,
      good,
      authenticator.get(good.webauthn.credential_options.publicKey),
    );
    expect(ok.status).toBe(200);
    const low = await aal1Client(email);
    for (const tamper of [
      { forgeSignature: true },
      { origin: "https://evil.example" },
      { rpId: "evil.example" },
      { signCount: 1 },
    ] as Tamper[]) {
      const ch = await challenge(low, factorId);
      const response = await verify(
        low,
        factorId,
        ch,
        authenticator.get(ch.webauthn.credential_options.publicKey, tamper),
      );
      expect(response.status, JSON.stringify(tamper)).toBe(400);
      expect(await response.json()).toMatchObject({
        code: "webauthn_verification_failed",
        message: "Credential verification failed",
      });
      // The challenge went with the attempt.
      const again = await verify(low, factorId, ch, {});
      expect(again.status).toBe(422);
      expect(((await again.json()) as { code: string }).code).toBe("mfa_factor_not_found");
    }
    expect(await aalOf(low)).toBe("aal1");

    const bad: Array<[unknown, string]> = [
      [undefined, "WebAuthn config required"],
      [{ type: "sign" }, "WebAuthn type must be create or request"],
      [{ type: "request" }, "credential_response required"],
    ];
    const ch = await challenge(low, factorId);
    for (const [webauthn, message] of bad) {
      const response = await call(low, `/factors/${factorId}/verify`, {
        challenge_id: ch.id,
        webauthn,
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ code: "validation_failed", message });
    }
    const malformed = await verify(low, factorId, ch, {
      id: "x",
      type: "public-key",
      response: {},
    });
    expect(await malformed.json()).toMatchObject({
      code: "validation_failed",
      message: "Invalid credential_response",
    });
  });

  it("refuses a registration made by another key as the answer to a sign-in challenge", async () => {
    // The attack: with the password only (aal1), ask the verified factor for a challenge (a sign-in
    // ceremony) and answer it as if enrolling, with a registration by the attacker's own software
    // key over the given challenge and the site's origin. go-webauthn refuses it (a sign-in
    // ceremony has no credential parameters to check the new key against).
    const { email, user, factorId } = await enrolled(new SoftAuthenticator());
    const low = await aal1Client(email);
    const ch = await challenge(low, factorId);
    expect(ch.webauthn.type).toBe("request");
    const attacker = new SoftAuthenticator();
    const registration = attacker.create({
      challenge: ch.webauthn.credential_options.publicKey.challenge,
      rp: { id: "localhost", name: "Edge Notes" },
      user: { id: Buffer.from(user.id).toString("base64url"), name: email, displayName: email },
      pubKeyCredParams: [{ type: "public-key", alg: -7 }],
    });
    const response = await call(low, `/factors/${factorId}/verify`, {
      challenge_id: ch.id,
      webauthn: { type: "create", credential_response: registration },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      code: "webauthn_verification_failed",
      message: "Credential verification failed",
    });
    expect(await aalOf(low)).toBe("aal1");
    // The attacker's key was not added to the factor: the factor still signs in with its own key
    // only, and the challenge went with the attempt.
    const again = await verify(low, factorId, ch, registration);
    expect(again.status).toBe(422);
  });

  it("refuses a registration challenge answered after the factor was verified", async () => {
    // Two registration challenges of one unverified factor: the first verifies it; a registration
    // by another key on the second would otherwise raise a session without the factor's key.
    const { client } = await signedInClient();
    const { data, error } = await client.auth.mfa.enroll({
      factorType: "webauthn",
      friendlyName: "Security key",
    });
    if (error) throw error;
    const first = await challenge(client, data.id);
    const second = await challenge(client, data.id);
    expect(second.webauthn.type).toBe("create");
    const options = first.webauthn.credential_options.publicKey;
    const ok = await verify(client, data.id, first, new SoftAuthenticator().create(options));
    expect(ok.status).toBe(200);
    const late = await verify(
      client,
      data.id,
      second,
      new SoftAuthenticator().create(second.webauthn.credential_options.publicKey),
    );
    expect(late.status).toBe(400);
    expect(await late.json()).toMatchObject({ code: "webauthn_verification_failed" });
  });

  it("refuses a sign-in assertion as the answer to an unverified factor's registration", async () => {
    // The other way round: a second WebAuthn factor, still unverified, answered with an assertion
    // by the first factor's key, over the registration challenge.
    const authenticator = new SoftAuthenticator();
    const { client, factorId: first } = await enrolled(authenticator);
    const { data, error } = await client.auth.mfa.enroll({
      factorType: "webauthn",
      friendlyName: "Second key",
    });
    if (error) throw error;
    const ch = await challenge(client, data.id);
    expect(ch.webauthn.type).toBe("create");
    const assertion = authenticator.get({
      challenge: ch.webauthn.credential_options.publicKey.challenge,
      rpId: "localhost",
    });
    const response = await call(client, `/factors/${data.id}/verify`, {
      challenge_id: ch.id,
      webauthn: { type: "request", credential_response: assertion },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "webauthn_verification_failed" });
    const listed = await client.auth.mfa.listFactors();
    expect(listed.data?.all.map((f) => [f.id, f.status])).toEqual([
      [first, "verified"],
      [data.id, "unverified"],
    ]);
  });

  it("needs aal2 to unenroll a verified WebAuthn factor", async () => {
    const authenticator = new SoftAuthenticator();
    const { client, email, factorId } = await enrolled(authenticator);
    const low = await aal1Client(email);
    const refused = await low.auth.mfa.unenroll({ factorId });
    expect(refused.error).toMatchObject({ status: 422, code: "insufficient_aal" });
    expect((await client.auth.mfa.unenroll({ factorId })).error).toBeNull();
    expect((await client.auth.mfa.listFactors()).data?.all).toEqual([]);
  });
});

import { createClient } from "@supabase/supabase-js";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import {
  anonClient,
  authFetch,
  BACKEND_URL,
  freshUser,
  PASSWORD,
  PUBLISHABLE_KEY,
  signedInClient,
} from "../../../../tests/support/backend.ts";

describe("POST /token grant_type=password", () => {
  it("signs in and issues ES256 access tokens with the real claims, verifiable with the JWKS", async () => {
    const { client, session, user, email } = await signedInClient();
    expect(session).toMatchObject({ token_type: "bearer", expires_in: 3600 });
    expect(session.refresh_token).toMatch(/^[a-z0-9]{12}$/);
    expect(session.expires_at).toBeGreaterThan(Date.now() / 1000 + 3500);

    const jwks = createRemoteJWKSet(new URL(`${BACKEND_URL}/auth/v1/.well-known/jwks.json`));
    const { payload, protectedHeader } = await jwtVerify(session.access_token, jwks, {
      issuer: `${BACKEND_URL}/auth/v1`,
      audience: "authenticated",
    });
    expect(protectedHeader.alg).toBe("ES256");
    expect(payload).toMatchObject({
      sub: user.id,
      email,
      phone: "",
      role: "authenticated",
      aal: "aal1",
      is_anonymous: false,
      app_metadata: { provider: "email", providers: ["email"] },
      user_metadata: {},
    });
    expect(payload.session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(payload.amr).toEqual([{ method: "password", timestamp: expect.any(Number) }]);

    const { data, error } = await client.auth.getClaims();
    expect(error).toBeNull();
    expect(data?.claims.sub).toBe(user.id);
    expect(data?.header.alg).toBe("ES256");
  });

  it("getClaims() verifies against the JWKS without calling /user", async () => {
    const { email, password } = await freshUser();
    const calls: string[] = [];
    const store = new Map<string, string>();
    const client = createClient(BACKEND_URL, PUBLISHABLE_KEY, {
      auth: {
        autoRefreshToken: false,
        storage: {
          getItem: (k) => store.get(k) ?? null,
          setItem: (k, v) => void store.set(k, v),
          removeItem: (k) => void store.delete(k),
        },
      },
      global: {
        fetch: (input, init) => {
          calls.push(new URL(input instanceof Request ? input.url : String(input)).pathname);
          return fetch(input, init);
        },
      },
    });
    await client.auth.signInWithPassword({ email, password });
    calls.length = 0;
    const first = await client.auth.getClaims();
    const second = await client.auth.getClaims();
    expect(first.error).toBeNull();
    expect(second.data?.claims.email).toBe(email);
    expect(calls.filter((path) => path.endsWith("/user"))).toEqual([]);
    expect(
      calls.filter((path) => path.endsWith("/.well-known/jwks.json")).length,
    ).toBeLessThanOrEqual(1);
  });

  it("refuses a wrong password and an unknown email alike (invalid_credentials)", async () => {
    const { email } = await freshUser();
    const client = anonClient();
    const wrong = await client.auth.signInWithPassword({ email, password: "wrong-password" });
    expect(wrong.error).toMatchObject({
      status: 400,
      code: "invalid_credentials",
      message: "Invalid login credentials",
    });
    const unknown = await client.auth.signInWithPassword({
      email: `nobody-${email}`,
      password: PASSWORD,
    });
    expect(unknown.error).toMatchObject({ status: 400, code: "invalid_credentials" });
  });

  it("answers an unknown grant type like the real service", async () => {
    const response = await authFetch("/token?grant_type=magic", { method: "POST", body: "{}" });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      code: 400,
      error_code: "invalid_credentials",
      msg: "unsupported_grant_type",
    });
  });
});

describe("POST /token grant_type=refresh_token", () => {
  async function refresh(token: string) {
    const response = await authFetch("/token?grant_type=refresh_token", {
      method: "POST",
      headers: { "X-Supabase-Api-Version": "2024-01-01" },
      body: JSON.stringify({ refresh_token: token }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  it("rotates the refresh token; the parent reused inside the interval returns the active one", async () => {
    const { client, session } = await signedInClient();
    const { data, error } = await client.auth.refreshSession();
    expect(error).toBeNull();
    const rotated = data.session?.refresh_token ?? "";
    expect(rotated).toMatch(/^[a-z0-9]{12}$/);
    expect(rotated).not.toBe(session.refresh_token);
    expect(data.session?.user.id).toBe(session.user.id);

    const reuse = await refresh(session.refresh_token);
    expect(reuse.status).toBe(200);
    expect(reuse.body.refresh_token).toBe(rotated);

    const next = await refresh(rotated);
    expect(next.status).toBe(200);
    expect(next.body.refresh_token).not.toBe(rotated);
  });

  it("keeps the session id and amr across refreshes", async () => {
    const { client, session } = await signedInClient();
    const before = (await client.auth.getClaims()).data?.claims;
    await client.auth.refreshSession();
    const after = (await client.auth.getClaims()).data?.claims;
    expect(after?.session_id).toBe(before?.session_id);
    expect(after?.amr).toEqual(before?.amr);
    expect(session.refresh_token).toBeTruthy();
  });

  it("rejects unknown and malformed refresh tokens", async () => {
    expect(await refresh("abcdefghijkl")).toEqual({
      status: 400,
      body: {
        code: "refresh_token_not_found",
        message: "Invalid Refresh Token: Refresh Token Not Found",
      },
    });
    expect(await refresh("short")).toEqual({
      status: 400,
      body: { code: "validation_failed", message: "Refresh token is not valid" },
    });
    // Auth's params check (shorter than 12 characters) answers before the token service's own
    // "refresh_token required", which an empty token so never reaches
    for (const empty of ["", undefined]) {
      expect(await refresh(empty as string)).toEqual({
        status: 400,
        body: { code: "validation_failed", message: "Refresh token is not valid" },
      });
    }
  });
});

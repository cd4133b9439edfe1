// Features a local project has off answer as the hosted service does for a project without them
// (status, error_code, message), not with a bare 404: SAML SSO, Web3, ID-token sign-in with a
// provider that is not enabled, the OAuth 2.1 server, custom OAuth providers, SCIM.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  adminClient,
  anonClient,
  authFetch,
  PASSWORD,
  PUBLISHABLE_KEY,
  randomEmail,
  SECRET_KEY,
  signedInClient,
} from "../../../../tests/support/backend.ts";
import { type MemoryBackend, memoryBackend } from "../../../../tests/support/memory-backend.ts";

const NEW_SHAPE = { "X-Supabase-Api-Version": "2024-01-01" };

async function call(path: string, init: RequestInit & { key?: string } = {}) {
  const response = await authFetch(path, { ...init, headers: { ...NEW_SHAPE, ...init.headers } });
  return { status: response.status, body: await response.json() };
}

/** An unsigned JWT whose payload is `claims` (enough for the issuer detection). */
function idToken(claims: Record<string, unknown>): string {
  const part = (v: object) => Buffer.from(JSON.stringify(v)).toString("base64url");
  return `${part({ alg: "RS256" })}.${part(claims)}.c2ln`;
}

describe("SAML SSO", () => {
  it("signInWithSSO is 404 saml_provider_disabled", async () => {
    const { data, error } = await anonClient().auth.signInWithSSO({ domain: "example.com" });
    expect(data).toBeNull();
    expect(error).toMatchObject({
      status: 404,
      code: "saml_provider_disabled",
      message: "SAML 2.0 is disabled",
    });
  });

  it("the SAML metadata and ACS endpoints answer the same", async () => {
    const expected = {
      status: 404,
      body: { code: "saml_provider_disabled", message: "SAML 2.0 is disabled" },
    };
    expect(await call("/sso/saml/metadata")).toEqual(expected);
    expect(await call("/sso/saml/acs", { method: "POST", body: "SAMLResponse=x" })).toEqual(
      expected,
    );
    // the old shape, for clients that send no API version
    const old = await authFetch("/sso", { method: "POST", body: "{}" });
    expect(await old.json()).toEqual({
      code: 404,
      error_code: "saml_provider_disabled",
      msg: "SAML 2.0 is disabled",
    });
  });

  it("the admin API lists no SSO providers and finds none", async () => {
    const list = await call("/admin/sso/providers", { key: SECRET_KEY });
    expect(list).toEqual({ status: 200, body: { items: [] } });
    expect(
      await call("/admin/sso/providers/4f0b1a8e-2b1e-4d7c-9d55-0d3c8c1b2a10", { key: SECRET_KEY }),
    ).toEqual({
      status: 404,
      body: { code: "sso_provider_not_found", message: "SSO Identity Provider not found" },
    });
  });
});

describe("Web3", () => {
  it("grant_type=web3 is 422 web3_provider_disabled", async () => {
    expect(
      await call("/token?grant_type=web3", {
        method: "POST",
        body: JSON.stringify({ chain: "solana", message: "m", signature: "s" }),
      }),
    ).toEqual({
      status: 422,
      body: { code: "web3_provider_disabled", message: "Web3 provider is disabled" },
    });
  });
});

describe("ID token sign-in (signInWithIdToken)", () => {
  it("a provider that is not enabled is 400 provider_disabled, naming its issuer", async () => {
    const { error } = await anonClient().auth.signInWithIdToken({
      provider: "facebook",
      token: idToken({ iss: "https://www.facebook.com" }),
    });
    expect(error).toMatchObject({
      status: 400,
      code: "provider_disabled",
      message: 'Provider (issuer "https://www.facebook.com") is not enabled',
    });
  });

  it("Apple's issuer is read from the token first", async () => {
    const apple = await call("/token?grant_type=id_token", {
      method: "POST",
      body: JSON.stringify({
        provider: "apple",
        id_token: idToken({ iss: "https://appleid.apple.com" }),
      }),
    });
    expect(apple).toEqual({
      status: 400,
      body: {
        code: "provider_disabled",
        message: 'Provider (issuer "https://appleid.apple.com") is not enabled',
      },
    });
    const notApple = await call("/token?grant_type=id_token", {
      method: "POST",
      body: JSON.stringify({ provider: "apple", id_token: idToken({ iss: "https://x.test" }) }),
    });
    expect(notApple).toEqual({
      status: 400,
      body: {
        code: "validation_failed",
        message: "Detected ID token issuer is not an Apple ID token issuer",
      },
    });
  });

  it("bad input gets the OAuth-style errors, an unknown issuer validation_failed", async () => {
    expect(
      await call("/token?grant_type=id_token", {
        method: "POST",
        body: JSON.stringify({ provider: "google" }),
      }),
    ).toEqual({
      status: 400,
      body: { error: "invalid request", error_description: "id_token required" },
    });
    expect(
      await call("/token?grant_type=id_token", {
        method: "POST",
        body: JSON.stringify({ id_token: "a.b.c" }),
      }),
    ).toEqual({
      status: 400,
      body: {
        error: "invalid request",
        error_description: "provider or client_id and issuer required",
      },
    });
    expect(
      await call("/token?grant_type=id_token", {
        method: "POST",
        body: JSON.stringify({ id_token: "a.b.c", provider: "acme" }),
      }),
    ).toEqual({
      status: 400,
      body: { code: "validation_failed", message: 'Custom OIDC provider "acme" not allowed' },
    });
  });

  it("an enabled provider's token cannot be verified offline: Bad ID token", async () => {
    // google is on in the project's config.toml (served by the local provider page for OAuth)
    const { error } = await anonClient().auth.signInWithIdToken({
      provider: "google",
      token: idToken({ iss: "https://accounts.google.com" }),
    });
    expect(error).toMatchObject({ status: 400, message: "Bad ID token" });
  });
});

describe("OAuth 2.1 server, custom providers, SCIM", () => {
  const oauthOff = {
    status: 404,
    body: { code: "feature_disabled", message: "OAuth server is disabled" },
  };

  it("the OAuth server's endpoints are 404 feature_disabled", async () => {
    expect(await call("/oauth/authorize?client_id=x")).toEqual(oauthOff);
    expect(await call("/oauth/token", { method: "POST", body: "{}" })).toEqual(oauthOff);
    expect(await call("/.well-known/oauth-authorization-server")).toEqual(oauthOff);
    const { data, error } = await adminClient().auth.admin.oauth.listClients();
    expect(data).toMatchObject({ clients: [] });
    expect(error).toMatchObject({ status: 404, code: "feature_disabled" });
  });

  it("a user's OAuth grants need a session first, then are disabled too", async () => {
    // the publishable key alone is the anon JWT: no user in it
    expect(await call("/user/oauth/grants")).toEqual({
      status: 403,
      body: { code: "bad_jwt", message: "invalid claim: missing sub claim" },
    });
    const { session } = await signedInClient();
    expect(
      await call("/user/oauth/grants", {
        headers: { Authorization: `Bearer ${session.access_token}` },
      }),
    ).toEqual(oauthOff);
  });

  it("custom OAuth providers (admin) and SCIM are off", async () => {
    expect(await call("/admin/custom-providers", { key: SECRET_KEY })).toEqual({
      status: 404,
      body: { code: "feature_disabled", message: "Custom OAuth providers are disabled" },
    });
    expect(await call("/scim/v2/Users")).toEqual({
      status: 404,
      body: { code: "feature_disabled", message: "SCIM server is disabled" },
    });
  });

  it("serves the OpenID discovery document", async () => {
    const { status, body } = await call("/.well-known/openid-configuration");
    expect(status).toBe(200);
    const issuer = body.issuer as string;
    expect(issuer).toMatch(/\/auth\/v1$/);
    expect(body).toMatchObject({
      jwks_uri: `${issuer}/.well-known/jwks.json`,
      id_token_signing_alg_values_supported: ["RS256", "HS256", "ES256"],
      code_challenge_methods_supported: ["S256", "plain"],
    });
  });
});

describe("[auth.email] enabled = false", () => {
  let local: MemoryBackend;
  beforeAll(async () => {
    local = await memoryBackend({ auth: { email: { enabled: false } } });
  }, 60_000);
  afterAll(() => local?.close());

  async function post(path: string, body: unknown) {
    const response = await local.fetch(`${local.backend.url}/auth/v1${path}`, {
      method: "POST",
      headers: { apikey: PUBLISHABLE_KEY, "Content-Type": "application/json", ...NEW_SHAPE },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  }

  it("every email sign-in, link and code is refused as by Auth, for a user the admin made", async () => {
    // the admin API still makes users with an address
    const email = randomEmail();
    const created = await local.admin().auth.admin.createUser({
      email,
      password: PASSWORD,
      email_confirm: true,
    });
    expect(created.error).toBeNull();
    const logins = { code: "email_provider_disabled", message: "Email logins are disabled" };

    expect(await post("/token?grant_type=password", { email, password: PASSWORD })).toEqual({
      status: 422,
      body: logins,
    });
    expect(await post("/otp", { email })).toEqual({ status: 422, body: logins });
    expect(await post("/magiclink", { email })).toEqual({ status: 422, body: logins });
    expect(await post("/recover", { email })).toEqual({ status: 400, body: logins });
    expect(await post("/resend", { type: "signup", email })).toEqual({ status: 400, body: logins });
    expect(await post("/signup", { email: randomEmail(), password: PASSWORD })).toEqual({
      status: 400,
      body: { code: "email_provider_disabled", message: "Email signups are disabled" },
    });
    // Auth's otp checks create_user (an unknown address) before handing over to the magic link
    expect(await post("/otp", { email: randomEmail(), create_user: false })).toEqual({
      status: 422,
      body: { code: "otp_disabled", message: "Signups not allowed for otp" },
    });
    // the resend type check comes first
    expect(await post("/resend", { type: "bogus", email })).toMatchObject({
      status: 400,
      body: { code: "validation_failed" },
    });
  });
});

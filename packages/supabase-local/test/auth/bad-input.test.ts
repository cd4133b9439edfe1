import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import {
  adminClient,
  anonClient,
  authFetch,
  BACKEND_URL,
  randomEmail,
  signedInClient,
} from "../../../../tests/support/backend.ts";

const NEW_SHAPE = { "X-Supabase-Api-Version": "2024-01-01" };

async function post(path: string, body: string, headers: Record<string, string> = {}) {
  const response = await authFetch(path, { method: "POST", body, headers });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? JSON.parse(text) : null,
    headers: response.headers,
  };
}

async function noUser(email: string) {
  const { error } = await anonClient().auth.signInWithOtp({
    email,
    options: { shouldCreateUser: false },
  });
  return error?.code === "otp_disabled";
}

describe("bad input gets the real 4xx, never a 500, and changes nothing", () => {
  it("malformed JSON: bad_json in both error shapes", async () => {
    const email = randomEmail();
    const old = await post("/signup", `{"email":"${email}","password":`);
    expect(old.status).toBe(400);
    expect(old.body).toMatchObject({ code: 400, error_code: "bad_json" });
    expect(old.body.msg).toMatch(/^Could not parse request body as JSON: /);
    expect(old.headers.get("x-sb-error-code")).toBe("bad_json");

    const current = await post("/signup", "{nope", NEW_SHAPE);
    expect(current.status).toBe(400);
    expect(Object.keys(current.body)).toEqual(["code", "message"]);
    expect(current.body.code).toBe("bad_json");
    expect(current.headers.get("X-Supabase-Api-Version")).toBe("2024-01-01");
    expect(await noUser(email)).toBe(true);
  });

  it("wrong types and non-object bodies are bad_json", async () => {
    const email = randomEmail();
    for (const body of [
      JSON.stringify({ email, password: 12345678 }),
      JSON.stringify({ email: ["a"], password: "long-enough-pw" }),
      JSON.stringify({ email, password: "long-enough-pw", data: "x" }),
      "[1,2]",
      '"text"',
      "",
    ]) {
      const result = await post("/signup", body, NEW_SHAPE);
      expect(result.status, body).toBe(400);
      expect(result.body.code, body).toBe("bad_json");
    }
    expect(await noUser(email)).toBe(true);
  });

  it("a huge body is 413 request_entity_too_large", async () => {
    const big = JSON.stringify({ email: randomEmail(), password: "x".repeat(2 * 1024 * 1024) });
    const result = await post("/signup", big, NEW_SHAPE);
    expect(result.status).toBe(413);
    expect(result.body).toEqual({
      code: "request_entity_too_large",
      message: "Request body too large (max 1048576 bytes)",
    });
  });

  it("a password longer than 72 characters is refused", async () => {
    const result = await post(
      "/signup",
      JSON.stringify({ email: randomEmail(), password: "p".repeat(73) }),
      NEW_SHAPE,
    );
    expect(result).toMatchObject({
      status: 400,
      body: { code: "validation_failed", message: "Password cannot be longer than 72 characters" },
    });
  });

  it("forged, expired and missing JWTs on /user", async () => {
    const { session } = await signedInClient();
    const [header, payload] = session.access_token.split(".");
    const forged = `${header}.${payload}.${"A".repeat(86)}`;
    const get = (token?: string, apikey = true) =>
      fetch(`${BACKEND_URL}/auth/v1/user`, {
        headers: {
          ...(apikey ? { apikey: "sb_publishable_ACJWlzQHlZjBrEguHvfOxg_3BJgxAaH" } : {}),
          ...(token ? { Authorization: `Bearer ${token}` } : {}),
          ...NEW_SHAPE,
        },
      });

    const bad = await get(forged);
    expect(bad.status).toBe(403);
    expect(await bad.json()).toMatchObject({ code: "bad_jwt" });

    const expired = await new SignJWT({ sub: session.user.id, role: "authenticated" })
      .setProtectedHeader({ alg: "HS256" })
      .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
      .sign(new TextEncoder().encode("super-secret-jwt-token-with-at-least-32-characters-long"));
    const old = await get(expired);
    expect(old.status).toBe(403);
    expect(await old.json()).toEqual({
      code: "bad_jwt",
      message:
        "invalid JWT: unable to parse or verify signature, token has invalid claims: token is expired",
    });

    const anonOnly = await get();
    expect(anonOnly.status).toBe(403);
    expect(await anonOnly.json()).toEqual({
      code: "bad_jwt",
      message: "invalid claim: missing sub claim",
    });

    // no API key at all: the gateway's 401, before Auth sees the request
    const none = await get(undefined, false);
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({
      message: "No API key found in request",
      hint: "No `apikey` request header or url param was found.",
    });

    // a key, and an Authorization that is not a bearer token: passed on as it is, Auth's 401
    const basic = await fetch(`${BACKEND_URL}/auth/v1/user`, {
      headers: {
        apikey: "sb_publishable_ACJWlzQHlZjBrEguHvfOxg_3BJgxAaH",
        Authorization: "Basic dXNlcjpwYXNz",
        ...NEW_SHAPE,
      },
    });
    expect(basic.status).toBe(401);
    expect(await basic.json()).toEqual({
      code: "no_authorization",
      message: "This endpoint requires a valid Bearer token",
    });

    const otherSecret = await new SignJWT({ sub: session.user.id, role: "service_role" })
      .setProtectedHeader({ alg: "HS256" })
      .sign(new TextEncoder().encode("a-different-secret-that-is-long-enough-too"));
    const admin = await authFetch("/admin/users", {
      headers: { Authorization: `Bearer ${otherSecret}` },
    });
    expect(admin.status).toBe(403);
  });

  it("verify: missing type/token, unknown type, wrong code", async () => {
    expect(
      await post("/verify", JSON.stringify({ token: "123456", email: "a@b.co" }), NEW_SHAPE),
    ).toMatchObject({
      status: 400,
      body: { code: "validation_failed", message: "Verify requires a verification type" },
    });
    expect(
      await post("/verify", JSON.stringify({ type: "signup", email: "a@b.co" }), NEW_SHAPE),
    ).toMatchObject({
      status: 400,
      body: { message: "Verify requires a token or a token hash" },
    });
    // an unknown type with an email and a code: the user is looked up, no token matches (as
    // supabase/auth's verifyUserAndToken): 403 otp_expired, or user_banned for a banned user
    const unknown = await post(
      "/verify",
      JSON.stringify({ type: "bogus", token: "123456", email: randomEmail() }),
      NEW_SHAPE,
    );
    expect(unknown).toMatchObject({
      status: 403,
      body: { code: "otp_expired", message: "Token has expired or is invalid" },
    });
    const bannedEmail = randomEmail();
    const created = await adminClient().auth.admin.createUser({
      email: bannedEmail,
      email_confirm: true,
      ban_duration: "1h",
    });
    expect(created.error).toBeNull();
    expect(
      await post(
        "/verify",
        JSON.stringify({ type: "bogus", token: "123456", email: bannedEmail }),
        NEW_SHAPE,
      ),
    ).toMatchObject({ status: 403, body: { code: "user_banned", message: "User is banned" } });
    expect(
      await post(
        "/verify",
        JSON.stringify({ type: "bogus", token: "123456", email: "not-an-email" }),
        NEW_SHAPE,
      ),
    ).toMatchObject({ status: 422, body: { code: "validation_failed" } });
    expect(
      await post(
        "/verify",
        JSON.stringify({ type: "email", token_hash: "abc", email: "a@b.co" }),
        NEW_SHAPE,
      ),
    ).toMatchObject({
      status: 400,
      body: { message: "Only the token_hash and type should be provided" },
    });
    const link = await authFetch(
      "/verify?token=nope&type=signup&redirect_to=http://localhost:5173/x",
    );
    expect(link.status).toBe(303);
    const location = new URL(link.headers.get("location") ?? "");
    expect(location.pathname).toBe("/x");
    expect(new URLSearchParams(location.hash.slice(1)).get("error_code")).toBe("otp_expired");
  });

  it("GET /verify with an unknown type: a 303 carrying Auth's 'Invalid email verification type'", async () => {
    const link = await authFetch(
      "/verify?token=nope&type=bogus&redirect_to=http://localhost:5173/x",
    );
    expect(link.status).toBe(303);
    const location = new URL(link.headers.get("location") ?? "");
    expect(location.pathname).toBe("/x");
    expect(Object.fromEntries(new URLSearchParams(location.hash.slice(1)))).toEqual({
      error: "invalid_request",
      error_code: "validation_failed",
      error_description: "Invalid email verification type",
      sb: "",
    });
  });

  it("MFA enroll, challenge and verify without a user session, as the gateway forwards them", async () => {
    const factor = crypto.randomUUID();
    const calls = [
      ["/factors", { factor_type: "totp" }],
      [`/factors/${factor}/challenge`, {}],
      [`/factors/${factor}/verify`, { challenge_id: crypto.randomUUID(), code: "123456" }],
    ] as const;
    for (const [path, body] of calls) {
      // the key alone: the gateway hands Auth the key's JWT, which has no sub
      expect(await post(path, JSON.stringify(body), NEW_SHAPE), path).toMatchObject({
        status: 403,
        body: { code: "bad_jwt", message: "invalid claim: missing sub claim" },
      });
    }
    // an Authorization that is not a bearer token, which the gateway passes on as it is: none
    for (const [path, body] of calls) {
      const headers = { ...NEW_SHAPE, Authorization: "Basic dXNlcjpwYXNz" };
      expect(await post(path, JSON.stringify(body), headers), path).toMatchObject({
        status: 401,
        body: { code: "no_authorization", message: "This endpoint requires a valid Bearer token" },
      });
    }
  });

  it("PKCE exchange: wrong verifier, unknown code", async () => {
    const wrong = await post(
      "/token?grant_type=pkce",
      JSON.stringify({ auth_code: crypto.randomUUID(), code_verifier: "x".repeat(43) }),
      NEW_SHAPE,
    );
    expect(wrong).toMatchObject({ status: 404, body: { code: "flow_state_not_found" } });
    const missing = await post(
      "/token?grant_type=pkce",
      JSON.stringify({ auth_code: "" }),
      NEW_SHAPE,
    );
    expect(missing).toMatchObject({ status: 400, body: { code: "validation_failed" } });
    const badChallenge = await post(
      "/otp",
      JSON.stringify({
        email: randomEmail(),
        code_challenge: "short",
        code_challenge_method: "s256",
      }),
      NEW_SHAPE,
    );
    expect(badChallenge).toMatchObject({ status: 400, body: { code: "validation_failed" } });
  });

  it("logout with an unknown scope is refused and keeps the session", async () => {
    const { session, client } = await signedInClient();
    const response = await authFetch("/logout?scope=everything", {
      method: "POST",
      headers: { Authorization: `Bearer ${session.access_token}`, ...NEW_SHAPE },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      code: "validation_failed",
      message: 'Unsupported logout scope "everything"',
    });
    expect((await client.auth.refreshSession()).error).toBeNull();
  });

  it("garbage on every endpoint never yields a 5xx", async () => {
    const { session } = await signedInClient();
    const auth = { Authorization: `Bearer ${session.access_token}` };
    const bodies = [
      "{",
      "[]",
      "123",
      '{"email":{}}',
      '{"email":"not-an-email","password":null}',
      '{"type":1}',
      "\u0000",
    ];
    const endpoints: Array<[string, string, Record<string, string>?]> = [
      ["POST", "/signup"],
      ["POST", "/token?grant_type=password"],
      ["POST", "/token?grant_type=refresh_token"],
      ["POST", "/token?grant_type=pkce"],
      ["POST", "/otp"],
      ["POST", "/verify"],
      ["POST", "/recover"],
      ["POST", "/resend"],
      ["PUT", "/user", auth],
      ["POST", "/admin/users", { apikey: "sb_secret_N7UND0UgjKTVK-Uodkm0Hg_xSvEMPvz" }],
      ["POST", "/admin/generate_link", { apikey: "sb_secret_N7UND0UgjKTVK-Uodkm0Hg_xSvEMPvz" }],
    ];
    for (const [method, path, headers] of endpoints) {
      for (const body of bodies) {
        const response = await authFetch(path, { method, body, headers });
        expect(response.status, `${method} ${path} ${JSON.stringify(body)}`).toBeLessThan(500);
        // (Not always a 4xx: like Go's decoder, unknown fields are ignored, so `{"type":1}` is an
        // anonymous sign-up on /signup (refused while config.toml has them off) and a no-op update
        // on PUT /user, as on the real service.)
      }
    }
    expect((await adminClient().auth.admin.listUsers({ perPage: 1 })).error).toBeNull();
  });
});

describe("strings, nesting and claims Auth's decoder and middleware judge", () => {
  const LEGACY_SECRET = new TextEncoder().encode(
    "super-secret-jwt-token-with-at-least-32-characters-long",
  );

  it("lone surrogates in a body become U+FFFD, as Go's decoder makes them, and are stored", async () => {
    const email = randomEmail();
    const signup = await post(
      "/signup",
      `{"email":"${email}","password":"long-enough-pw","data":{"a":"x\\ud800","\\udc00k":["\\ud83d"]}}`,
      NEW_SHAPE,
    );
    expect(signup.status).toBe(200);
    expect(signup.body.user_metadata).toEqual({ a: "x\ufffd", "\ufffdk": ["\ufffd"] });

    const { session } = await signedInClient();
    const headers = { Authorization: `Bearer ${session.access_token}`, ...NEW_SHAPE };
    const update = await authFetch("/user", {
      method: "PUT",
      body: '{"data":{"name":"\\udc00x"}}',
      headers,
    });
    expect(update.status).toBe(200);
    expect((await update.json()).user_metadata).toMatchObject({ name: "\ufffdx" });

    const otp = await post(
      "/otp",
      `{"email":"${randomEmail()}","data":{"n":"\\ud83d"}}`,
      NEW_SHAPE,
    );
    expect(otp).toMatchObject({ status: 200, body: {} });
  });

  it("a NUL in any string of a body is a 400 and stores nothing", async () => {
    const email = randomEmail();
    const nul = {
      code: "validation_failed",
      message: "Strings in the request body must not contain the NUL character (\\u0000)",
    };
    for (const body of [
      { email, password: "long-enough-pw", data: { a: "x\u0000" } },
      { email, password: "long-enough-pw", data: { "k\u0000": 1 } },
      { email: `${email}\u0000`, password: "long-enough-pw" },
    ]) {
      expect(await post("/signup", JSON.stringify(body), NEW_SHAPE)).toMatchObject({
        status: 400,
        body: nul,
      });
    }
    expect(await noUser(email)).toBe(true);

    const { session } = await signedInClient();
    const update = await authFetch("/user", {
      method: "PUT",
      body: JSON.stringify({ data: { name: "a\u0000" } }),
      headers: { Authorization: `Bearer ${session.access_token}`, ...NEW_SHAPE },
    });
    expect(update.status).toBe(400);
    expect(await update.json()).toEqual(nul);
    for (const body of [
      { type: "email", token: "12\u00003456", email },
      { type: "email", token_hash: "\u0000" },
    ]) {
      expect(await post("/verify", JSON.stringify(body), NEW_SHAPE)).toMatchObject({
        status: 400,
        body: nul,
      });
    }
  });

  it("GET /verify with a NUL in the token: the redirect carries a 400, not a 500", async () => {
    const link = await authFetch(
      "/verify?token=%00abc&type=signup&redirect_to=http://localhost:5173/x",
    );
    expect(link.status).toBe(303);
    const location = new URL(link.headers.get("location") ?? "");
    expect(Object.fromEntries(new URLSearchParams(location.hash.slice(1)))).toMatchObject({
      error: "invalid_request",
      error_code: "validation_failed",
    });
  });

  it("nesting deeper than the cap is bad_json; data nested up to it is stored and read back", async () => {
    const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
    const email = randomEmail();
    const deep = await post(
      "/signup",
      `{"email":"${email}","password":"long-enough-pw","data":${nested(5000)}}`,
      NEW_SHAPE,
    );
    expect(deep).toMatchObject({
      status: 400,
      body: {
        code: "bad_json",
        message: "Could not parse request body as JSON: exceeded max depth",
      },
    });
    const arrays = await post(
      "/signup",
      `{"email":"${email}","password":"long-enough-pw","data":{"x":${"[".repeat(2000)}${"]".repeat(2000)}}}`,
      NEW_SHAPE,
    );
    expect(arrays).toMatchObject({ status: 400, body: { code: "bad_json" } });
    expect(await noUser(email)).toBe(true);

    // the body itself is one level: `data` may hold 511 more
    const ok = await post(
      "/signup",
      `{"email":"${email}","password":"long-enough-pw","data":${nested(511)}}`,
      NEW_SHAPE,
    );
    expect(ok.status).toBe(200);
    await adminClient().auth.admin.updateUserById(ok.body.id, { email_confirm: true });
    // signed into a JWT, read back by GET /user
    const client = anonClient();
    const { error } = await client.auth.signInWithPassword({
      email,
      password: "long-enough-pw",
    });
    expect(error).toBeNull();
    const { data } = await client.auth.getUser();
    let level: unknown = data.user?.user_metadata;
    let depth = 0;
    while (level && typeof level === "object" && "a" in level) {
      level = (level as { a: unknown }).a;
      depth++;
    }
    expect(depth).toBe(511);
    const over = await post(
      "/signup",
      `{"email":"${randomEmail()}","password":"long-enough-pw","data":${nested(512)}}`,
      NEW_SHAPE,
    );
    expect(over).toMatchObject({ status: 400, body: { code: "bad_json" } });
  });

  it("logout with an empty scope is a global logout, as Auth reads it", async () => {
    const { session, client } = await signedInClient();
    const response = await authFetch("/logout?scope=", {
      method: "POST",
      headers: { Authorization: `Bearer ${session.access_token}`, ...NEW_SHAPE },
    });
    expect(response.status).toBe(204);
    expect((await client.auth.refreshSession()).error).toMatchObject({
      code: "refresh_token_not_found",
    });
  });

  it("a JWT whose sub is not a UUID is 400 bad_jwt", async () => {
    const token = await new SignJWT({
      sub: "not-a-uuid",
      role: "authenticated",
      aud: "authenticated",
    })
      .setProtectedHeader({ alg: "HS256" })
      .setExpirationTime("1h")
      .sign(LEGACY_SECRET);
    const response = await authFetch("/user", {
      headers: { Authorization: `Bearer ${token}`, ...NEW_SHAPE },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      code: "bad_jwt",
      message: "invalid claim: sub claim must be a UUID",
    });
  });

  it("GET /user with a token without aud, or another aud than asked for, is 400", async () => {
    const { session } = await signedInClient();
    const mint = (claims: Record<string, unknown>) =>
      new SignJWT({ sub: session.user.id, role: "authenticated", ...claims })
        .setProtectedHeader({ alg: "HS256" })
        .setExpirationTime("1h")
        .sign(LEGACY_SECRET);
    const get = async (token: string, headers: Record<string, string> = {}) => {
      const response = await authFetch("/user", {
        headers: { Authorization: `Bearer ${token}`, ...NEW_SHAPE, ...headers },
      });
      return { status: response.status, body: await response.json() };
    };
    const mismatch = {
      status: 400,
      body: {
        code: "validation_failed",
        message: "Token audience doesn't match request audience",
      },
    };
    expect(await get(await mint({}))).toEqual(mismatch);
    expect(await get(await mint({ aud: [] }))).toEqual(mismatch);
    expect(await get(session.access_token, { "X-JWT-AUD": "elsewhere" })).toEqual(mismatch);
    expect((await get(await mint({ aud: ["authenticated", "x"] }))).status).toBe(200);
    expect((await get(session.access_token)).status).toBe(200);
  });
});

// The API gateway's key check, as the hosted one (Kong key-auth) does it: no request reaches Auth or
// the data API without one of the project's API keys, except the routes a browser is sent to by a
// link or a redirect and the discovery documents.
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import {
  ANON_KEY,
  BACKEND_URL,
  PASSWORD,
  PUBLISHABLE_KEY,
  SECRET_KEY,
  SERVICE_ROLE_KEY,
  signedInClient,
} from "../../../tests/support/backend.ts";

const NO_KEY = {
  message: "No API key found in request",
  hint: "No `apikey` request header or url param was found.",
};
const INVALID_KEY = {
  message: "Invalid API key",
  hint: "Double check your Supabase `anon` or `service_role` API key.",
};
const APP = "http://localhost:5173";

describe("a request without an API key", () => {
  it("gets the hosted 401 on the data API and Auth, even with a valid session token", async () => {
    const { session, client } = await signedInClient();
    const bearer = { Authorization: `Bearer ${session.access_token}` };
    const requests: Array<[string, RequestInit]> = [
      ["/rest/v1/notes?select=id", {}],
      ["/rest/v1/notes?select=id", { headers: bearer }],
      ["/rest/v1/", {}],
      ["/auth/v1/health", {}],
      ["/auth/v1/settings", {}],
      ["/auth/v1/user", { headers: bearer }],
      ["/auth/v1/logout?scope=global", { method: "POST", headers: bearer }],
      [
        "/auth/v1/token?grant_type=password",
        {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ email: session.user.email, password: PASSWORD }),
        },
      ],
    ];
    for (const [path, init] of requests) {
      const response = await fetch(`${BACKEND_URL}${path}`, init);
      expect(response.status, path).toBe(401);
      expect(response.headers.get("content-type")).toMatch(/^application\/json/);
      expect(await response.json(), path).toEqual(NO_KEY);
    }
    // the global sign-out above never reached Auth: the session still works
    const { data, error } = await client.auth.getUser();
    expect(error).toBeNull();
    expect(data.user?.id).toBe(session.user.id);
  });

  it("the 401 is readable by the page that sent it (CORS), and preflights need no key", async () => {
    const response = await fetch(`${BACKEND_URL}/rest/v1/notes?select=id`, {
      headers: { Origin: APP },
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("access-control-allow-origin")).toBe(APP);
    const preflight = await fetch(`${BACKEND_URL}/rest/v1/notes`, {
      method: "OPTIONS",
      headers: { Origin: APP, "Access-Control-Request-Method": "GET" },
    });
    expect(preflight.status).toBe(204);
  });

  it("passes on the routes a browser is sent to, and the discovery documents", async () => {
    const jwks = await fetch(`${BACKEND_URL}/auth/v1/.well-known/jwks.json`);
    expect(jwks.status).toBe(200);
    expect((await jwks.json()).keys.length).toBeGreaterThan(0);
    const openid = await fetch(`${BACKEND_URL}/auth/v1/.well-known/openid-configuration`);
    expect(openid.status).toBe(200);

    // an email's link: Auth's own answer (a redirect carrying the error), not the gateway's
    const verify = await fetch(
      `${BACKEND_URL}/auth/v1/verify?token=not-a-token&type=signup&redirect_to=${encodeURIComponent(APP)}`,
      { redirect: "manual" },
    );
    expect(verify.status).toBe(303);
    expect(verify.headers.get("location")).toMatch(/error_code=/);

    for (const path of [
      "/auth/v1/authorize?provider=myspace",
      "/auth/v1/callback",
      "/auth/v1/sso/saml/metadata",
    ]) {
      const response = await fetch(`${BACKEND_URL}${path}`, { redirect: "manual" });
      expect(response.status, path).not.toBe(401);
    }
  });
});

describe("the API keys", () => {
  it("each of the project's four keys is one, in the header or the query", async () => {
    for (const key of [PUBLISHABLE_KEY, SECRET_KEY, ANON_KEY, SERVICE_ROLE_KEY]) {
      const settings = await fetch(`${BACKEND_URL}/auth/v1/settings`, { headers: { apikey: key } });
      expect(settings.status).toBe(200);
      const query = await fetch(`${BACKEND_URL}/auth/v1/settings?apikey=${key}`);
      expect(query.status).toBe(200);
    }
    for (const key of [SECRET_KEY, SERVICE_ROLE_KEY]) {
      const rest = await fetch(`${BACKEND_URL}/rest/v1/notes?select=id&limit=1`, {
        headers: { apikey: key },
      });
      expect(rest.status).toBe(200);
      // Kong's hide_credentials: the data API never sees ?apikey= (PostgREST would read a filter)
      const query = await fetch(`${BACKEND_URL}/rest/v1/notes?select=id&limit=1&apikey=${key}`);
      expect(query.status).toBe(200);
    }
  });

  it("a JWT signed with the project's keys (a session's own among them) is not a key unless it is one of them", async () => {
    const minted = await new SignJWT({ role: "anon", iss: "supabase-demo" })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode("super-secret-jwt-token-with-at-least-32-characters-long"));
    const { session } = await signedInClient();
    for (const apikey of [minted, session.access_token, "hello", `${ANON_KEY}x`]) {
      const rest = await fetch(`${BACKEND_URL}/rest/v1/notes?select=id`, { headers: { apikey } });
      expect(rest.status).toBe(401);
      expect(await rest.json()).toEqual(INVALID_KEY);
      const auth = await fetch(`${BACKEND_URL}/auth/v1/settings`, { headers: { apikey } });
      expect(auth.status).toBe(401);
      expect(await auth.json()).toEqual(INVALID_KEY);
    }
  });
});

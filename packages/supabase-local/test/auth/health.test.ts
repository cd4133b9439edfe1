import { describe, expect, it } from "vitest";
import { authFetch, BACKEND_URL, PUBLISHABLE_KEY } from "../../../../tests/support/backend.ts";

describe("health, settings, jwks", () => {
  it("answers /health like GoTrue", async () => {
    const response = await authFetch("/health");
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ name: "GoTrue" });
  });

  it("serves an ES256 public key at /.well-known/jwks.json", async () => {
    const response = await authFetch("/.well-known/jwks.json");
    const { keys } = (await response.json()) as { keys: Array<Record<string, unknown>> };
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig" });
    expect(keys[0]).not.toHaveProperty("d");
  });

  it("reports the config in /settings", async () => {
    const body = await (await authFetch("/settings")).json();
    expect(body).toMatchObject({ disable_signup: false, mailer_autoconfirm: false });
    expect(body.external).toMatchObject({ email: true, anonymous_users: false, phone: false });
  });

  it("refuses an unknown sb_ key with the gateway's 401", async () => {
    const response = await authFetch("/settings", { key: "sb_publishable_nope" });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      message: "Invalid API key",
      hint: "Double check your Supabase `anon` or `service_role` API key.",
    });
  });

  it("answers CORS preflights for browser clients", async () => {
    const response = await fetch(`${BACKEND_URL}/auth/v1/token?grant_type=password`, {
      method: "OPTIONS",
      headers: {
        Origin: "http://localhost:5173",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers":
          "apikey, authorization, content-type, x-client-info, x-supabase-api-version",
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    expect(response.headers.get("access-control-allow-methods")).toContain("POST");
  });

  it("refuses an unknown sb_ key on the data API too", async () => {
    const response = await fetch(`${BACKEND_URL}/rest/v1/`, {
      headers: { apikey: "sb_secret_wrong" },
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ message: "Invalid API key" });
  });

  it("answers an unknown auth path with a JSON 404 in the requested error shape", async () => {
    const response = await authFetch("/nope", {
      headers: { "X-Supabase-Api-Version": "2024-01-01" },
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ code: "not_found", message: "Not Found" });
    const old = await fetch(`${BACKEND_URL}/auth/v1/nope`, {
      headers: { apikey: PUBLISHABLE_KEY },
    });
    expect(await old.json()).toEqual({ code: 404, error_code: "not_found", msg: "Not Found" });
  });
});

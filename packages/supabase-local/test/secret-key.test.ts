// Secret keys (sb_secret_…) from browsers get the hosted gateway's 401, told by a browser's
// User-Agent (and here by an Origin header); servers keep using them. The legacy service_role JWT
// is not refused from the project's own pages, as on the hosted service (from other websites it is:
// local-only.test.ts).
import { createClient } from "@supabase/supabase-js";
import { describe, expect, it } from "vitest";
import {
  BACKEND_URL,
  freshUser,
  PUBLISHABLE_KEY,
  SECRET_KEY,
  SERVICE_ROLE_KEY,
} from "../../../tests/support/backend.ts";

const CHROME =
  "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36";
const APP = "http://localhost:5173";

const refused = {
  message: "Forbidden use of secret API key in browser",
  hint: "Secret API keys can only be used in a protected environment and should never be used in a browser. Delete this secret API key immediately!",
};

const noPersist = { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false };

describe("the secret key sent by a browser", () => {
  it("is refused with the hosted 401 on the data API and Auth, in both headers", async () => {
    const { user } = await freshUser();
    const requests: Array<[string, Record<string, string>]> = [
      ["/rest/v1/notes?select=id", { apikey: SECRET_KEY }],
      ["/rest/v1/notes?select=id", { apikey: SECRET_KEY, Authorization: `Bearer ${SECRET_KEY}` }],
      [`/auth/v1/admin/users/${user.id}`, { apikey: SECRET_KEY }],
      ["/auth/v1/settings", { Authorization: `Bearer ${SECRET_KEY}` }],
    ];
    for (const [path, headers] of requests) {
      const response = await fetch(`${BACKEND_URL}${path}`, {
        headers: { ...headers, "User-Agent": CHROME },
      });
      expect(response.status).toBe(401);
      expect(response.headers.get("content-type")).toMatch(/^application\/json/);
      const text = await response.text();
      expect(JSON.parse(text)).toEqual(refused);
      expect(text).not.toContain(user.id);
    }
    // ?apikey= as well
    const query = await fetch(`${BACKEND_URL}/rest/v1/notes?select=id&apikey=${SECRET_KEY}`, {
      headers: { "User-Agent": CHROME },
    });
    expect(await query.json()).toEqual(refused);
  });

  it("supabase-js in a browser gets the error, readable across origins (CORS on the 401)", async () => {
    const browser = createClient(BACKEND_URL, SECRET_KEY, {
      auth: noPersist,
      global: { headers: { "User-Agent": CHROME, Origin: APP } },
    });
    const { data, error } = await browser.from("notes").select("id");
    expect(data).toBeNull();
    expect(error).toMatchObject(refused);
    const raw = await fetch(`${BACKEND_URL}/rest/v1/notes?select=id`, {
      headers: { apikey: SECRET_KEY, "User-Agent": CHROME, Origin: APP },
    });
    expect(raw.status).toBe(401);
    expect(raw.headers.get("access-control-allow-origin")).toBe(APP);
  });

  it("an Origin header alone is a browser too (a page may set its own User-Agent)", async () => {
    const response = await fetch(`${BACKEND_URL}/rest/v1/notes?select=id`, {
      headers: { apikey: SECRET_KEY, "User-Agent": "curl/8.5.0", Origin: APP },
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual(refused);
  });
});

describe("what keeps working", () => {
  it("servers: the secret key without a browser User-Agent or Origin", async () => {
    const { user } = await freshUser();
    const server = createClient(BACKEND_URL, SECRET_KEY, {
      auth: noPersist,
      global: { headers: { "User-Agent": "my-worker/1.0" } },
    });
    const { data, error } = await server.auth.admin.getUserById(user.id);
    expect(error).toBeNull();
    expect(data.user?.id).toBe(user.id);
    expect((await server.from("notes").select("id").limit(1)).error).toBeNull();
  });

  it("the legacy service_role JWT from a browser on the app's origin (the hosted service does not refuse it)", async () => {
    const response = await fetch(`${BACKEND_URL}/rest/v1/notes?select=id&limit=1`, {
      headers: { apikey: SERVICE_ROLE_KEY, "User-Agent": CHROME, Origin: APP },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("access-control-allow-origin")).toBe(APP);
  });

  it("the publishable key from a browser", async () => {
    const response = await fetch(`${BACKEND_URL}/auth/v1/settings`, {
      headers: { apikey: PUBLISHABLE_KEY, "User-Agent": CHROME, Origin: APP },
    });
    expect(response.status).toBe(200);
  });

  it("an unknown sb_secret_ key is still just an invalid key", async () => {
    const response = await fetch(`${BACKEND_URL}/rest/v1/notes?select=id`, {
      headers: { apikey: "sb_secret_not-the-real-one", "User-Agent": CHROME },
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      message: "Invalid API key",
      hint: "Double check your Supabase `anon` or `service_role` API key.",
    });
  });
});

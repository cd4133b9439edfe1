// The Worker's rate-limited Auth calls carry the secret key and the visitor's address
// (app/lib/auth-fetch.server.ts); nothing else ever carries the secret key. Driven through the
// real @supabase/ssr client the app builds, against the fake auth server (tests/unit/support).
import { afterEach, describe, expect, it, vi } from "vitest";
import { createAuthFetch, forwardedFor, isRateLimited } from "../../../app/lib/auth-fetch.server";
import type { SupabaseEnv } from "../../../app/lib/env.server";
import { createSupabaseServerClient } from "../../../app/lib/supabase.server";
import {
  createFakeAuthServer,
  sessionCookie,
  TEST_SUPABASE_URL,
} from "../support/fake-auth-server";

const SECRET = "sb_secret_unit_test_secret";
const PUBLISHABLE = "sb_publishable_unit_test";
const env: SupabaseEnv = { url: TEST_SUPABASE_URL, publishableKey: PUBLISHABLE, secretKey: SECRET };
const BROWSER = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 Safari/605.1";

function visitor(headers: Record<string, string> = {}) {
  return new Request("https://notes.example/sign-in", {
    method: "POST",
    headers: { "User-Agent": BROWSER, "CF-Connecting-IP": "203.0.113.7", ...headers },
  });
}

/** A fetch that keeps each outgoing request (method, URL, headers) and answers from `answer`. */
function recording(
  answer: (request: Request) => Promise<Response> = async () => Response.json({}),
) {
  const sent: Request[] = [];
  const send: typeof fetch = async (input, init) => {
    const request: Request = new Request(input, init);
    sent.push(request.clone() as Request);
    return answer(request);
  };
  return { fetch: send, sent };
}

afterEach(() => vi.restoreAllMocks());

describe("forwardedFor: the visitor's address from CF-Connecting-IP only", () => {
  const address = (headers: Record<string, string>) =>
    forwardedFor(new Request("https://notes.example/", { headers }));

  it.each([
    ["198.51.100.23", "198.51.100.23"],
    [" 198.51.100.23 ", "198.51.100.23"],
    ["2001:db8:85a3:1:2:8a2e:370:7334", "2001:db8:85a3:1::"],
    ["2001:DB8::1", "2001:db8:0:0::"],
    ["::1", "::1"],
    ["::2", "0:0:0:0::"],
    ["::ffff:192.0.2.9", "192.0.2.9"],
  ])("%s -> %s (an IPv6 address is its /64)", (header, expected) => {
    expect(address({ "CF-Connecting-IP": header })).toBe(expected);
  });

  it.each([
    "",
    "not an address",
    "203.0.113.7, 10.0.0.1",
    "999.1.1.1",
    "1.2.3",
    "fe80::1%eth0",
    "[2001:db8::1]",
    "203.0.113.7:443",
  ])("nothing for %j", (header) => {
    expect(address({ "CF-Connecting-IP": header })).toBeUndefined();
  });

  it("never falls back to X-Forwarded-For or X-Real-IP", () => {
    expect(address({ "X-Forwarded-For": "203.0.113.7", "X-Real-IP": "203.0.113.7" })).toBe(
      undefined,
    );
  });

  it("two addresses of one /64 are one visitor; the next /64 is another", () => {
    const a = address({ "CF-Connecting-IP": "2001:db8:1:2::a" });
    expect(address({ "CF-Connecting-IP": "2001:db8:1:2:ffff:ffff:ffff:ffff" })).toBe(a);
    expect(address({ "CF-Connecting-IP": "2001:db8:1:3::a" })).not.toBe(a);
  });
});

describe("isRateLimited: the calls Auth limits per address", () => {
  const auth = (path: string) => `${TEST_SUPABASE_URL}/auth/v1${path}`;
  it.each([
    ["POST", "/token?grant_type=password"],
    ["POST", "/token?grant_type=refresh_token"],
    ["POST", "/token?grant_type=pkce"],
    ["POST", "/signup"],
    ["POST", "/otp"],
    ["POST", "/magiclink"],
    ["POST", "/recover"],
    ["POST", "/resend"],
    ["POST", "/verify"],
    ["GET", "/verify?token=x&type=signup"],
    ["PUT", "/user"],
    ["POST", "/factors/3b1c/challenge"],
    ["POST", "/factors/3b1c/verify"],
    ["POST", "/factors/recovery-codes/verify"],
    ["POST", "/passkeys/authentication/options"],
  ])("%s %s is", (method, path) => {
    expect(isRateLimited(method, auth(path), TEST_SUPABASE_URL)).toBe(true);
  });

  it.each([
    ["GET", "/user"],
    ["POST", "/logout"],
    ["GET", "/.well-known/jwks.json"],
    ["POST", "/factors"],
    ["DELETE", "/factors/3b1c"],
    ["GET", "/passkeys"],
    ["POST", "/passkeys/registration/options"],
  ])("%s %s is not", (method, path) => {
    expect(isRateLimited(method, auth(path), TEST_SUPABASE_URL)).toBe(false);
  });

  it("nor is anything outside the project's /auth/v1", () => {
    for (const url of [
      `${TEST_SUPABASE_URL}/rest/v1/token`,
      `${TEST_SUPABASE_URL}/storage/v1/object/sign/token`,
      "http://elsewhere.test/auth/v1/token",
    ]) {
      expect(isRateLimited("POST", url, TEST_SUPABASE_URL)).toBe(false);
    }
  });
});

describe("createAuthFetch", () => {
  it("a rate-limited call: the secret key (apikey and key-as-bearer), the visitor's address, no User-Agent", async () => {
    const { fetch, sent } = recording();
    await createAuthFetch(
      fetch,
      env,
      visitor(),
    )(`${TEST_SUPABASE_URL}/auth/v1/token?grant_type=password`, {
      method: "POST",
      headers: {
        apikey: PUBLISHABLE,
        Authorization: `Bearer ${PUBLISHABLE}`,
        "User-Agent": BROWSER,
        "X-Forwarded-For": "192.0.2.1",
        "Sb-Forwarded-For": "192.0.2.2",
      },
      body: "{}",
    });
    const [request] = sent;
    expect(request?.headers.get("apikey")).toBe(SECRET);
    expect(request?.headers.get("Authorization")).toBe(`Bearer ${SECRET}`);
    expect(request?.headers.get("Sb-Forwarded-For")).toBe("203.0.113.7");
    expect(request?.headers.get("User-Agent")).toBeNull();
    expect(request?.headers.get("X-Forwarded-For")).toBeNull();
    expect(await request?.text()).toBe("{}");
  });

  it("keeps a user's JWT as the Authorization of a rate-limited call", async () => {
    const { fetch, sent } = recording();
    await createAuthFetch(
      fetch,
      env,
      visitor(),
    )(`${TEST_SUPABASE_URL}/auth/v1/user`, {
      method: "PUT",
      headers: { apikey: PUBLISHABLE, Authorization: "Bearer eyJ.user.jwt" },
    });
    expect(sent[0]?.headers.get("apikey")).toBe(SECRET);
    expect(sent[0]?.headers.get("Authorization")).toBe("Bearer eyJ.user.jwt");
  });

  it("sends no Sb-Forwarded-For when CF-Connecting-IP is absent, even with X-Forwarded-For", async () => {
    const { fetch, sent } = recording();
    const request = new Request("https://notes.example/", {
      headers: { "X-Forwarded-For": "203.0.113.7" },
    });
    await createAuthFetch(
      fetch,
      env,
      request,
    )(`${TEST_SUPABASE_URL}/auth/v1/otp`, {
      method: "POST",
      headers: { apikey: PUBLISHABLE },
    });
    expect(sent[0]?.headers.get("apikey")).toBe(SECRET);
    expect(sent[0]?.headers.has("Sb-Forwarded-For")).toBe(false);
  });

  it("leaves every other call as it came", async () => {
    const { fetch, sent } = recording();
    const authFetch = createAuthFetch(fetch, env, visitor());
    const headers = { apikey: PUBLISHABLE, "User-Agent": BROWSER };
    await authFetch(`${TEST_SUPABASE_URL}/auth/v1/user`, { headers });
    await authFetch(`${TEST_SUPABASE_URL}/rest/v1/notes?select=*`, { headers });
    for (const request of sent) {
      expect(request.headers.get("apikey")).toBe(PUBLISHABLE);
      expect(request.headers.get("User-Agent")).toBe(BROWSER);
      expect(request.headers.has("Sb-Forwarded-For")).toBe(false);
    }
  });

  it("without a secret key works as before and warns once per isolate", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const { fetch, sent } = recording();
    const plain: SupabaseEnv = { url: TEST_SUPABASE_URL, publishableKey: PUBLISHABLE };
    for (let i = 0; i < 3; i++) {
      await createAuthFetch(
        fetch,
        plain,
        visitor(),
      )(`${TEST_SUPABASE_URL}/auth/v1/token`, {
        method: "POST",
        headers: { apikey: PUBLISHABLE, "User-Agent": BROWSER },
      });
    }
    expect(sent.map((request) => request.headers.get("apikey"))).toEqual(
      Array(3).fill(PUBLISHABLE),
    );
    expect(sent[0]?.headers.get("User-Agent")).toBe(BROWSER);
    expect(sent[0]?.headers.has("Sb-Forwarded-For")).toBe(false);
    // (another test file of this isolate may have warned already: at most once, never the key)
    expect(warn.mock.calls.length).toBeLessThanOrEqual(1);
    expect(JSON.stringify(warn.mock.calls)).not.toContain("sb_secret_");
  });
});

describe("the request's @supabase/ssr client", () => {
  it("carries the secret key on the sign-in only: data, Storage and Realtime keep the publishable key and the user's token", async () => {
    const server = await createFakeAuthServer();
    const { fetch, sent } = recording(async (request) => {
      const url = new URL(request.url);
      if (url.pathname.startsWith("/auth/v1/")) return server.fetch(request.url, request);
      return Response.json([]);
    });
    const session = await server.session();
    const { supabase } = createSupabaseServerClient(
      new Request("https://notes.example/", {
        headers: {
          "User-Agent": BROWSER,
          "CF-Connecting-IP": "203.0.113.7",
          Cookie: sessionCookie(session),
        },
      }),
      env,
      { fetch },
    );
    await supabase.auth.signInWithPassword({ email: "ada@example.com", password: "pw" });
    await supabase.from("notes").select("id");
    await supabase.rpc("list_my_sessions");
    await supabase.storage.from("attachments").list("a");
    await supabase.auth.getUser();

    const token = sent.find((request) => new URL(request.url).pathname === "/auth/v1/token");
    expect(token?.headers.get("apikey")).toBe(SECRET);
    expect(token?.headers.get("Sb-Forwarded-For")).toBe("203.0.113.7");
    const others = sent.filter((request) => request !== token);
    expect(others.map((request) => new URL(request.url).pathname)).toEqual(
      expect.arrayContaining(["/rest/v1/notes", "/rest/v1/rpc/list_my_sessions", "/auth/v1/user"]),
    );
    expect(others.some((request) => request.url.includes("/storage/v1/"))).toBe(true);
    for (const request of others) {
      const headers = [...request.headers].map(([name, value]) => `${name}: ${value}`).join("\n");
      expect(headers, request.url).not.toContain(SECRET);
      expect(request.headers.get("apikey"), request.url).toBe(PUBLISHABLE);
    }
    // Realtime (opened by the browser, never by the Worker) is set up with the publishable key.
    const realtime = supabase.realtime as unknown as {
      apiKey?: string;
      params?: { apikey?: string };
    };
    expect(realtime.apiKey ?? realtime.params?.apikey).toBe(PUBLISHABLE);
    expect(JSON.stringify(realtime.params ?? {})).not.toContain(SECRET);
  });
});

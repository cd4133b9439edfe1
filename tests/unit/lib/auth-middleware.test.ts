import { describe, expect, it } from "vitest";
import {
  createFakeAuthServer,
  STORAGE_KEY,
  sessionCookie,
  TEST_USER,
} from "../support/fake-auth-server";
import { backendCalls, page, runMiddleware, testEnv } from "../support/run-middleware";

/** A backend that never answers: the call ends only when it is aborted. */
const hangingFetch: typeof fetch = (_input, init) =>
  new Promise((_resolve, reject) =>
    init?.signal?.addEventListener("abort", () => reject(init.signal?.reason)),
  );

describe("auth middleware", () => {
  it("makes no round trip for a signed-out request", async () => {
    const server = await createFakeAuthServer();
    const { response, auth } = await runMiddleware(page(), { fetch: server.fetch });
    expect(auth.claims).toBeNull();
    expect(auth.backendUnreachable).toBe(false);
    expect(server.calls).toEqual([]);
    expect(backendCalls(response)).toEqual({ auth: 0, rest: 0 });
    expect(response.headers.get("Server-Timing")).toContain("check=0 seq=0");
    expect(response.headers.get("Set-Cookie")).toBeNull();
  });

  it("makes the client when a loader first asks for it, and puts what it writes on the response", async () => {
    const server = await createFakeAuthServer();
    const { response, auth } = await runMiddleware(page(), {
      fetch: server.fetch,
      loader: async ({ supabase }) => {
        const { error } = await supabase.auth.signInWithPassword({
          email: TEST_USER.email,
          password: "a password",
        });
        expect(error).toBeNull();
      },
    });
    expect(auth.claims).toBeNull();
    expect(server.calls).toEqual(["/auth/v1/token"]);
    expect(backendCalls(response)).toEqual({ auth: 1, rest: 0 });
    expect(response.headers.get("Set-Cookie")).toMatch(new RegExp(`^${STORAGE_KEY}=base64-`));
    expect(response.headers.get("Cache-Control")).toMatch(/no-store/);
  });

  it("reads a session cookie in chunks, and no other project's", async () => {
    const server = await createFakeAuthServer();
    const [name, value] = sessionCookie(await server.session()).split(/=(.*)/s) as [string, string];
    const half = Math.ceil(value.length / 2);
    const chunked = `${name}.0=${value.slice(0, half)}; ${name}.1=${value.slice(half)}`;
    expect((await runMiddleware(page(chunked), { fetch: server.fetch })).auth.claims?.sub).toBe(
      TEST_USER.id,
    );
    const otherProject = `sb-elsewhere-auth-token=${value}; ${name}-code-verifier=abc`;
    const { auth } = await runMiddleware(page(otherProject), { fetch: server.fetch });
    expect(auth.claims).toBeNull();
    expect(server.calls).toEqual(["/auth/v1/.well-known/jwks.json"]);
  });

  it("hands a valid session's verified claims to the loader", async () => {
    const server = await createFakeAuthServer();
    const cookie = sessionCookie(await server.session());
    const { auth, response } = await runMiddleware(page(cookie), { fetch: server.fetch });
    expect(auth.claims?.sub).toBe(TEST_USER.id);
    expect(auth.claims?.email).toBe(TEST_USER.email);
    expect(auth.claims?.role).toBe("authenticated");
    // Signed-in pages are never stored by shared caches; nothing needed rewriting.
    expect(response.headers.get("Cache-Control")).toBe("private, no-store");
    expect(response.headers.get("Set-Cookie")).toBeNull();
  });

  it("verifies a warm signed-in request locally: the JWKS survives across per-request clients", async () => {
    const server = await createFakeAuthServer();
    const cookie = sessionCookie(await server.session());
    const first = await runMiddleware(page(cookie), { fetch: server.fetch });
    expect(first.auth.claims?.sub).toBe(TEST_USER.id);
    const callsAfterFirst = server.calls.length;
    expect(callsAfterFirst).toBeLessThanOrEqual(1); // at most one JWKS fetch (cold isolate)

    for (let i = 0; i < 3; i++) {
      const warm = await runMiddleware(page(cookie), { fetch: server.fetch });
      expect(warm.auth.claims?.sub).toBe(TEST_USER.id);
      expect(backendCalls(warm.response)).toEqual({ auth: 0, rest: 0 });
    }
    expect(server.calls.length).toBe(callsAfterFirst);
  });

  it.each([
    ["not base64", `${STORAGE_KEY}=base64-%%%not-base64%%%`],
    ["not JSON", `${STORAGE_KEY}=base64-bm90IGpzb24`],
    ["a JSON string instead of a session", `${STORAGE_KEY}="just a string"`],
    ["an empty chunk", `${STORAGE_KEY}.0=`],
  ])("treats a malformed cookie (%s) as signed out", async (_name, cookie) => {
    const server = await createFakeAuthServer();
    const { auth } = await runMiddleware(page(cookie), { fetch: server.fetch });
    expect(auth.claims).toBeNull();
  });

  it("treats a truncated token as signed out", async () => {
    const server = await createFakeAuthServer();
    const session = await server.session();
    const truncated = { ...session, access_token: session.access_token.slice(0, -20) };
    const { auth } = await runMiddleware(page(sessionCookie(truncated)), { fetch: server.fetch });
    expect(auth.claims).toBeNull();
  });

  it("treats a token signed by another key with the same kid as signed out (forged)", async () => {
    const kid = crypto.randomUUID();
    const real = await createFakeAuthServer({ kid });
    const forger = await createFakeAuthServer({ kid });
    const forged = await forger.session();
    const { auth } = await runMiddleware(page(sessionCookie(forged)), { fetch: real.fetch });
    expect(auth.claims).toBeNull();
  });

  it("treats a token with a tampered payload as signed out", async () => {
    const server = await createFakeAuthServer();
    const session = await server.session();
    const [header, , signature] = session.access_token.split(".");
    const payload = btoa(JSON.stringify({ sub: "someone-else", role: "service_role", exp: 9e9 }))
      .replaceAll("=", "")
      .replaceAll("+", "-")
      .replaceAll("/", "_");
    const tampered = { ...session, access_token: `${header}.${payload}.${signature}` };
    const { auth } = await runMiddleware(page(sessionCookie(tampered)), { fetch: server.fetch });
    expect(auth.claims).toBeNull();
  });

  it("refreshes an expired session and puts the new cookies on a no-store response", async () => {
    const server = await createFakeAuthServer();
    const expired = await server.session({ expiresIn: -60 });
    const { auth, response } = await runMiddleware(page(sessionCookie(expired)), {
      fetch: server.fetch,
    });
    expect(server.calls).toContain("/auth/v1/token");
    expect(auth.claims?.sub).toBe(TEST_USER.id);
    // the session check's round trips, counted apart from the page's (npm run bench's budget)
    expect(response.headers.get("Server-Timing")).toMatch(/check=[1-9]\d* seq=[1-9]/);
    const setCookie = response.headers.get("Set-Cookie") ?? "";
    expect(setCookie).toContain(`${STORAGE_KEY}=base64-`);
    expect(setCookie).toMatch(/Path=\//);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(setCookie).toMatch(/Max-Age=34560000/);
    expect(setCookie).not.toMatch(/HttpOnly/i);
    expect(response.headers.get("Cache-Control")).toMatch(/private/);
    expect(response.headers.get("Cache-Control")).toMatch(/no-store/);
  });

  it("clears the cookies of a session whose refresh token is rejected", async () => {
    const server = await createFakeAuthServer({ refreshable: false });
    const expired = await server.session({ expiresIn: -60 });
    const { auth, response } = await runMiddleware(page(sessionCookie(expired)), {
      fetch: server.fetch,
    });
    expect(auth.claims).toBeNull();
    expect(auth.backendUnreachable).toBe(false);
    expect(response.headers.get("Set-Cookie")).toMatch(new RegExp(`${STORAGE_KEY}=; Max-Age=0`));
    expect(response.headers.get("Cache-Control")).toMatch(/no-store/);
  });

  it("marks Secure cookies on https", async () => {
    const server = await createFakeAuthServer();
    const expired = await server.session({ expiresIn: -60 });
    const { response } = await runMiddleware(page(sessionCookie(expired), "https://app.test/"), {
      fetch: server.fetch,
    });
    expect(response.headers.get("Set-Cookie")).toMatch(/Secure/);
  });

  it("gives up within the deadline when the backend is down, as signed out", async () => {
    const server = await createFakeAuthServer();
    const expired = await server.session({ expiresIn: -60 });
    const refused: typeof fetch = () => Promise.reject(new TypeError("fetch failed"));
    const started = Date.now();
    const { auth } = await runMiddleware(page(sessionCookie(expired)), { fetch: refused });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(auth.claims).toBeNull();
    expect(auth.backendUnreachable).toBe(true);
  });

  it("gives up within the deadline when the backend hangs", async () => {
    const server = await createFakeAuthServer();
    const expired = await server.session({ expiresIn: -60 });
    const started = Date.now();
    const { auth } = await runMiddleware(page(sessionCookie(expired)), { fetch: hangingFetch });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(auth.claims).toBeNull();
    expect(auth.backendUnreachable).toBe(true);
  });

  it("waits as long as SUPABASE_TIMEOUT_MS says: a backend slower than the default deadline answers", async () => {
    const server = await createFakeAuthServer();
    const expired = await server.session({ expiresIn: -60 });
    // answers after 1.8 s, past the default deadline (1.5 s), or gives up when the call is aborted
    const slow: typeof fetch = (input, init) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => resolve(server.fetch(input, init)), 1800);
        init?.signal?.addEventListener("abort", () => {
          clearTimeout(timer);
          reject(init.signal?.reason);
        });
      });
    const patient = { ...testEnv, SUPABASE_TIMEOUT_MS: "5000" } as unknown as Env;
    const waited = await runMiddleware(page(sessionCookie(expired)), { fetch: slow, env: patient });
    expect(waited.auth.backendUnreachable).toBe(false);
    expect(waited.auth.claims?.sub).toBe(expired.user.id);
    const asDeployed = await runMiddleware(page(sessionCookie(expired)), { fetch: slow });
    expect(asDeployed.auth.backendUnreachable).toBe(true);
  }, 15_000);

  it("gives up sooner when SUPABASE_TIMEOUT_MS is shorter than the default", async () => {
    const server = await createFakeAuthServer();
    const expired = await server.session({ expiresIn: -60 });
    const hasty = { ...testEnv, SUPABASE_TIMEOUT_MS: "200" } as unknown as Env;
    const started = Date.now();
    const { auth } = await runMiddleware(page(sessionCookie(expired)), {
      fetch: hangingFetch,
      env: hasty,
    });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(auth.backendUnreachable).toBe(true);
  });

  it("puts cookies written later in the request (e.g. by an action signing out) on the response", async () => {
    const server = await createFakeAuthServer();
    const cookie = sessionCookie(await server.session());
    const { response } = await runMiddleware(page(cookie), {
      fetch: server.fetch,
      loader: async ({ supabase }) => {
        await supabase.auth.signOut({ scope: "local" });
      },
    });
    expect(response.headers.get("Set-Cookie")).toMatch(new RegExp(`${STORAGE_KEY}=; Max-Age=0`));
    expect(response.headers.get("Cache-Control")).toMatch(/no-store/);
  });
});

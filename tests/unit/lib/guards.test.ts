import type { SupabaseClient } from "@supabase/supabase-js";
import { RouterContextProvider } from "react-router";
import { describe, expect, it, vi } from "vitest";
import { authContext } from "../../../app/lib/auth.server";
import { requireFreshUser, requireUser, SIGN_IN_PATH } from "../../../app/lib/guards.server";
import { MFA_PATH } from "../../../app/lib/next-path";
import { createFakeAuthServer, sessionCookie, TEST_USER } from "../support/fake-auth-server";
import { page, runMiddleware } from "../support/run-middleware";

function contextWith(
  claims: Record<string, unknown> | null,
  nextLevel: "aal1" | "aal2" | null = null,
) {
  const context = new RouterContextProvider();
  context.set(authContext, {
    supabase: {} as SupabaseClient,
    claims: claims as never,
    backendUnreachable: false,
    nextLevel,
  });
  return context;
}

function thrownBy(fn: () => unknown): Response | { data: unknown; init: ResponseInit | null } {
  try {
    fn();
  } catch (error) {
    return error as Response;
  }
  throw new Error("expected a throw");
}

describe("requireUser", () => {
  it("returns the claims of a signed-in user", () => {
    const auth = requireUser(new Request("http://app.test/notes"), contextWith({ sub: "u1" }));
    expect(auth.claims.sub).toBe("u1");
  });

  it("redirects a signed-out visitor to sign in, remembering where they were going", () => {
    let thrown: unknown;
    try {
      requireUser(new Request("http://app.test/notes/7?tab=a"), contextWith(null));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(Response);
    const response = thrown as Response;
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get("Location") ?? "", "http://app.test");
    expect(location.pathname).toBe(SIGN_IN_PATH);
    expect(location.searchParams.get("next")).toBe("/notes/7?tab=a");
    expect(response.headers.get("Cache-Control")).toBe("private, no-store");
  });

  it.each([
    ["//evil.example/notes", "//evil.example/notes"],
    ["/.//evil.example", "/.//evil.example"],
    ["/%2F%2Fevil.example", "/%2F%2Fevil.example"],
  ])("a request path that would leave the site (%s) is not kept as next", (_name, path) => {
    const request = new Request(`http://app.test${path}`);
    // The request's own path is what a guard sends back to: it goes through the sanitiser too.
    const thrown = thrownBy(() => requireUser(request, contextWith(null))) as Response;
    expect(thrown.headers.get("Location")).toBe(SIGN_IN_PATH);
  });

  it("a single-fetch .data request comes back to its page, not the data URL", () => {
    const request = new Request("http://app.test/notes/7.data?tab=a&_routes=routes%2Fnotes");
    const thrown = thrownBy(() => requireUser(request, contextWith(null))) as Response;
    expect(thrown.headers.get("Location")).toBe(`${SIGN_IN_PATH}?next=%2Fnotes%2F7%3Ftab%3Da`);
  });
});

describe("requireUser and the second factor", () => {
  it("lets an aal1 session through when the user has no verified factor", () => {
    const auth = requireUser(
      new Request("http://app.test/notes"),
      contextWith({ sub: "u1", aal: "aal1" }, "aal1"),
    );
    expect(auth.claims.sub).toBe("u1");
  });

  it("lets an aal2 session through", () => {
    const auth = requireUser(
      new Request("http://app.test/notes"),
      contextWith({ sub: "u1", aal: "aal2" }, "aal2"),
    );
    expect(auth.claims.aal).toBe("aal2");
  });

  it("sends a page request of an aal1 session that owes its factor to /mfa?next=…", () => {
    const thrown = thrownBy(() =>
      requireUser(
        new Request("http://app.test/account/security?tab=1"),
        contextWith({ sub: "u1", aal: "aal1" }, "aal2"),
      ),
    ) as Response;
    expect(thrown.status).toBe(302);
    const location = new URL(thrown.headers.get("Location") ?? "", "http://app.test");
    expect(location.pathname).toBe(MFA_PATH);
    expect(location.searchParams.get("next")).toBe("/account/security?tab=1");
    expect(thrown.headers.get("Cache-Control")).toBe("private, no-store");
  });

  it("refuses a POST of such a session with a 403 (the action never runs)", () => {
    const thrown = thrownBy(() =>
      requireUser(
        new Request("http://app.test/account/security", { method: "POST" }),
        contextWith({ sub: "u1", aal: "aal1" }, "aal2"),
      ),
    ) as { data: { code: string; next: string }; init: ResponseInit | null };
    expect(thrown.init?.status).toBe(403);
    expect(thrown.data.code).toBe("insufficient_aal");
    expect(thrown.data.next).toBe("/mfa?next=%2Faccount%2Fsecurity");
  });

  it("a single-fetch .data request names its page in next", () => {
    const thrown = thrownBy(() =>
      requireUser(
        new Request("http://app.test/account/security.data?_routes=routes%2Faccount"),
        contextWith({ sub: "u1", aal: "aal1" }, "aal2"),
      ),
    ) as Response;
    const location = new URL(thrown.headers.get("Location") ?? "", "http://app.test");
    expect(location.searchParams.get("next")).toBe("/account/security");
  });
});

describe("requireFreshUser when the auth server's answer does not come", () => {
  /** The fake auth server, with GET /auth/v1/user failing before any answer `failures` times. */
  async function network(failures: number) {
    const server = await createFakeAuthServer();
    let failed = 0;
    const fetch: typeof globalThis.fetch = (input, init) => {
      const path = new URL(input instanceof Request ? input.url : String(input)).pathname;
      if (path !== "/auth/v1/user") return server.fetch(input, init);
      if (failed++ < failures) return Promise.reject(new TypeError("Network connection lost."));
      return Promise.resolve(Response.json(TEST_USER));
    };
    return { fetch, cookie: sessionCookie(await server.session()) };
  }

  async function freshUserOf(failures: number) {
    const { fetch, cookie } = await network(failures);
    const request = page(cookie, "http://app.test/account/sessions");
    let outcome: unknown;
    await runMiddleware(request, {
      fetch,
      loader: async (_auth, context) => {
        outcome = await requireFreshUser(request, context).catch((thrown: unknown) => thrown);
      },
    });
    return outcome;
  }

  it("a connection lost once: the read goes out again and the page gets its user", async () => {
    const outcome = (await freshUserOf(1)) as { user?: { id: string } };
    expect(outcome.user?.id).toBe(TEST_USER.id);
  });

  it("lost twice: a 503 that names the sign-in service, in title and code, and the log says why", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const outcome = (await freshUserOf(2)) as { data: { code: string }; init: ResponseInit };
    expect(logged).toHaveBeenCalledWith(
      "auth: the user could not be read",
      expect.objectContaining({ name: "AuthRetryableFetchError" }),
    );
    logged.mockRestore();
    expect(outcome.init.status).toBe(503);
    expect(outcome.init.statusText).toBe("Sign-in service unavailable");
    expect(outcome.data.code).toBe("backend_unreachable");
  });
});

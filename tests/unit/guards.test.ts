import type { SupabaseClient } from "@supabase/supabase-js";
import { RouterContextProvider } from "react-router";
import { describe, expect, it } from "vitest";
import { authContext } from "../../app/lib/auth.server";
import { requireUser, SIGN_IN_PATH } from "../../app/lib/guards.server";

function contextWith(claims: Record<string, unknown> | null) {
  const context = new RouterContextProvider();
  context.set(authContext, {
    supabase: {} as SupabaseClient,
    claims: claims as never,
    backendUnreachable: false,
  });
  return context;
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
});

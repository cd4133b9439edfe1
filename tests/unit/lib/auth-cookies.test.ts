import { describe, expect, it } from "vitest";
import {
  AuthCookieJar,
  authCookieOptions,
  hasSessionCookie,
  readRequestCookies,
} from "../../../app/lib/auth-cookies.server";

describe("readRequestCookies", () => {
  it("returns every cookie of the Cookie header, decoded", () => {
    const request = new Request("http://app.test/", {
      headers: { Cookie: "sb-x-auth-token=base64-abc; theme=dark%20blue; empty=" },
    });
    expect(readRequestCookies(request)).toEqual([
      { name: "sb-x-auth-token", value: "base64-abc" },
      { name: "theme", value: "dark blue" },
      { name: "empty", value: "" },
    ]);
  });

  it("returns nothing without a Cookie header", () => {
    expect(readRequestCookies(new Request("http://app.test/"))).toEqual([]);
  });

  it("answers each call of a request alike, though a caller changes the list it was given", () => {
    // Parsed once per request: what one caller does with its list never reaches the next.
    const request = new Request("http://app.test/", { headers: { Cookie: "a=1; b=2" } });
    const first = readRequestCookies(request);
    first.pop();
    first.push({ name: "forged", value: "x" });
    expect(readRequestCookies(request)).toEqual([
      { name: "a", value: "1" },
      { name: "b", value: "2" },
    ]);
    expect(
      readRequestCookies(new Request("http://app.test/", { headers: { Cookie: "c=3" } })),
    ).toEqual([{ name: "c", value: "3" }]);
  });
});

describe("hasSessionCookie", () => {
  const has = (cookie: string | undefined, url = "https://abcd.supabase.co") =>
    hasSessionCookie(
      new Request("http://app.test/", { headers: cookie === undefined ? {} : { Cookie: cookie } }),
      url,
    );

  it("finds the project's session cookie, whole or in chunks", () => {
    expect(has("sb-abcd-auth-token=base64-x")).toBe(true);
    expect(has("theme=dark; sb-abcd-auth-token.0=base64-x; sb-abcd-auth-token.1=y")).toBe(true);
    expect(has("sb-127-auth-token=base64-x", "http://127.0.0.1:54321")).toBe(true);
  });

  it("ignores other cookies: another project's, the PKCE verifier, none at all", () => {
    expect(has(undefined)).toBe(false);
    expect(has("theme=dark")).toBe(false);
    expect(has("sb-other-auth-token=base64-x")).toBe(false);
    expect(has("sb-abcd-auth-token-code-verifier=abc")).toBe(false);
    expect(has("sb-abcd-auth-tokenx=base64-x")).toBe(false);
  });

  it("reads a malformed or oversized Cookie header without throwing", () => {
    expect(has("sb-abcd-auth-token")).toBe(false);
    expect(has("=;;;=; %E0%A4%A=%")).toBe(false);
    expect(has(`${"x".repeat(100_000)}=1`)).toBe(false);
    expect(has("sb-abcd-auth-token=%ZZ%")).toBe(true);
    expect(has("a=b; sb-abcd-auth-token.0=%; c")).toBe(true);
  });
});

describe("authCookieOptions", () => {
  it("follows the product spec: path /, Lax, script-readable, 400 days", () => {
    expect(authCookieOptions(false)).toMatchObject({
      path: "/",
      sameSite: "lax",
      httpOnly: false,
      maxAge: 400 * 24 * 60 * 60,
      secure: false,
    });
    expect(authCookieOptions(true).secure).toBe(true);
  });
});

describe("AuthCookieJar", () => {
  it("leaves a response alone when nothing was set", () => {
    const headers = new Headers({ "Cache-Control": "public, max-age=60" });
    new AuthCookieJar().applyTo(headers);
    expect(headers.get("Set-Cookie")).toBeNull();
    expect(headers.get("Cache-Control")).toBe("public, max-age=60");
  });

  it("writes each cookie once (last write wins) with the cache headers @supabase/ssr passes", () => {
    const jar = new AuthCookieJar();
    const options = authCookieOptions(false);
    jar.setAll([{ name: "a", value: "1", options }], {
      "Cache-Control": "private, no-cache, no-store, must-revalidate, max-age=0",
      Expires: "0",
    });
    jar.setAll(
      [
        { name: "a", value: "2", options },
        { name: "b", value: "", options: { ...options, maxAge: 0 } },
      ],
      {},
    );
    const headers = new Headers();
    jar.applyTo(headers);
    expect(headers.getSetCookie()).toEqual([
      "a=2; Max-Age=34560000; Path=/; SameSite=Lax",
      "b=; Max-Age=0; Path=/; SameSite=Lax",
    ]);
    expect(headers.get("Cache-Control")).toBe(
      "private, no-cache, no-store, must-revalidate, max-age=0",
    );
    expect(headers.get("Expires")).toBe("0");
  });

  it("forces private, no-store even when no cache headers were passed and the route set its own", () => {
    const jar = new AuthCookieJar();
    jar.setAll([{ name: "a", value: "1", options: authCookieOptions(false) }]);
    const headers = new Headers({ "Cache-Control": "public, max-age=3600" });
    jar.applyTo(headers);
    expect(headers.get("Cache-Control")).toBe("private, no-store");
  });
});

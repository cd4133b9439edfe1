import { createServerClient, stringToBase64URL } from "@supabase/ssr";
import { describe, expect, it, vi } from "vitest";
import {
  AuthCookieJar,
  authCookieOptions,
  hasSessionCookie,
  readRequestCookies,
  readStorageCookies,
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

describe("readStorageCookies", () => {
  const URL_ = "https://abcd.supabase.co";
  const SESSION = "sb-abcd-auth-token";
  // A session as auth-js stores it, with text outside ASCII (a name with accents, an emoji).
  const session = {
    access_token: "header.payload.signature",
    refresh_token: "r3fr3sh",
    expires_at: 4_102_444_800,
    token_type: "bearer",
    user: { id: "u1", user_metadata: { name: "Zoë Ångström 🦊" } },
  };
  const encoded = `base64-${stringToBase64URL(JSON.stringify(session))}`;
  const requestWith = (cookie: string) =>
    new Request("http://app.test/", { headers: { Cookie: cookie } });

  /** The session @supabase/ssr's server client reads from these cookies (null when none). */
  async function sessionRead(cookies: { name: string; value: string }[]) {
    const client = createServerClient(URL_, "publishable", {
      cookies: { getAll: () => cookies, setAll: () => undefined },
    });
    (client.auth as unknown as { suppressGetSessionWarning: boolean }).suppressGetSessionWarning =
      true;
    const { data } = await client.auth.getSession();
    return data.session;
  }

  it("hands over the whole session cookie decoded, which @supabase/ssr reads as the same session", async () => {
    const request = requestWith(`${SESSION}=${encoded}; theme=dark`);
    const cookies = readStorageCookies(request, URL_);
    expect(cookies).toEqual([
      { name: SESSION, value: JSON.stringify(session) },
      { name: "theme", value: "dark" },
    ]);
    const read = await sessionRead(cookies);
    expect(read?.user.user_metadata.name).toBe("Zoë Ångström 🦊");
    expect(read).toEqual(await sessionRead(readRequestCookies(request)));
  });

  it("passes on as they came: chunks, other projects' and other cookies, and values it cannot decode cleanly", async () => {
    const half = Math.floor(encoded.length / 2);
    const cases = [
      // chunks of a large session (@supabase/ssr joins them, then decodes)
      `${SESSION}.0=${encoded.slice(0, half)}; ${SESSION}.1=${encoded.slice(half)}`,
      // another project's session, a PKCE verifier of this one
      `sb-other-auth-token=${encoded}; ${SESSION}-code-verifier=${encoded}`,
      // a character outside base64url; bytes that are not UTF-8; text that is not JSON
      `${SESSION}=${encoded.slice(0, 20)}%2B${encoded.slice(20)}`,
      `${SESSION}=base64-${btoa("{\xff\xfe}").replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "")}`,
      `${SESSION}=base64-${stringToBase64URL('{"access_token": ')}`,
      // the raw form
      `${SESSION}=${encodeURIComponent(JSON.stringify(session))}`,
    ];
    // @supabase/ssr warns as it treats the broken ones as absent
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    for (const cookie of cases) {
      const request = requestWith(cookie);
      expect(readStorageCookies(request, URL_), cookie).toEqual(readRequestCookies(request));
      expect(await sessionRead(readStorageCookies(request, URL_)), cookie).toEqual(
        await sessionRead(readRequestCookies(request)),
      );
    }
    warn.mockRestore();
  });

  it("leaves out a session in more chunks or characters than @supabase/ssr ever writes: no session", async () => {
    // @supabase/ssr finds each chunk by scanning every cookie, so thousands of them cost the
    // Worker time quadratic in the header; a real session is a few chunks of 3,180 characters
    const chunks = (value: string, count: number) => {
      const size = Math.ceil(value.length / count);
      return Array.from(
        { length: count },
        (_, i) => `${SESSION}.${i}=${value.slice(i * size, (i + 1) * size)}`,
      ).join("; ");
    };
    const big = `base64-${stringToBase64URL(JSON.stringify({ ...session, user: { ...session.user, user_metadata: { notes: "x".repeat(40_000) } } }))}`;
    for (const cookie of [chunks(encoded, 13), chunks(big, 12), `${SESSION}=${big}; theme=dark`]) {
      const request = requestWith(cookie);
      // @supabase/ssr itself would read a session from them
      expect(await sessionRead(readRequestCookies(request))).not.toBeNull();
      expect(readStorageCookies(request, URL_).filter((c) => c.name.startsWith(SESSION))).toEqual(
        [],
      );
      expect(await sessionRead(readStorageCookies(request, URL_))).toBeNull();
    }
    // as many chunks as a large real session has still read as that session
    const request = requestWith(chunks(encoded, 4));
    expect(await sessionRead(readStorageCookies(request, URL_))).toEqual(
      await sessionRead(readRequestCookies(request)),
    );
  });

  it("decodes once per request, and no caller's changes reach the next", () => {
    const request = requestWith(`${SESSION}=${encoded}`);
    const first = readStorageCookies(request, URL_);
    first[0] = { name: SESSION, value: "forged" };
    expect(readStorageCookies(request, URL_)).toEqual([
      { name: SESSION, value: JSON.stringify(session) },
    ]);
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

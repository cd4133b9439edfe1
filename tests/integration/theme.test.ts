// The colour theme: chosen with a plain form (no JavaScript), kept in a cookie, and on <html> in
// the very first byte of every page, so there is nothing to flash and no script to run.
import { describe, expect, it } from "vitest";
import { backendCalls, get } from "./support/app";
import { signedInBrowser } from "./support/auth-flows";
import { BrowserLess } from "./support/browser-less";

/** The <html> start tag's data-theme, as the server sent it. */
function htmlTheme(body: string): string | null {
  const tag = /<html\b[^>]*>/.exec(body)?.[0] ?? "";
  return /data-theme="([^"]*)"/.exec(tag)?.[1] ?? null;
}

describe("the colour theme", () => {
  it.each([
    [undefined, "system"],
    ["theme=dark", "dark"],
    ["theme=light", "light"],
    ["theme=system", "system"],
    ["theme=purple", "system"],
    ["theme=DARK", "system"],
    ["theme=%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E", "system"],
    ["theme=dark%00", "system"],
  ])("cookie %s: the server renders data-theme=%s on <html>", async (cookie, theme) => {
    const { response, body } = await get("/", cookie);
    expect(response.status).toBe(200);
    expect(htmlTheme(body)).toBe(theme);
    expect(body).not.toContain("alert(1)");
  });

  it("the signed-out home with a theme cookie still makes no auth round trip and sets no cookie", async () => {
    const { response } = await get("/", "theme=dark");
    expect(backendCalls(response)).toEqual({ auth: 0, rest: 0 });
    expect(response.headers.get("Set-Cookie")).toBeNull();
  });

  it("the switcher is a plain form: the choice is set, remembered and shown as pressed", async () => {
    const browser = new BrowserLess();
    const page = await browser.get("/sign-in");
    expect(page.body).toMatch(
      /<form[^>]*method="post"[^>]*action="\/theme"|<form[^>]*action="\/theme"[^>]*method="post"/,
    );
    expect(page.body).toContain('name="returnTo" value="/sign-in"');
    expect(page.body).toMatch(/<button[^>]*value="system"[^>]*aria-pressed="true"/);

    const chosen = await browser.post("/theme", {
      theme: "dark",
      returnTo: "/sign-in?next=/notes",
    });
    const [hop] = chosen.redirects;
    expect(hop?.status).toBe(303);
    expect(hop?.location).toBe("/sign-in?next=/notes");
    const cookie = hop?.headers.getSetCookie().find((line) => line.startsWith("theme=")) ?? "";
    expect(cookie).toMatch(/^theme=dark;/);
    expect(cookie).toMatch(/Path=\//);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Max-Age=\d{7,}/);
    expect(hop?.headers.get("Cache-Control")).toBe("private, no-store");
    expect(htmlTheme(chosen.body)).toBe("dark");
    expect(chosen.body).toMatch(/<button[^>]*value="dark"[^>]*aria-pressed="true"/);

    const back = await browser.post("/theme", { theme: "system", returnTo: "/" });
    expect(back.redirects[0]?.headers.getSetCookie().join()).toMatch(/theme=;.*Max-Age=0/);
    expect(browser.cookies.has("theme")).toBe(false);
    expect(htmlTheme(back.body)).toBe("system");
  });

  it("an unknown theme means system, and returnTo only goes back to this site", async () => {
    const browser = new BrowserLess();
    for (const returnTo of ["https://evil.example/", "//evil.example", "/\\evil.example", ""]) {
      const visit = await browser.post("/theme", { theme: "neon", returnTo }, { follow: false });
      expect(visit.status).toBe(303);
      expect(visit.location).toBe("/");
      expect(visit.headers.getSetCookie().join()).toMatch(/theme=;.*Max-Age=0/);
    }
  });

  it("a cross-origin post cannot change it", async () => {
    const visit = await new BrowserLess().post(
      "/theme",
      { theme: "dark", returnTo: "/" },
      { origin: "https://evil.example", follow: false },
    );
    expect(visit.status).toBe(403);
    expect(visit.headers.getSetCookie()).toEqual([]);
  });

  it("signed in, the theme is on the first byte too", async () => {
    const { browser } = await signedInBrowser();
    await browser.post("/theme", { theme: "light", returnTo: "/notes" });
    expect(htmlTheme((await browser.get("/notes")).body)).toBe("light");
  });
});

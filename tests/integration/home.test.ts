import { describe, expect, it } from "vitest";
import { backendCalls, backendIsUp, get, STORAGE_KEY } from "./support/app";
import { signedInBrowser } from "./support/auth-flows";
import { seedNotes } from "./support/notes";

describe("home page through the Worker", () => {
  it("renders signed out with 200, no auth round trip, within 2 s", async () => {
    const { response, body, ms } = await get("/");
    expect(response.status).toBe(200);
    expect(body).toContain('data-testid="signed-out"');
    expect(backendCalls(response)).toEqual({ auth: 0, rest: 0 });
    expect(response.headers.get("Set-Cookie")).toBeNull();
    expect(ms).toBeLessThan(2000);
  });

  it("signed out, explains the product and its privacy and offers sign-in and sign-up", async () => {
    const { body } = await get("/");
    for (const text of ["What is stored", "row-level security", "No tracking", "Sharing"]) {
      expect(body).toContain(text);
    }
    expect(body).toMatch(/<a[^>]*href="\/sign-up"[^>]*>Create an account<\/a>/);
    expect(body).toMatch(/<a[^>]*href="\/sign-in"[^>]*>Sign in<\/a>/);
  });

  it("signed in, lists the latest notes newest first with links, in one data query", async () => {
    const { browser, user } = await signedInBrowser();
    const ids = await seedNotes(user.id, [
      { title: "Oldest", minutesAgo: 60 },
      { title: "Newest", minutesAgo: 1 },
      { title: "Archived", minutesAgo: 0, archived: true },
      ...["A", "B", "C", "D"].map((title, i) => ({ title, minutesAgo: 10 + i })),
    ]);
    const home = await browser.get("/");
    expect(home.status).toBe(200);
    const titles = [...home.body.matchAll(/data-testid="recent-note"[^]*?<a[^>]*>([^<]*)<\/a>/g)];
    expect(titles.map((m) => m[1])).toEqual(["Newest", "A", "B", "C", "D"]);
    expect(home.body).toContain(`href="/notes/${ids[1]}"`);
    expect(home.body).not.toContain("Archived");
    for (const href of ["/notes/new", "/notes", "/account/security"]) {
      expect(home.body).toContain(`href="${href}"`);
    }
    expect(home.body).not.toContain('data-testid="signed-out"');
    expect(backendCalls(new Response(null, { headers: home.headers }))).toEqual({
      auth: 0,
      rest: 1,
    });
  });

  it("signed in with no notes, offers to write the first", async () => {
    const { browser } = await signedInBrowser();
    const home = await browser.get("/");
    expect(home.body).toContain('data-testid="no-recent-notes"');
  });

  it("says the backend is unreachable exactly when it is", async () => {
    const up = await backendIsUp();
    const { body } = await get("/");
    expect(body.includes('data-testid="backend-unreachable"')).toBe(!up);
  });

  it("sends the security headers with a per-request nonce that matches the inline scripts", async () => {
    const first = await get("/");
    const second = await get("/");
    const csp = first.response.headers.get("Content-Security-Policy") ?? "";
    const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeTruthy();
    expect(csp).toContain("frame-ancestors 'none'");
    expect(second.response.headers.get("Content-Security-Policy")).not.toContain(nonce);
    const inlineScripts = [...first.body.matchAll(/<script(?![^>]*\bsrc=)([^>]*)>/g)];
    expect(inlineScripts.length).toBeGreaterThan(0);
    for (const [, attributes] of inlineScripts) expect(attributes).toContain(`nonce="${nonce}"`);
    expect(first.response.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(first.response.headers.get("Referrer-Policy")).toBe("strict-origin-when-cross-origin");
  });

  it("shows a real 404 page inside the layout for unknown URLs", async () => {
    const { response, body } = await get("/no/such/page");
    expect(response.status).toBe(404);
    expect(body).toContain("Page not found");
    expect(body).toContain("Go to the home page");
  });

  it.each([
    ["garbage", `${STORAGE_KEY}=garbage`],
    ["bad base64", `${STORAGE_KEY}=base64-%%%`],
    ["not JSON", `${STORAGE_KEY}=base64-bm90IGpzb24`],
    ["a stray chunk", `${STORAGE_KEY}.1=base64-eyJh`],
    [
      "a forged token",
      `${STORAGE_KEY}=base64-${Buffer.from(
        JSON.stringify({
          access_token: `eyJhbGciOiJFUzI1NiIsImtpZCI6ImZvcmdlZCIsInR5cCI6IkpXVCJ9.${Buffer.from(
            JSON.stringify({ sub: "x", role: "service_role", exp: 9999999999 }),
          ).toString("base64url")}.c2lnbmF0dXJl`,
          refresh_token: "nope",
          expires_at: 9999999999,
          expires_in: 3600,
          token_type: "bearer",
          user: { id: "x" },
        }),
      ).toString("base64url")}`,
    ],
  ])("renders signed out with 200 for a broken cookie (%s)", async (_name, cookie) => {
    const { response, body } = await get("/", cookie);
    expect(response.status).toBe(200);
    expect(body).toContain('data-testid="signed-out"');
  });
});

import { describe, expect, it } from "vitest";
import { defaultTemplateLink } from "../../support/inbox";
import {
  expectNoStore,
  freshUser,
  linkProblemOf,
  testId,
  waitForMessage,
} from "../support/auth-flows";
import { BrowserLess } from "../support/browser-less";

/**
 * Asks for a magic link in `browser`; returns the auth server's /verify link for it, the one a
 * project without this one's templates emails (they link to /auth/confirm), which ends here.
 */
async function magicLink(browser: BrowserLess, next = "") {
  const user = await freshUser();
  await browser.post("/sign-in", { intent: "magic-link", email: user.email, next });
  return { user, link: defaultTemplateLink(await waitForMessage(user.email, "magic_link")) };
}

describe("/auth/callback (PKCE codes from email links and OAuth)", () => {
  it("exchanges the code with this browser's verifier and carries the cookies on the redirect", async () => {
    const browser = new BrowserLess();
    const { user, link } = await magicLink(browser, "/somewhere");
    const visit = await browser.get(link);
    const callback = visit.redirects.find((hop) => hop.url.includes("/auth/callback"));
    expect(callback?.status).toBe(303);
    expect(callback?.location).toBe("/somewhere");
    expect(callback?.headers.getSetCookie().join("\n")).toMatch(/sb-127-auth-token=base64-/);
    expectNoStore(callback?.headers ?? new Headers());
    const home = await browser.get("/");
    expect(testId(home.body, "session-email")).toBe(user.email);
    // The verifier was single use: its cookie is gone.
    expect(browser.cookies.has("sb-127-auth-token-code-verifier")).toBe(false);
  });

  it("a link opened in another browser: its own page (no verifier here)", async () => {
    const { link } = await magicLink(new BrowserLess());
    const visit = await new BrowserLess().get(link);
    expect(new URL(visit.url).pathname).toBe("/auth/callback");
    expect(visit.status).toBe(400);
    expect(linkProblemOf(visit)).toBe("other-browser");
    expect(visit.body).toContain("Open the link in the browser you used");
    expect(testId(visit.body, "error-code")).toBe("pkce_code_verifier_not_found");
  });

  it("a used link (clicked twice): its own page", async () => {
    const browser = new BrowserLess();
    const { link } = await magicLink(browser);
    await browser.get(link);
    const again = await browser.get(link);
    expect(again.status).toBe(410);
    expect(linkProblemOf(again)).toBe("used");
  });

  it("a replayed callback URL (code already exchanged, signed in here): 'already used'", async () => {
    const browser = new BrowserLess();
    const { link } = await magicLink(browser);
    const first = await browser.get(link);
    const callbackUrl = first.redirects.find((hop) => hop.url.includes("/auth/callback"))?.url;
    const replay = await browser.get(callbackUrl ?? "");
    expect(replay.status).toBe(410);
    expect(linkProblemOf(replay)).toBe("used");
    expect(replay.body).toContain('href="/"');
  });

  it("an expired link reported by the auth server: its own page", async () => {
    const visit = await new BrowserLess().get(
      "/auth/callback?error=access_denied&error_code=otp_expired&error_description=Email+link+is+invalid+or+has+expired",
    );
    expect(visit.status).toBe(410);
    expect(linkProblemOf(visit)).toBe("expired");
    expect(testId(visit.body, "error-code")).toBe("otp_expired");
  });

  it("an OAuth provider that refused: its own page", async () => {
    const visit = await new BrowserLess().get("/auth/callback?error=access_denied");
    expect(visit.status).toBe(403);
    expect(linkProblemOf(visit)).toBe("denied");
  });

  it("recovery links go to /reset-password with the recovery way forward", async () => {
    const visit = await new BrowserLess().get(
      "/auth/callback?next=%2Freset-password&error_code=otp_expired",
    );
    expect(linkProblemOf(visit)).toBe("expired");
    expect(visit.body).toContain('href="/forgot-password"');
  });

  it.each([
    ["nothing", "/auth/callback"],
    ["a tampered code", "/auth/callback?code=not-a-real-code"],
    ["a huge code", `/auth/callback?code=${"x".repeat(600)}`],
  ])("%s: a clear 4xx page, never a 500", async (_name, path) => {
    const visit = await new BrowserLess().get(path);
    expect(visit.status).toBeGreaterThanOrEqual(400);
    expect(visit.status).toBeLessThan(500);
    expect(linkProblemOf(visit)).not.toBeNull();
  });

  it.each(["//evil.example/x", "/.//evil.example", "/./\\evil.example", "/%2F%2Fevil.example"])(
    "next=%s from the link stays on this site",
    async (next) => {
      const browser = new BrowserLess();
      const { link } = await magicLink(browser);
      const url = new URL(link);
      const redirectTo = new URL(url.searchParams.get("redirect_to") ?? "");
      redirectTo.searchParams.set("next", next);
      url.searchParams.set("redirect_to", redirectTo.toString());
      const visit = await browser.get(url.toString());
      const callback = visit.redirects.find((hop) => hop.url.includes("/auth/callback"));
      expect(callback?.location).toBe("/notes");
    },
  );
});

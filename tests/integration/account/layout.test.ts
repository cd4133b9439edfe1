import { describe, expect, it } from "vitest";
import { expectNoStore, signedInBrowser } from "../support/auth-flows";
import { BrowserLess } from "../support/browser-less";

describe("/account layout", () => {
  it("signed out: every account page sends to sign-in and comes back", async () => {
    for (const path of ["/account", "/account/email", "/account/security", "/account/activity"]) {
      const visit = await new BrowserLess().get(path, { follow: false });
      expect(visit.status).toBe(302);
      expect(visit.location).toBe(`/sign-in?${new URLSearchParams({ next: path })}`);
    }
  });

  it("signed in: the sections are listed and the header links to the account", async () => {
    const { browser } = await signedInBrowser();
    const page = await browser.get("/account");
    expect(page.status).toBe(200);
    expectNoStore(page.headers);
    for (const href of ["/account/email", "/account/password", "/account/security"]) {
      expect(page.body).toContain(`href="${href}"`);
    }
    const home = await browser.get("/");
    expect(home.body).toMatch(/<a[^>]*href="\/account"[^>]*>Account<\/a>/);
    const out = await new BrowserLess().get("/");
    expect(out.body).not.toContain('href="/account"');
  });
});

import { describe, expect, it } from "vitest";
import { STORAGE_KEY } from "../support/app";
import { expectNoStore, signedInBrowser } from "../support/auth-flows";
import { BrowserLess } from "../support/browser-less";
import { expireAccessToken } from "../support/session";

/** A second browser signed in as the same person. */
async function secondDevice(email: string, password: string) {
  const browser = new BrowserLess();
  await browser.post("/sign-in", { email, password });
  if (!browser.hasSession()) throw new Error("second sign-in failed");
  return browser;
}

describe("/sign-out", () => {
  it("GET shows the choice and signs nobody out", async () => {
    const { browser } = await signedInBrowser();
    const page = await browser.get("/sign-out");
    expect(page.status).toBe(200);
    expect(page.body).toContain("Sign out everywhere");
    expect(page.body).toMatch(/<form[^>]*method="post"/);
    expect(page.headers.getSetCookie()).toEqual([]);
    expect(browser.hasSession()).toBe(true);
  });

  it("POST signs this device out: cookies cleared on a no-store redirect; other devices stay", async () => {
    const { browser, email, password } = await signedInBrowser();
    const other = await secondDevice(email, password);
    const visit = await browser.post("/sign-out", { scope: "local" });
    const [hop] = visit.redirects;
    expect(hop?.status).toBe(303);
    expect(hop?.location).toBe("/");
    expect(hop?.headers.getSetCookie().join("\n")).toMatch(
      new RegExp(`${STORAGE_KEY}=;.*Max-Age=0`),
    );
    expectNoStore(hop?.headers ?? new Headers());
    expect(browser.hasSession()).toBe(false);
    expect(visit.body).toContain('data-testid="signed-out"');

    expireAccessToken(other);
    const still = await other.get("/");
    expect(still.body).toContain(email);
  });

  it("'Sign out everywhere' ends the other devices' sessions at their next refresh", async () => {
    const { browser, email, password } = await signedInBrowser();
    const other = await secondDevice(email, password);
    await browser.post("/sign-out", { scope: "global" });
    expect(browser.hasSession()).toBe(false);
    expireAccessToken(other);
    const after = await other.get("/");
    expect(after.body).toContain('data-testid="signed-out"');
    expect(other.hasSession()).toBe(false);
  });

  it("the header offers Sign in / Sign up when signed out and a Sign out button when signed in", async () => {
    const out = await new BrowserLess().get("/");
    expect(out.body).toMatch(/<a[^>]*href="\/sign-in"[^>]*>Sign in<\/a>/);
    expect(out.body).toMatch(/<a[^>]*href="\/sign-up"[^>]*>Sign up<\/a>/);
    const { browser } = await signedInBrowser();
    const signedIn = await browser.get("/");
    expect(signedIn.body).toMatch(/<form[^>]*action="\/sign-out"[^>]*method="post"/);
  });

  it("POST when already signed out just goes home", async () => {
    const visit = await new BrowserLess().post("/sign-out", {}, { follow: false });
    expect(visit.status).toBe(303);
    expect(visit.location).toBe("/");
  });
});

import { describe, expect, it } from "vitest";
import { activityKinds } from "../support/account";
import { signedInBrowser } from "../support/auth-flows";
import { BrowserLess } from "../support/browser-less";
import { expireAccessToken } from "../support/session";

describe("/account/sessions", () => {
  it("'Sign out other devices' ends the other browser's session at its next server check", async () => {
    const { browser, email, password } = await signedInBrowser();
    const other = new BrowserLess();
    await other.post("/sign-in", { intent: "password", email, password });
    const third = new BrowserLess();
    await third.post("/sign-in", { intent: "password", email, password });
    expect((await other.get("/account/sessions")).status).toBe(200);

    const done = await browser.post("/account/sessions", { intent: "others" });
    expect(done.status).toBe(200);
    expect(done.body).toContain("Your other devices and browsers are signed out.");

    // An account page asks the auth server: refused at once, cookies cleared.
    const refused = await other.get("/account/sessions", { follow: false });
    expect(refused.status).toBe(302);
    expect(refused.location).toBe("/sign-in?next=%2Faccount%2Fsessions&ended=1");
    expect(other.hasSession()).toBe(false);
    // Ordinary pages verify the token locally: the next refresh is refused.
    expireAccessToken(third);
    const home = await third.get("/");
    expect(home.body).toContain('data-testid="signed-out"');
    expect(third.hasSession()).toBe(false);
    // This browser carries on.
    expect((await browser.get("/account/sessions")).status).toBe(200);
    expect(activityKinds((await browser.get("/account/activity")).body)[0]).toBe(
      "signed_out_others",
    );
  });

  it("'Sign out everywhere' ends this session too", async () => {
    const { browser } = await signedInBrowser();
    const visit = await browser.post("/account/sessions", { intent: "global" });
    expect(new URL(visit.url).pathname).toBe("/sign-in");
    expect(visit.body).toContain('data-testid="session-ended"');
    expect(browser.hasSession()).toBe(false);
  });

  it("bad input: an unknown intent is a 400 and nobody is signed out", async () => {
    const { browser } = await signedInBrowser();
    const visit = await browser.post("/account/sessions", { intent: "everyone-else" });
    expect(visit.status).toBe(400);
    expect(browser.hasSession()).toBe(true);
    expect((await browser.get("/account/sessions")).status).toBe(200);
  });
});

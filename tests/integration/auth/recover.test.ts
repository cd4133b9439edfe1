import { describe, expect, it } from "vitest";
import { messagesFor } from "../../support/inbox";
import {
  expectNoStore,
  followEmailLink,
  freshUser,
  randomEmail,
  testId,
  waitForMessage,
} from "../support/auth-flows";
import { BrowserLess } from "../support/browser-less";

describe("/forgot-password and /reset-password", () => {
  it("emails a reset link that signs in here, then sets a new password that works", async () => {
    const user = await freshUser();
    const browser = new BrowserLess();
    const asked = await browser.post("/forgot-password", { email: user.email });
    expect(asked.status).toBe(200);
    expect(asked.body).toContain("a reset link is on its way");
    const landed = await followEmailLink(browser, await waitForMessage(user.email, "recovery"));
    expect(new URL(landed.url).pathname).toBe("/reset-password");
    expect(landed.body).toContain("Choose a new password");
    expect(landed.body).toContain("Set new password");

    const set = await browser.post("/reset-password", { password: "a-brand-new-secret" });
    expect(set.redirects[0]?.status).toBe(303);
    expect(set.redirects[0]?.location).toBe("/notes");
    expectNoStore(set.redirects[0]?.headers ?? new Headers());
    expect(testId(set.body, "session-email")).toBe(user.email);

    const oldPassword = await new BrowserLess().post("/sign-in", {
      email: user.email,
      password: user.password,
    });
    expect(oldPassword.status).toBe(400);
    const fresh = new BrowserLess();
    await fresh.post("/sign-in", { email: user.email, password: "a-brand-new-secret" });
    expect(fresh.hasSession()).toBe(true);
  });

  it("answers an unknown address like a known one and sends nothing", async () => {
    const email = randomEmail("nobody");
    const visit = await new BrowserLess().post("/forgot-password", { email });
    expect(visit.status).toBe(200);
    expect(visit.body).toContain("a reset link is on its way");
    expect(await messagesFor(email)).toEqual([]);
  });

  it("validates the address beside the field", async () => {
    const visit = await new BrowserLess().post("/forgot-password", { email: "" });
    expect(visit.status).toBe(400);
    expect(visit.body).toContain("Enter your email address.");
    expect(visit.body).toMatch(/<input id="field-email"[^>]*aria-invalid="true"/);
  });

  it("signed out, /reset-password says to open the link first, and a POST changes nothing", async () => {
    const browser = new BrowserLess();
    const page = await browser.get("/reset-password");
    expect(page.status).toBe(200);
    expect(page.body).toContain("Open your reset link first");
    expect(page.body).toContain('href="/forgot-password"');
    const post = await browser.post(
      "/reset-password",
      { password: "whatever-it-is" },
      { follow: false },
    );
    expect(post.status).toBe(303);
    expect(post.location).toBe("/reset-password");
  });

  it("puts a too-short or unchanged password's message beside the field", async () => {
    const { email, password } = await freshUser();
    const browser = new BrowserLess();
    await browser.post("/forgot-password", { email });
    await followEmailLink(browser, await waitForMessage(email, "recovery"));
    const short = await browser.post("/reset-password", { password: "short" });
    expect(short.status).toBe(400);
    expect(short.body).toContain("Use at least 8 characters.");
    const same = await browser.post("/reset-password", { password });
    expect(same.status).toBe(422);
    expect(same.body).toContain("Choose a password that is different from your current one.");
    expect(same.body).toMatch(/<input id="field-password"[^>]*aria-invalid="true"/);
  });
});

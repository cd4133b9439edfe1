import { describe, expect, it } from "vitest";
import { defaultTemplateLink, messagesFor } from "../../support/inbox";
import {
  adminClient,
  expectNoStore,
  followEmailLink,
  freshUser,
  randomEmail,
  testId,
  waitForMessage,
} from "../support/auth-flows";
import { BrowserLess } from "../support/browser-less";

describe("/sign-up (confirmations on, JavaScript off)", () => {
  it("shows the password rules before submit, with plain labels", async () => {
    const page = await new BrowserLess().get("/sign-up");
    expect(page.status).toBe(200);
    for (const text of [
      ">Display name<",
      ">Email<",
      ">Password<",
      "At least 8 characters",
      "Sign up",
    ]) {
      expect(page.body).toContain(text);
    }
    expect(page.body).toMatch(
      /<input id="field-password"[^>]*aria-describedby="field-password-hint"/,
    );
  });

  it("signs up, sends to check-email, and the emailed link's button signs in", async () => {
    const email = randomEmail("new");
    const browser = new BrowserLess();
    const visit = await browser.post("/sign-up", {
      displayName: "Ada Lovelace",
      email,
      password: "analytical-engine",
      next: "/notes",
    });
    expect(visit.redirects[0]?.status).toBe(303);
    const page = new URL(visit.url);
    expect(page.pathname).toBe("/sign-up/check-email");
    expect(page.searchParams.get("email")).toBe(email);
    expect(visit.body).toContain("Check your inbox");
    expect(visit.body).toContain("Resend");
    expect(browser.hasSession()).toBe(false);

    const message = await waitForMessage(email, "confirmation");
    const confirmed = await followEmailLink(browser, message, { follow: false });
    expect(confirmed.status).toBe(303);
    expect(confirmed.location).toBe("/notes");
    expectNoStore(confirmed.headers);
    expect(browser.hasSession()).toBe(true);
    const home = await browser.get("/");
    expect(testId(home.body, "session-email")).toBe(email);

    const { data } = await adminClient().auth.admin.listUsers({ perPage: 1000 });
    const user = data.users.find((u) => u.email === email);
    expect(user?.user_metadata.display_name).toBe("Ada Lovelace");
    expect(user?.email_confirmed_at).toBeTruthy();
  });

  it("shows each field's message beside it and creates nobody", async () => {
    const visit = await new BrowserLess().post("/sign-up", {
      email: "not-an-email",
      password: "short",
      displayName: "x".repeat(101),
    });
    expect(visit.status).toBe(400);
    expect(visit.body).toContain("Enter an email address like name@example.com.");
    expect(visit.body).toContain("Use at least 8 characters.");
    expect(visit.body).toContain("Display names can be at most 100 characters.");
    for (const field of ["email", "password", "displayName"]) {
      expect(visit.body).toMatch(
        new RegExp(
          `<input id="field-${field}"[^>]*aria-invalid="true"[^>]*aria-describedby="field-${field}-error`,
        ),
      );
    }
    expect(visit.body).toContain('value="not-an-email"');
    expect(visit.body).not.toContain('value="short"');
  });

  it("enforces the password limit (72 bytes), counting bytes, not characters", async () => {
    const visit = await new BrowserLess().post("/sign-up", {
      email: randomEmail(),
      password: "é".repeat(37),
    });
    expect(visit.status).toBe(400);
    expect(visit.body).toContain("Passwords can be at most 72 bytes long.");
  });

  it("gives an address that already has an account the same answer (nothing revealed)", async () => {
    const user = await freshUser();
    const before = (await messagesFor(user.email)).length;
    const visit = await new BrowserLess().post("/sign-up", {
      email: user.email,
      password: "another-password",
    });
    expect(new URL(visit.url).pathname).toBe("/sign-up/check-email");
    expect(visit.status).toBe(200);
    expect((await messagesFor(user.email)).length).toBe(before);
  });

  it("resends the confirmation and counts down from the server's frequency limit", async () => {
    const email = randomEmail("resend");
    const browser = new BrowserLess();
    await browser.post("/sign-up", { email, password: "a-fine-password" });
    await new Promise((resolve) => setTimeout(resolve, 1100)); // max_frequency = 1s
    const resent = await browser.post("/sign-up/check-email", { intent: "resend", email });
    expect(resent.status).toBe(200);
    expect(resent.body).toContain(`We sent the confirmation email to ${email} again.`);
    const limited = await browser.post("/sign-up/check-email", { intent: "resend", email });
    expect(limited.status).toBe(429);
    expect(testId(limited.body, "error-code")).toBe("over_email_send_rate_limit");
    expect(limited.body).toMatch(/You can resend in \d+ s\./);
    expect(limited.body).toMatch(/request this again in \d+ seconds?\./);
    expect((await messagesFor(email)).filter((m) => m.type === "confirmation")).toHaveLength(2);
  });

  it("a double-submitted form makes one account", async () => {
    const email = randomEmail("twice");
    const form = { email, password: "a-fine-password" };
    const [a, b] = await Promise.all([
      new BrowserLess().post("/sign-up", form),
      new BrowserLess().post("/sign-up", form),
    ]);
    // The local backend answers a racing duplicate with 500 unexpected_failure; the app turns
    // that into a 503 page with a way forward, never a 500 of its own.
    for (const visit of [a, b]) expect(visit.status).not.toBe(500);
    expect([a, b].some((visit) => new URL(visit.url).pathname === "/sign-up/check-email")).toBe(
      true,
    );
    const { data } = await adminClient().auth.admin.listUsers({ perPage: 1000 });
    expect(data.users.filter((u) => u.email === email)).toHaveLength(1);
  });
});

// A project without this one's templates sends the auth server's own link, which ends on
// /auth/callback with a PKCE code: each email's flow keeps its own verifier.
describe("a resent confirmation link (the default template's)", () => {
  it("works in the browser that asked for it (its own PKCE flow)", async () => {
    const email = randomEmail("resent");
    const browser = new BrowserLess();
    await browser.post("/sign-up", { email, password: "a-fine-password", next: "/after" });
    await new Promise((resolve) => setTimeout(resolve, 1100)); // max_frequency = 1s
    await browser.post("/sign-up/check-email", { intent: "resend", email, next: "/after" });
    const resent = await waitForMessage(email, "confirmation");
    const visit = await browser.get(defaultTemplateLink(resent));
    const callback = visit.redirects.find((hop) => hop.url.includes("/auth/callback"));
    expect(new URL(callback?.url ?? "").searchParams.get("sb_flow_id")).toBeTruthy();
    expect(callback?.location).toBe("/after");
    expect(browser.hasSession()).toBe(true);
  });
});

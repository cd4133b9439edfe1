import { describe, expect, it } from "vitest";
import { adminClient, PASSWORD } from "../../support/backend";
import { activityKinds, canSignIn } from "../support/account";
import { signedInBrowser, waitForMessage } from "../support/auth-flows";

describe("/account/password", () => {
  it("needs the right current password; then the new one works and the old one doesn't", async () => {
    const { browser, email } = await signedInBrowser();
    const wrong = await browser.post("/account/password", {
      intent: "change",
      currentPassword: "not-my-password",
      password: "a-new-long-secret",
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toContain("Your current password is not right.");
    expect(await canSignIn(email, "a-new-long-secret")).toBe(false);

    const right = await browser.post("/account/password", {
      intent: "change",
      currentPassword: PASSWORD,
      password: "a-new-long-secret",
    });
    expect(right.status).toBe(200);
    expect(right.body).toContain("Your password was changed.");
    expect(right.body).not.toContain("a-new-long-secret");
    expect(await canSignIn(email, "a-new-long-secret")).toBe(true);
    expect(await canSignIn(email, PASSWORD)).toBe(false);
    // The check's throwaway session did not replace this browser's.
    const still = await browser.get("/account/password");
    expect(still.status).toBe(200);
    // The database logged the change, and the sign-ins canSignIn made after it.
    expect(activityKinds((await browser.get("/account/activity")).body)).toContain(
      "password_changed",
    );
  });

  it("bad input: short or same new password, empty current: field messages, 4xx", async () => {
    const { browser, email } = await signedInBrowser();
    const cases: Array<[Record<string, string>, string]> = [
      [{ currentPassword: "", password: "a-new-long-secret" }, "Enter your password."],
      [{ currentPassword: PASSWORD, password: "short" }, "Use at least 8 characters."],
      [{ currentPassword: PASSWORD, password: PASSWORD }, "That is your current password."],
    ];
    for (const [form, message] of cases) {
      const visit = await browser.post("/account/password", { intent: "change", ...form });
      expect(visit.status).toBeGreaterThanOrEqual(400);
      expect(visit.status).toBeLessThan(500);
      expect(visit.body).toContain(message);
    }
    expect(await canSignIn(email, PASSWORD)).toBe(true);
  });

  it("'Send a new code' emails a reauthentication code and asks for it with the passwords", async () => {
    const { browser, email } = await signedInBrowser();
    const sent = await browser.post("/account/password", { intent: "send-code" });
    expect(sent.status).toBe(200);
    expect(sent.body).toContain(`We emailed a code to ${email}`);
    expect(sent.body).toContain('name="nonce"');
    const message = await waitForMessage(email, "reauthentication");
    expect(message.token).toMatch(/^\d{6}$/);
    const malformed = await browser.post("/account/password", {
      intent: "change",
      currentPassword: PASSWORD,
      password: "a-new-long-secret",
      nonce: "12x",
      nonceShown: "1",
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toContain("Enter the 6-digit code from the email.");
    expect(await canSignIn(email, PASSWORD)).toBe(true);
  });

  it("a session older than 24 h changes the password only with the emailed reauthentication code", async () => {
    const { browser, email, user } = await signedInBrowser();
    const aged = await adminClient().rpc("test_age_sessions", { target: user.id });
    expect(aged.error).toBeNull();
    const change = (extra: Record<string, string> = {}) =>
      browser.post("/account/password", {
        intent: "change",
        currentPassword: PASSWORD,
        password: "a-new-long-secret",
        ...extra,
      });
    const asked = await change();
    expect(asked.status).toBe(400);
    expect(asked.body).toContain('name="nonce"');
    const message = await waitForMessage(email, "reauthentication");
    const wrong = message.token === "000000" ? "111111" : "000000";
    const refused = await change({ nonce: wrong, nonceShown: "1" });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.status).toBeLessThan(500);
    expect(refused.body).toContain("That code is wrong or has expired.");
    expect(await canSignIn(email, PASSWORD)).toBe(true);
    const accepted = await change({ nonce: message.token ?? "", nonceShown: "1" });
    expect(accepted.status).toBeLessThan(400);
    expect(await canSignIn(email, "a-new-long-secret")).toBe(true);
    expect(await canSignIn(email, PASSWORD)).toBe(false);
  });

  it("/reset-password without a recovery session sends to /account/password and changes nothing", async () => {
    const { browser, email } = await signedInBrowser();
    const page = await browser.get("/reset-password", { follow: false });
    expect(page.status).toBe(303);
    expect(page.location).toBe("/account/password");
    const post = await browser.post(
      "/reset-password",
      { password: "hijacked-password" },
      { follow: false },
    );
    expect(post.status).toBe(303);
    expect(post.location).toBe("/account/password");
    expect(await canSignIn(email, "hijacked-password")).toBe(false);
  });
});

import { describe, expect, it } from "vitest";
import { messagesFor } from "../../support/inbox";
import { activityKinds, emailOf } from "../support/account";
import {
  followEmailLink,
  linkProblemOf,
  pressConfirm,
  signedInBrowser,
  waitForMessage,
} from "../support/auth-flows";

describe("/account/email", () => {
  it("a change waits for both confirmations, shows the pending address, then switches", async () => {
    const { browser, email, user } = await signedInBrowser();
    const newEmail = `new-${email}`;
    const asked = await browser.post("/account/email", { intent: "change", email: newEmail });
    expect(asked.status).toBe(200);
    expect(asked.body).toContain(`We sent a confirmation link to ${newEmail}`);

    const pending = await browser.get("/account/email");
    expect(pending.body).toContain('data-testid="pending-email"');
    expect(pending.body).toContain(newEmail);
    expect((await emailOf(user.id)).email).toBe(email);

    // double_confirm_changes: both addresses are written to.
    const toNew = await waitForMessage(newEmail, "email_change");
    const toOld = await waitForMessage(email, "email_change");
    const first = await followEmailLink(browser, toNew);
    expect(first.body).toContain("Now open the link we sent to your other email address");
    expect((await emailOf(user.id)).email).toBe(email);
    const second = await followEmailLink(browser, toOld);
    expect(new URL(second.url).pathname).toBe("/account/email");
    expect((await emailOf(user.id)).email).toBe(newEmail);
    expect(second.body).not.toContain('data-testid="pending-email"');

    const activity = await browser.get("/account/activity");
    expect(activityKinds(activity.body)).toEqual(
      expect.arrayContaining(["email_changed", "email_change_requested", "signed_in"]),
    );
  });

  it("resend sends the confirmation link to the pending address again", async () => {
    const { browser, email } = await signedInBrowser();
    const newEmail = `resend-${email}`;
    await browser.post("/account/email", { intent: "change", email: newEmail });
    await waitForMessage(newEmail, "email_change");
    await new Promise((resolve) => setTimeout(resolve, 1100)); // max_frequency = 1s
    const resent = await browser.post("/account/email", { intent: "resend" });
    expect(resent.status).toBe(200);
    expect(resent.body).toContain(`again`);
    await expect.poll(async () => (await messagesFor(newEmail)).length).toBeGreaterThan(1);
  });

  it("bad input: invalid, same, taken address: field message, 4xx, nothing sent", async () => {
    const { browser, email } = await signedInBrowser();
    const other = await signedInBrowser();
    const cases: Array<[string, number, string]> = [
      ["not-an-email", 400, "Enter an email address like name@example.com."],
      [email.toUpperCase(), 400, "This is already your email address."],
      [other.email, 422, "Another account already uses this address."],
    ];
    for (const [value, status, message] of cases) {
      const visit = await browser.post("/account/email", { intent: "change", email: value });
      expect(visit.status).toBe(status);
      expect(visit.body).toContain(message);
    }
    expect(await messagesFor(other.email)).toEqual([]);
    const page = await browser.get("/account/email");
    expect(page.body).not.toContain('data-testid="pending-email"');
  });

  it("a stale email-change link is refused (410) and the address stays", async () => {
    const { browser, email, user } = await signedInBrowser();
    const newEmail = `stale-${email}`;
    await browser.post("/account/email", { intent: "change", email: newEmail });
    const old = await waitForMessage(newEmail, "email_change");
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await browser.post("/account/email", { intent: "change", email: `second-${email}` });
    await waitForMessage(`second-${email}`, "email_change");
    const visit = await pressConfirm(
      browser,
      `/auth/confirm?${new URLSearchParams({ token_hash: old.tokenHash ?? "", type: "email_change" })}`,
    );
    expect(visit.status).toBe(410);
    expect(linkProblemOf(visit)).toBe("used");
    expect((await emailOf(user.id)).email).toBe(email);
  });
});

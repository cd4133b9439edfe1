import { describe, expect, it } from "vitest";
import { adminClient, anonClient, PASSWORD } from "../support/backend";
import { messagesFor, verifyLink } from "../support/inbox";
import { STORAGE_KEY } from "./support/app";
import {
  expectNoStore,
  linkProblemOf,
  pressConfirm,
  signedInBrowser,
  waitForMessage,
} from "./support/auth-flows";
import { BrowserLess } from "./support/browser-less";
import { decodeSession, encodeSession } from "./support/session";

/** The kinds on the /account/activity page, newest first. */
function activityKinds(body: string): string[] {
  return [...body.matchAll(/data-kind="([a-z_]+)"/g)].map((m) => m[1] ?? "");
}

async function emailOf(userId: string) {
  const { data, error } = await adminClient().auth.admin.getUserById(userId);
  if (error) throw error;
  return data.user;
}

async function canSignIn(email: string, password: string) {
  const { error } = await anonClient().auth.signInWithPassword({ email, password });
  return !error;
}

/** Make the access token look expired so the next request must ask the auth server. */
function expireAccessToken(browser: BrowserLess) {
  const value = browser.cookies.get(STORAGE_KEY);
  if (!value) throw new Error("expected a single-chunk session cookie");
  browser.cookies.set(STORAGE_KEY, encodeSession({ ...decodeSession(value), expires_at: 1 }));
}

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
    const first = await browser.get(verifyLink(toNew));
    expect(first.body).toContain("Now open the link we sent to your other email address");
    expect((await emailOf(user.id)).email).toBe(email);
    const second = await browser.get(verifyLink(toOld));
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
    expect(activityKinds((await browser.get("/account/activity")).body)[0]).toBe(
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

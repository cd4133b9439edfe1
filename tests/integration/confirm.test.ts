import { describe, expect, it } from "vitest";
import { adminClient, PASSWORD } from "../support/backend";
import {
  expectNoStore,
  freshUser,
  linkProblemOf,
  randomEmail,
  signedInBrowser,
  testId,
  waitForMessage,
} from "./support/auth-flows";
import { BrowserLess } from "./support/browser-less";

/** /auth/confirm?token_hash=…&type=… (the server-side verifyOtp link of custom templates). */
function confirmPath(tokenHash: string | undefined, type: string, next?: string) {
  const params = new URLSearchParams({ token_hash: tokenHash ?? "", type });
  if (next) params.set("next", next);
  return `/auth/confirm?${params}`;
}

describe("/auth/confirm (token hash links, any browser)", () => {
  it("signup: confirms and signs in, even in another browser, and goes to next", async () => {
    const email = randomEmail("confirm");
    await new BrowserLess().post("/sign-up", { email, password: PASSWORD });
    const message = await waitForMessage(email, "confirmation");
    const other = new BrowserLess();
    const visit = await other.get(confirmPath(message.tokenHash, "signup", "/welcome"), {
      follow: false,
    });
    expect(visit.status).toBe(303);
    expect(visit.location).toBe("/welcome");
    expectNoStore(visit.headers);
    expect(other.hasSession()).toBe(true);
  });

  it("magiclink: signs in", async () => {
    const user = await freshUser();
    await new BrowserLess().post("/sign-in", { intent: "magic-link", email: user.email });
    const message = await waitForMessage(user.email, "magic_link");
    const browser = new BrowserLess();
    const home = await browser.get(confirmPath(message.tokenHash, "magiclink"));
    expect(testId(home.body, "session-email")).toBe(user.email);
  });

  it("recovery: signs in and goes to /reset-password whatever next says", async () => {
    const user = await freshUser();
    await new BrowserLess().post("/forgot-password", { email: user.email });
    const message = await waitForMessage(user.email, "recovery");
    const visit = await new BrowserLess().get(
      confirmPath(message.tokenHash, "recovery", "/elsewhere"),
      { follow: false },
    );
    expect(visit.location).toBe("/reset-password");
  });

  it("invite: signs the invited person in", async () => {
    const email = randomEmail("invited");
    const { error } = await adminClient().auth.admin.inviteUserByEmail(email);
    expect(error).toBeNull();
    const message = await waitForMessage(email, "invite");
    const browser = new BrowserLess();
    await browser.get(confirmPath(message.tokenHash, "invite"));
    expect(browser.hasSession()).toBe(true);
  });

  it("email_change: the first of two confirmations says to open the other link", async () => {
    const { email, browser } = await signedInBrowser();
    const newEmail = randomEmail("changed");
    // Ask for the change with the user's own session (as /account will).
    const { createServerClient } = await import("@supabase/ssr");
    const { BACKEND_URL, PUBLISHABLE_KEY } = await import("./support/app");
    const client = createServerClient(BACKEND_URL, PUBLISHABLE_KEY, {
      cookies: {
        getAll: () => [...browser.cookies].map(([name, value]) => ({ name, value })),
        setAll: () => {},
      },
    });
    const { error } = await client.auth.updateUser({ email: newEmail });
    expect(error).toBeNull();
    const toNew = await waitForMessage(newEmail, "email_change");
    const first = await browser.get(confirmPath(toNew.tokenHash, "email_change"));
    expect(first.status).toBe(200);
    expect(first.body).toContain('data-testid="link-notice"');
    const toOld = await waitForMessage(email, "email_change");
    const second = await browser.get(confirmPath(toOld.tokenHash, "email_change"), {
      follow: false,
    });
    expect(second.status).toBe(303);
  });

  it("a used link: its own page (signed in here: 'already used')", async () => {
    const user = await freshUser();
    await new BrowserLess().post("/sign-in", { intent: "magic-link", email: user.email });
    const message = await waitForMessage(user.email, "magic_link");
    const browser = new BrowserLess();
    await browser.get(confirmPath(message.tokenHash, "magiclink"));
    const again = await browser.get(confirmPath(message.tokenHash, "magiclink"));
    expect(again.status).toBe(410);
    expect(linkProblemOf(again)).toBe("used");
    expect(again.body).toContain("This link was already used");
    expect(testId(again.body, "error-code")).toBe("otp_expired");
  });

  it("an expired (or replaced) link: its own page with the way forward", async () => {
    const user = await freshUser();
    const browser = new BrowserLess();
    await browser.post("/sign-in", { intent: "magic-link", email: user.email });
    const old = await waitForMessage(user.email, "magic_link");
    await new Promise((resolve) => setTimeout(resolve, 1100)); // max_frequency = 1s
    await browser.post("/sign-in", { intent: "magic-link", email: user.email });
    const visit = await new BrowserLess().get(confirmPath(old.tokenHash, "magiclink"));
    expect(visit.status).toBe(410);
    expect(linkProblemOf(visit)).toBe("expired");
    expect(visit.body).toContain("This link has expired");
    expect(visit.body).toContain('href="/sign-in"');
  });

  it.each([
    ["no token", "/auth/confirm?type=signup"],
    ["unknown type", "/auth/confirm?token_hash=abc&type=admin"],
    ["huge token", `/auth/confirm?token_hash=${"a".repeat(600)}&type=signup`],
  ])("an incomplete link (%s): 400 with its own page", async (_name, path) => {
    const visit = await new BrowserLess().get(path);
    expect(visit.status).toBe(400);
    expect(linkProblemOf(visit)).toBe("invalid");
  });

  it("a tampered token hash signs nobody in", async () => {
    const visit = await new BrowserLess().get(confirmPath("pkce_0123456789abcdef", "signup"));
    expect(visit.status).toBe(410);
    expect(visit.headers.getSetCookie().some((c) => c.includes("auth-token="))).toBe(false);
  });
});

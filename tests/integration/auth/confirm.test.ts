import { describe, expect, it } from "vitest";
import { adminClient, PASSWORD } from "../../support/backend";
import type { InboxMessage } from "../../support/inbox";
import { APP_URL, BACKEND_URL, backendCalls } from "../support/app";
import {
  confirmForm,
  expectNoStore,
  freshUser,
  linkProblemOf,
  pressConfirm,
  randomEmail,
  signedInBrowser,
  testId,
  waitForMessage,
} from "../support/auth-flows";
import { BrowserLess } from "../support/browser-less";

/** /auth/confirm?token_hash=…&type=… (the server-side verifyOtp link of custom templates). */
function confirmPath(tokenHash: string | undefined, type: string, next?: string) {
  const params = new URLSearchParams({ token_hash: tokenHash ?? "", type });
  if (next) params.set("next", next);
  return `/auth/confirm?${params}`;
}

/** A fresh user's magic link as /auth/confirm (the token hash from the email). */
async function magicLinkHash() {
  const user = await freshUser();
  await new BrowserLess().post("/sign-in", { intent: "magic-link", email: user.email });
  const message = await waitForMessage(user.email, "magic_link");
  return { user, tokenHash: message.tokenHash ?? "" };
}

const sessionCookies = (headers: Headers) =>
  headers.getSetCookie().filter((cookie) => cookie.includes("auth-token"));

describe("/auth/confirm: opening the link changes nothing", () => {
  it.each([
    ["signup", "Confirm"],
    ["invite", "Confirm"],
    ["email_change", "Confirm"],
    ["magiclink", "Sign in"],
    ["email", "Sign in"],
    ["recovery", "Continue to reset your password"],
  ])("%s: one button (%s) in a plain POST form with the link's values", async (type, label) => {
    const path = confirmPath("pkce_0123456789abcdef", type, "/notes?q=x");
    const visit = await new BrowserLess().get(path, { follow: false });
    expect(visit.status).toBe(200);
    expectNoStore(visit.headers);
    // No call to the auth server and no cookie: the token is only looked at when posted.
    expect(backendCalls(visit).auth).toBe(0);
    expect(visit.headers.getSetCookie()).toEqual([]);
    const form = confirmForm(visit);
    expect(form).toEqual({
      method: "post",
      action: path,
      fields: { token_hash: "pkce_0123456789abcdef", type, next: "/notes?q=x" },
      button: label,
    });
    // The only button besides the footer's theme switch (its own form, to /theme).
    const page = visit.body.replace(/<form\b[^>]*action="\/theme"[\s\S]*?<\/form>/, "");
    expect(page.match(/<button\b/g)?.length).toBe(1);
  });

  it("mail-scanner style: two GETs of the link, then the person's POST still signs in", async () => {
    const { user, tokenHash } = await magicLinkHash();
    const path = confirmPath(tokenHash, "magiclink");
    const scanner = new BrowserLess();
    for (let i = 0; i < 2; i++) {
      const scanned = await scanner.get(path);
      expect(scanned.status).toBe(200);
      expect(confirmForm(scanned)).not.toBeNull();
    }
    expect(scanner.hasSession()).toBe(false);
    const browser = new BrowserLess();
    const home = await pressConfirm(browser, path);
    expect(testId(home.body, "session-email")).toBe(user.email);
  });

  it("a signed-in visitor's GET keeps their session (no login CSRF by a link)", async () => {
    const { browser, email } = await signedInBrowser();
    const victim = browser.cookieHeader();
    const { tokenHash } = await magicLinkHash();
    const visit = await browser.get(confirmPath(tokenHash, "magiclink"));
    expect(visit.status).toBe(200);
    expect(visit.headers.getSetCookie()).toEqual([]);
    expect(browser.cookieHeader()).toBe(victim);
    expect(testId((await browser.get("/")).body, "session-email")).toBe(email);
  });
});

/** A link from an email: the auth server's as it is, the app's (site_url) on the app under test. */
function opened(link: string): string {
  const url = new URL(link);
  return url.origin === BACKEND_URL ? link : `${APP_URL}${url.pathname}${url.search}`;
}

/** What a mail scanner does with every link in an email: a plain GET, no cookies, redirects followed. */
async function scan(message: InboxMessage) {
  expect(message.links.length).toBeGreaterThan(0);
  for (const link of message.links) {
    const response = await fetch(opened(link));
    await response.arrayBuffer();
  }
}

/** The person's click on the email's link: opened in `browser`, and a button there pressed. */
async function click(browser: BrowserLess, message: InboxMessage) {
  const page = await browser.get(opened(message.links[0] ?? ""));
  const form = confirmForm(page);
  return form ? browser.post(form.action, form.fields) : page;
}

/** What a scanner could change on the account: confirmation and sign-in times. */
async function accountState(email: string) {
  const { data } = await adminClient().auth.admin.listUsers({ perPage: 1000 });
  const user = data.users.find((u) => u.email === email);
  return { confirmed: user?.email_confirmed_at, signedIn: user?.last_sign_in_at };
}

// The emails as the project sends them (supabase/templates, wired in config.toml), not links built
// by the test: with the default templates' /verify links, the scanner's GET uses the token up (a
// sign-up is even confirmed by it) and the person's own click then fails with otp_expired.
describe("the shipped templates: a scanner opening an email's links changes nothing", () => {
  it.each([
    {
      flow: "sign-up confirmation",
      type: "confirmation",
      lands: "/notes",
      send: async (browser: BrowserLess) => {
        const email = randomEmail("scanned");
        await browser.post("/sign-up", { email, password: PASSWORD });
        return email;
      },
    },
    {
      flow: "magic link",
      type: "magic_link",
      lands: "/notes",
      send: async (browser: BrowserLess) => {
        const { email } = await freshUser();
        await browser.post("/sign-in", { intent: "magic-link", email });
        return email;
      },
    },
    {
      flow: "password recovery",
      type: "recovery",
      lands: "/reset-password",
      send: async (browser: BrowserLess) => {
        const { email } = await freshUser();
        await browser.post("/forgot-password", { email });
        return email;
      },
    },
    {
      flow: "invitation",
      type: "invite",
      lands: "/notes",
      send: async () => {
        const email = randomEmail("scanned-invite");
        const { error } = await adminClient().auth.admin.inviteUserByEmail(email);
        if (error) throw error;
        return email;
      },
    },
  ])("$flow: the person's own click afterwards still signs in", async ({ type, lands, send }) => {
    const browser = new BrowserLess();
    const email = await send(browser);
    const message = await waitForMessage(email, type);
    const before = await accountState(email);
    await scan(message);
    await scan(message);
    expect(await accountState(email)).toEqual(before);

    const visit = await click(browser, message);
    expect(linkProblemOf(visit)).toBeNull();
    expect(browser.hasSession()).toBe(true);
    expect(new URL(visit.url).pathname).toBe(lands);
    expect(testId((await browser.get("/")).body, "session-email")).toBe(email);
  });
});

describe("/auth/confirm: pressing the button verifies (any browser)", () => {
  it("signup: confirms and signs in, even in another browser, and goes to next", async () => {
    const email = randomEmail("confirm");
    await new BrowserLess().post("/sign-up", { email, password: PASSWORD });
    const message = await waitForMessage(email, "confirmation");
    const other = new BrowserLess();
    const visit = await pressConfirm(other, confirmPath(message.tokenHash, "signup", "/welcome"), {
      follow: false,
    });
    expect(visit.status).toBe(303);
    expect(visit.location).toBe("/welcome");
    expectNoStore(visit.headers);
    expect(sessionCookies(visit.headers).length).toBeGreaterThan(0);
    expect(other.hasSession()).toBe(true);
  });

  it("magiclink: signs in", async () => {
    const { user, tokenHash } = await magicLinkHash();
    const home = await pressConfirm(new BrowserLess(), confirmPath(tokenHash, "magiclink"));
    expect(testId(home.body, "session-email")).toBe(user.email);
  });

  it("recovery: signs in and goes to /reset-password whatever next says", async () => {
    const user = await freshUser();
    await new BrowserLess().post("/forgot-password", { email: user.email });
    const message = await waitForMessage(user.email, "recovery");
    const visit = await pressConfirm(
      new BrowserLess(),
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
    await pressConfirm(browser, confirmPath(message.tokenHash, "invite"));
    expect(browser.hasSession()).toBe(true);
  });

  it("email_change: the first of two confirmations says to open the other link", async () => {
    const { email, browser } = await signedInBrowser();
    const newEmail = randomEmail("changed");
    await browser.post("/account/email", { intent: "change", email: newEmail });
    const toNew = await waitForMessage(newEmail, "email_change");
    const first = await pressConfirm(browser, confirmPath(toNew.tokenHash, "email_change"));
    expect(first.status).toBe(200);
    expect(first.body).toContain('data-testid="link-notice"');
    const toOld = await waitForMessage(email, "email_change");
    const second = await pressConfirm(browser, confirmPath(toOld.tokenHash, "email_change"), {
      follow: false,
    });
    expect(second.status).toBe(303);
    expect(second.location).toBe("/account/email");
  });

  it("a used link: its own page (signed in here: 'already used')", async () => {
    const { tokenHash } = await magicLinkHash();
    const browser = new BrowserLess();
    await pressConfirm(browser, confirmPath(tokenHash, "magiclink"));
    const again = await pressConfirm(browser, confirmPath(tokenHash, "magiclink"));
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
    const visit = await pressConfirm(new BrowserLess(), confirmPath(old.tokenHash, "magiclink"));
    expect(visit.status).toBe(410);
    expect(linkProblemOf(visit)).toBe("expired");
    expect(visit.body).toContain("This link has expired");
    expect(visit.body).toContain('href="/sign-in"');
  });

  it("a tampered token hash signs nobody in", async () => {
    const visit = await pressConfirm(
      new BrowserLess(),
      confirmPath("pkce_0123456789abcdef", "signup"),
    );
    expect(visit.status).toBe(410);
    expect(sessionCookies(visit.headers)).toEqual([]);
  });
});

describe("/auth/confirm: bad links and bad posts are 4xx pages", () => {
  it.each([
    ["no token", "/auth/confirm?type=signup"],
    ["no type", "/auth/confirm?token_hash=abc"],
    ["unknown type", "/auth/confirm?token_hash=abc&type=admin"],
    ["huge token", `/auth/confirm?token_hash=${"a".repeat(600)}&type=signup`],
    ["nothing at all", "/auth/confirm"],
  ])("GET, an incomplete link (%s): 400 with its own page, no button", async (_name, path) => {
    const visit = await new BrowserLess().get(path);
    expect(visit.status).toBe(400);
    expect(linkProblemOf(visit)).toBe("invalid");
    expect(confirmForm(visit)).toBeNull();
  });

  it.each([
    ["empty form", {}],
    ["no type", { token_hash: "x" }],
    ["unknown type", { token_hash: "x", type: "admin" }],
    ["huge token", { token_hash: "a".repeat(600), type: "signup" }],
  ])("POST, %s: 400 with the link-problem page", async (_name, form) => {
    const visit = await new BrowserLess().post("/auth/confirm", form);
    expect(visit.status).toBe(400);
    expect(linkProblemOf(visit)).toBe("invalid");
    expect(sessionCookies(visit.headers)).toEqual([]);
  });

  it("POST, a JSON or huge body: 400 or 413, never 500", async () => {
    const json = await fetch(`${APP_URL}/auth/confirm`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: APP_URL },
      body: JSON.stringify({ token_hash: "x", type: "signup" }),
      redirect: "manual",
    });
    expect(json.status).toBe(400);
    const huge = await fetch(`${APP_URL}/auth/confirm`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: APP_URL },
      body: `token_hash=${"a".repeat(200_000)}&type=signup`,
      redirect: "manual",
    });
    expect(huge.status).toBe(413);
  });
});

describe("/auth/confirm: where it sends you", () => {
  const payloads = [
    "/.//evil.example",
    "//evil.example",
    "/\\evil.example",
    "/..//evil.example",
    "/%2F%2Fevil.example",
    "/%252F%252Fevil.example",
    "https://evil.example/",
    "/\t/evil.example",
    "javascript:alert(1)",
  ];

  it.each(payloads)(
    "next=%j in the link: the page drops it, the sign-in ends at the notes",
    async (next) => {
      const { tokenHash } = await magicLinkHash();
      const browser = new BrowserLess();
      const page = await browser.get(confirmPath(tokenHash, "magiclink", next));
      expect(confirmForm(page)?.fields.next).toBe("");
      const visit = await pressConfirm(browser, confirmPath(tokenHash, "magiclink", next), {
        follow: false,
      });
      expect(visit.status).toBe(303);
      expect(visit.location).toBe("/notes");
      expect(new URL(visit.location ?? "", APP_URL).origin).toBe(APP_URL);
    },
  );

  it.each(payloads)("next=%j posted directly: still a same-origin path", async (next) => {
    const { tokenHash } = await magicLinkHash();
    const browser = new BrowserLess();
    const visit = await browser.post(
      "/auth/confirm",
      { token_hash: tokenHash, type: "magiclink", next },
      { follow: false },
    );
    expect(visit.status).toBe(303);
    expect(visit.location).toBe("/notes");
    expect(browser.hasSession()).toBe(true);
  });

  it("a safe next with a query survives the page and the post", async () => {
    const { tokenHash } = await magicLinkHash();
    const visit = await pressConfirm(
      new BrowserLess(),
      confirmPath(tokenHash, "magiclink", "/notes?q=a&tag=b"),
      { follow: false },
    );
    expect(visit.location).toBe("/notes?q=a&tag=b");
  });
});

describe("/auth/confirm: the POST is refused from other sites", () => {
  it.each([
    ["a foreign Origin", { origin: "https://evil.example" }],
    ["Origin null", { origin: "null" }],
    ["Sec-Fetch-Site cross-site", { origin: null, headers: { "Sec-Fetch-Site": "cross-site" } }],
  ])("%s: 403, no session, and the token still works here", async (_name, options) => {
    const { user, tokenHash } = await magicLinkHash();
    const victim = new BrowserLess();
    const forged = await victim.post(
      "/auth/confirm",
      { token_hash: tokenHash, type: "magiclink", next: "/notes" },
      { follow: false, ...options },
    );
    expect(forged.status).toBe(403);
    expect(forged.body).toContain("Request refused");
    expect(forged.headers.getSetCookie()).toEqual([]);
    expect(victim.hasSession()).toBe(false);
    // Nothing ran: the token was not used.
    const home = await pressConfirm(new BrowserLess(), confirmPath(tokenHash, "magiclink"));
    expect(testId(home.body, "session-email")).toBe(user.email);
  });
});

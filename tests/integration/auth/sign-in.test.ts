import { describe, expect, it } from "vitest";
import { messagesFor } from "../../support/inbox";
import { APP_URL, BACKEND_URL } from "../support/app";
import {
  confirmPathIn,
  expectNoStore,
  followEmailLink,
  freshUser,
  randomEmail,
  signedInBrowser,
  testId,
  waitForMessage,
} from "../support/auth-flows";
import { BrowserLess, cookieSettingHops } from "../support/browser-less";

describe("/sign-in with a password (JavaScript off)", () => {
  it("renders the form with plain labels and the choices", async () => {
    const page = await new BrowserLess().get("/sign-in?next=/notes");
    expect(page.status).toBe(200);
    for (const text of [
      'for="field-email"',
      ">Email<",
      ">Password<",
      "Sign in",
      "Email me a code",
      "Email me a magic link",
      "Continue with GitHub",
      "Continue with Google",
    ]) {
      expect(page.body).toContain(text);
    }
    expect(page.body).toMatch(/<form[^>]*action="\/sign-in[^"]*"[^>]*method="post"/);
    expect(page.body).toContain('name="next" value="/notes"');
  });

  it("signs in and redirects to next with the session cookies on a no-store redirect", async () => {
    const user = await freshUser();
    const browser = new BrowserLess();
    const visit = await browser.post("/sign-in", {
      intent: "password",
      email: user.email.toUpperCase(),
      password: user.password,
      next: "/no-such-page?x=1",
    });
    const [first] = visit.redirects;
    expect(first?.status).toBe(303);
    expect(first?.location).toBe("/no-such-page?x=1");
    expect(first?.headers.getSetCookie().join("\n")).toMatch(/sb-127-auth-token=base64-/);
    for (const hop of cookieSettingHops(visit)) expectNoStore(hop.headers);
    const home = await browser.get("/");
    expect(testId(home.body, "session-email")).toBe(user.email);
  });

  it("says the same thing for a wrong password and an unknown address", async () => {
    const user = await freshUser();
    const wrong = await new BrowserLess().post("/sign-in", {
      intent: "password",
      email: user.email,
      password: "not-the-password",
    });
    const unknown = await new BrowserLess().post("/sign-in", {
      intent: "password",
      email: randomEmail("nobody"),
      password: "not-the-password",
    });
    for (const visit of [wrong, unknown]) {
      expect(visit.status).toBe(400);
      expect(visit.body).toContain("The email or password is incorrect.");
      expect(visit.body).toContain('role="alert"');
      expect(testId(visit.body, "error-code")).toBe("invalid_credentials");
      expect(visit.headers.getSetCookie()).toEqual([]);
    }
    expect(wrong.body).toContain(`value="${user.email}"`);
    expect(wrong.body).not.toContain("not-the-password");
  });

  it("offers to resend the confirmation email to an unconfirmed address", async () => {
    const email = randomEmail("unconfirmed");
    const browser = new BrowserLess();
    await browser.post("/sign-up", { email, password: "a-fine-password" });
    await new Promise((resolve) => setTimeout(resolve, 1100)); // max_frequency = 1s
    const visit = await browser.post("/sign-in", {
      intent: "password",
      email,
      password: "a-fine-password",
    });
    expect(visit.status).toBe(400);
    expect(testId(visit.body, "error-code")).toBe("email_not_confirmed");
    expect(visit.body).toContain('value="resend-confirmation"');
    const before = (await messagesFor(email)).length;
    const resent = await browser.post("/sign-in", { intent: "resend-confirmation", email });
    expect(new URL(resent.url).pathname).toBe("/sign-up/check-email");
    expect((await messagesFor(email)).length).toBe(before + 1);
  });

  it("sends a signed-in visitor straight on to next", async () => {
    const { browser } = await signedInBrowser();
    const visit = await browser.get("/sign-in?next=/elsewhere", { follow: false });
    expect(visit.status).toBe(303);
    expect(visit.location).toBe("/elsewhere");
  });
});

describe("/sign-in with an emailed code", () => {
  it("emails a code, then signs in with it (pasted with spaces) and goes to next", async () => {
    const user = await freshUser();
    const browser = new BrowserLess();
    const sent = await browser.post("/sign-in", {
      intent: "code",
      email: user.email,
      next: "/after",
    });
    expect(sent.redirects[0]?.status).toBe(303);
    expect(new URL(sent.url).pathname).toBe("/sign-in/code");
    expectNoStore(sent.headers); // the page names the address
    expect(sent.body).toMatch(/autocomplete="one-time-code"/i);
    expect(sent.body).toMatch(/inputmode="numeric"/i);
    const message = await waitForMessage(user.email, "magic_link");
    const code = `${message.token?.slice(0, 3)} ${message.token?.slice(3)}`;
    const visit = await browser.post("/sign-in/code", {
      intent: "verify",
      email: user.email,
      code,
      next: "/after",
    });
    expect(visit.redirects[0]?.location).toBe("/after");
    expectNoStore(visit.redirects[0]?.headers ?? new Headers());
    expect(browser.hasSession()).toBe(true);
  });

  it("puts a wrong code's message beside the Code field", async () => {
    const user = await freshUser();
    const browser = new BrowserLess();
    await browser.post("/sign-in", { intent: "code", email: user.email });
    const visit = await browser.post("/sign-in/code", {
      intent: "verify",
      email: user.email,
      code: "000000",
    });
    expect(visit.status).toBe(403);
    expect(visit.body).toMatch(/<input id="field-code"[^>]*aria-invalid="true"/);
    expect(visit.body).toMatch(/<input id="field-code"[^>]*aria-describedby="field-code-error/);
    expect(visit.body).toContain('id="field-code-error"');
    expect(visit.body).toContain("That code is wrong or has expired.");
    expect(browser.hasSession()).toBe(false);
  });

  it("answers an address without an account exactly as one with an account", async () => {
    const email = randomEmail("ghost");
    const visit = await new BrowserLess().post("/sign-in", { intent: "code", email });
    expect(new URL(visit.url).pathname).toBe("/sign-in/code");
    expect(visit.status).toBe(200);
    expect(await messagesFor(email)).toEqual([]);
  });
});

describe("/sign-in with a magic link", () => {
  it("emails a link to /auth/confirm: opening it does nothing, its button signs in", async () => {
    const user = await freshUser();
    const browser = new BrowserLess();
    const sent = await browser.post("/sign-in", {
      intent: "magic-link",
      email: user.email,
      next: "/landing",
    });
    expect(new URL(sent.url).pathname).toBe("/sign-in/check-email");
    expect(sent.body).toContain("Check your inbox");
    const message = await waitForMessage(user.email, "magic_link");
    const opened = await browser.get(confirmPathIn(message));
    expect(opened.status).toBe(200);
    expect(browser.hasSession()).toBe(false);
    // The template's link is the same for every page that asks (no next of its own): the notes.
    const visit = await followEmailLink(browser, message, { follow: false });
    expect(visit.status).toBe(303);
    expect(visit.location).toBe("/notes");
    expectNoStore(visit.headers);
    expect(browser.hasSession()).toBe(true);
  });
});

describe("/sign-in with GitHub or Google (OAuth, PKCE)", () => {
  it.each(["github", "google"])(
    "redirects to the auth server's /authorize for %s",
    async (provider) => {
      const browser = new BrowserLess();
      const visit = await browser.post(
        "/sign-in",
        { intent: "oauth", provider, next: "/notes" },
        { follow: false },
      );
      expect(visit.status).toBe(303);
      expectNoStore(visit.headers);
      const location = new URL(visit.location ?? "");
      expect(`${location.origin}${location.pathname}`).toBe(`${BACKEND_URL}/auth/v1/authorize`);
      expect(location.searchParams.get("provider")).toBe(provider);
      expect(location.searchParams.get("code_challenge")).toMatch(/^[\w-]{43}$/);
      expect(location.searchParams.get("code_challenge_method")).toBe("s256");
      const redirectTo = new URL(location.searchParams.get("redirect_to") ?? "");
      expect(redirectTo.pathname).toBe("/auth/callback");
      expect(redirectTo.searchParams.get("next")).toBe("/notes");
      // The verifier stays in this browser, in a cookie.
      expect([...browser.cookies.keys()].some((name) => name.includes("code-verifier"))).toBe(true);
    },
  );

  it("refuses a provider that is not offered", async () => {
    const visit = await new BrowserLess().post("/sign-in", { intent: "oauth", provider: "evil" });
    expect(visit.status).toBe(400);
    expect(visit.body).toContain("Choose one of the sign-in providers");
  });
});

describe("/sign-in with JavaScript on (React Router's single-fetch action request)", () => {
  it("answers the .data request with the session cookies and no-store", async () => {
    const user = await freshUser();
    const response = await fetch(`${APP_URL}/sign-in.data`, {
      method: "POST",
      headers: { Origin: APP_URL, "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        intent: "password",
        email: user.email,
        password: user.password,
        next: "/after",
      }),
      redirect: "manual",
    });
    expect(response.status).toBe(202);
    expect(await response.text()).toContain("/after");
    expect(response.headers.getSetCookie().join("\n")).toMatch(/sb-127-auth-token=base64-/);
    expectNoStore(response.headers);
  });

  it("refuses a cross-origin .data request with 403", async () => {
    const response = await fetch(`${APP_URL}/sign-in.data`, {
      method: "POST",
      headers: {
        Origin: "https://evil.example",
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: "intent=password&email=a%40b.co&password=x",
      redirect: "manual",
    });
    expect(response.status).toBe(403);
    expect(response.headers.getSetCookie()).toEqual([]);
  });
});

describe("requireUser round trip", () => {
  it("the guard's /sign-in?next=… survives every sign-in method back to the page", async () => {
    // requireUser (app/lib/guards.server.ts) sends signed-out visitors to exactly this URL.
    const wanted = "/account/security?tab=2";
    const guardUrl = `/sign-in?${new URLSearchParams({ next: wanted })}`;
    const user = await freshUser();
    const browser = new BrowserLess();
    const form = await browser.get(guardUrl);
    const next = /<input type="hidden" name="next" value="([^"]*)"/.exec(form.body)?.[1];
    expect(next?.replaceAll("&amp;", "&")).toBe(wanted);
    const password = await browser.post(
      guardUrl,
      { intent: "password", email: user.email, password: user.password, next: wanted },
      { follow: false },
    );
    expect(password.location).toBe(wanted);

    const codeBrowser = new BrowserLess();
    const sent = await codeBrowser.post(guardUrl, {
      intent: "code",
      email: user.email,
      next: wanted,
    });
    expect(new URL(sent.url).searchParams.get("next")).toBe(wanted);
    expect(sent.body).toContain(`name="next" value="${wanted}"`);
  });
});

describe("where a sign-in lands without next", () => {
  it("a password sign-in lands on the notes", async () => {
    const user = await freshUser();
    const visit = await new BrowserLess().post(
      "/sign-in",
      { intent: "password", email: user.email, password: user.password },
      { follow: false },
    );
    expect(visit.status).toBe(303);
    expect(visit.location).toBe("/notes");
  });

  it("an emailed code lands on the notes", async () => {
    const user = await freshUser();
    const browser = new BrowserLess();
    await browser.post("/sign-in", { intent: "code", email: user.email });
    const message = await waitForMessage(user.email, "magic_link");
    const visit = await browser.post("/sign-in/code", {
      intent: "verify",
      email: user.email,
      code: message.token ?? "",
    });
    expect(visit.redirects[0]?.location).toBe("/notes");
    expect(new URL(visit.url).pathname).toBe("/notes");
    expect(testId(visit.body, "session-email")).toBe(user.email);
  });

  it("a magic link lands on the notes", async () => {
    const user = await freshUser();
    const browser = new BrowserLess();
    await browser.post("/sign-in", { intent: "magic-link", email: user.email });
    const visit = await followEmailLink(browser, await waitForMessage(user.email, "magic_link"));
    expect(visit.redirects[0]?.location).toBe("/notes");
    expect(testId(visit.body, "session-email")).toBe(user.email);
  });

  it("a signed-in visitor on /sign-in is sent to the notes", async () => {
    const { browser } = await signedInBrowser();
    const visit = await browser.get("/sign-in", { follow: false });
    expect(visit.status).toBe(303);
    expect(visit.location).toBe("/notes");
  });
});

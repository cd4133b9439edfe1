import { describe, expect, it } from "vitest";
import { messagesFor } from "../../support/inbox";
import { APP_URL } from "../support/app";
import { freshUser, randomEmail } from "../support/auth-flows";
import { BrowserLess } from "../support/browser-less";

const POSTS: Array<[string, Record<string, string>]> = [
  ["/sign-in", { intent: "password", email: "x@example.com", password: "whatever-1" }],
  ["/sign-in/code", { intent: "verify", email: "x@example.com", code: "123456" }],
  ["/sign-in/check-email", { email: "x@example.com" }],
  ["/sign-up", { email: "x@example.com", password: "whatever-123" }],
  ["/sign-up/check-email", { email: "x@example.com" }],
  ["/forgot-password", { email: "x@example.com" }],
  ["/reset-password", { password: "whatever-123" }],
  ["/sign-out", { scope: "global" }],
];

describe("bad input to the sign-in flows", () => {
  it.each(POSTS)("POST %s from another origin: 403 before anything happens", async (path, form) => {
    const visit = await new BrowserLess().post(path, form, {
      origin: "https://evil.example",
      follow: false,
    });
    expect(visit.status).toBe(403);
    expect(visit.body).toContain("This form was sent from another site");
    expect(visit.headers.getSetCookie()).toEqual([]);
  });

  it("a cross-site POST with the right password signs nobody in", async () => {
    const user = await freshUser();
    const browser = new BrowserLess();
    for (const headers of [
      { origin: "https://evil.example" },
      { origin: "null" },
      { origin: null, headers: { "Sec-Fetch-Site": "cross-site" } },
    ]) {
      const visit = await browser.post(
        "/sign-in",
        { intent: "password", email: user.email, password: user.password },
        { follow: false, ...headers },
      );
      expect(visit.status).toBe(403);
    }
    expect(browser.hasSession()).toBe(false);
  });

  it("a cross-origin sign-up request sends no email", async () => {
    const email = randomEmail("csrf");
    await new BrowserLess().post(
      "/sign-up",
      { email, password: "whatever-123" },
      { origin: "http://localhost:1" },
    );
    expect(await messagesFor(email)).toEqual([]);
  });

  it.each([
    ["empty", "", "Enter your email address."],
    ["blank", "   ", "Enter your email address."],
    ["too long", `${"a".repeat(250)}@example.com`, "at most 255 characters"],
    ["no @", "not-an-email", "Enter an email address like name@example.com."],
    ["two @", "a@b@example.com", "Enter an email address like name@example.com."],
    ["script", "<script>@x.com", "Enter an email address like name@example.com."],
  ])("email %s: a message beside the field, 400", async (_name, email, message) => {
    for (const [path, form] of [
      ["/sign-in", { intent: "password", email, password: "x" }],
      ["/sign-in", { intent: "code", email }],
      ["/sign-up", { email, password: "long-enough-1" }],
      ["/forgot-password", { email }],
    ] as const) {
      const visit = await new BrowserLess().post(path, form);
      expect(visit.status).toBe(400);
      expect(visit.body).toContain(message);
      expect(visit.body).not.toContain("<script>@");
    }
  });

  it("a password over the limit: a message, never a server error", async () => {
    const visit = await new BrowserLess().post("/sign-in", {
      intent: "password",
      email: "x@example.com",
      password: "p".repeat(100),
    });
    expect(visit.status).toBe(400);
    expect(visit.body).toContain("Passwords can be at most 72 bytes long.");
  });

  it.each([
    "//evil.example",
    "https://evil.example",
    "/\\evil.example",
    "javascript:alert(1)",
    "/%0d%0aSet-Cookie:x=1",
    "/.//evil.example",
    "/..//evil.example",
    "/%2F%2Fevil.example",
    "/\t/evil.example",
  ])("next=%s never leaves the site", async (next) => {
    const user = await freshUser();
    const browser = new BrowserLess();
    const visit = await browser.post(
      "/sign-in",
      { intent: "password", email: user.email, password: user.password, next },
      { follow: false },
    );
    expect(visit.status).toBe(303);
    const location = new URL(visit.location ?? "", APP_URL);
    expect(location.origin).toBe(new URL(APP_URL).origin);
    expect(visit.headers.getSetCookie().some((c) => c.startsWith("x="))).toBe(false);
    const page = await new BrowserLess().get(`/sign-in?next=${encodeURIComponent(next)}`);
    // Only the form's hidden next matters (the form action echoes the URL, encoded, harmlessly).
    const kept = /<input type="hidden" name="next" value="([^"]*)"/.exec(page.body)?.[1];
    expect(kept === "" || new URL(kept ?? "", APP_URL).origin === new URL(APP_URL).origin).toBe(
      true,
    );
    expect(kept).not.toMatch(/^(\/\/|\/\\|[a-z]+:)/i);
  });

  it.each(["abcdef", "12345", "1234567890123", "' or 1=1 --"])(
    "a malformed code (%s): a message beside the Code field, 400",
    async (code) => {
      const visit = await new BrowserLess().post("/sign-in/code", {
        email: "x@example.com",
        code,
      });
      expect(visit.status).toBe(400);
      expect(visit.body).toContain("Enter the 6-digit code from the email.");
    },
  );

  it("a replayed code does not sign in twice", async () => {
    const user = await freshUser();
    const browser = new BrowserLess();
    await browser.post("/sign-in", { intent: "code", email: user.email });
    const [message] = await messagesFor(user.email);
    const form = { email: user.email, code: message?.token ?? "" };
    await browser.post("/sign-in/code", form);
    expect(browser.hasSession()).toBe(true);
    const replay = new BrowserLess();
    const visit = await replay.post("/sign-in/code", form);
    expect(visit.status).toBe(403);
    expect(replay.hasSession()).toBe(false);
  });

  it.each([
    ["JSON", "application/json", JSON.stringify({ email: "x@example.com" })],
    ["garbage", "application/x-www-form-urlencoded", "%%%&&&=="],
    ["empty", "application/x-www-form-urlencoded", ""],
    [
      "multipart with a file",
      "multipart/form-data; boundary=b",
      '--b\r\nContent-Disposition: form-data; name="email"; filename="a.txt"\r\n\r\nx@example.com\r\n--b--\r\n',
    ],
  ])("a %s body: 4xx, never 500", async (_name, type, body) => {
    for (const path of ["/sign-in", "/sign-up", "/forgot-password", "/sign-in/code"]) {
      const response = await fetch(`${APP_URL}${path}`, {
        method: "POST",
        headers: { "Content-Type": type, Origin: APP_URL },
        body,
        redirect: "manual",
      });
      expect(response.status, path).toBeGreaterThanOrEqual(400);
      expect(response.status, path).toBeLessThan(500);
    }
  });

  it("a huge form body is not read: 413 with a message, never 500", async () => {
    const response = await fetch(`${APP_URL}/sign-in`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: APP_URL },
      body: `email=${"a".repeat(2_000_000)}`,
      redirect: "manual",
    });
    expect(response.status).toBe(413);
    expect(await response.text()).toContain("The form was too large to read");
  });

  it("a form body without a length is read only up to the limit: one that never ends is answered", async () => {
    // Chunked, so no Content-Length says how much is coming: 96 KiB (the limit is 64), then the
    // body stays open. Reading it to the end would hold the request (and its memory) for good.
    const chunk = new TextEncoder().encode(`email=${"a".repeat(32 * 1024)}`);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent < 3) {
          sent += 1;
          controller.enqueue(chunk);
        }
        // then nothing more, and never closed
      },
    });
    const response = await fetch(`${APP_URL}/sign-in`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: APP_URL },
      body,
      duplex: "half",
      redirect: "manual",
      signal: AbortSignal.timeout(5000),
    } as RequestInit);
    expect(response.status).toBe(413);
    await response.body?.cancel();
  });

  it("POST to a page without an action: 405, not 500", async () => {
    const visit = await new BrowserLess().post("/auth/callback", { code: "x" });
    expect(visit.status).toBe(405);
  });
});

import { describe, expect, it } from "vitest";
import {
  anonClient,
  BACKEND_URL,
  freshUser,
  randomEmail,
} from "../../../../tests/support/backend.ts";
import { latestMessage, messagesFor } from "../../../../tests/support/inbox.ts";

describe("the local inbox", () => {
  it("lists messages as HTML with their codes and links, and as JSON per recipient", async () => {
    const { email } = await freshUser();
    await anonClient().auth.signInWithOtp({ email });
    const mail = await latestMessage(email, "magic_link");
    expect(mail).toMatchObject({ to: email, subject: "Your sign-in link", type: "magic_link" });
    expect(mail.token).toMatch(/^\d{6}$/);

    const page = await fetch(`${BACKEND_URL}/inbox?to=${encodeURIComponent(email)}`);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain("Local inbox");
    // an empty icon of its own: the browser asks the backend for no /favicon.ico (a 404 each time)
    expect(html).toContain('<link rel="icon" href="data:,">');
    expect(html).toContain(mail.token ?? "missing");
    expect(html).toContain("/auth/confirm?token_hash=");

    const one = await fetch(`${BACKEND_URL}/inbox/api/messages/${mail.id}`);
    expect(await one.json()).toMatchObject({ id: mail.id, to: email });
    const rendered = await fetch(`${BACKEND_URL}/inbox/messages/${mail.id}`);
    expect(await rendered.text()).toBe(mail.html);
    expect((await fetch(`${BACKEND_URL}/inbox/api/messages/${crypto.randomUUID()}`)).status).toBe(
      404,
    );
  });

  it("escapes what users control and deletes per recipient", async () => {
    const email = randomEmail();
    await anonClient().auth.signUp({
      email,
      password: "long-enough-password",
      options: { data: { name: "<script>" } },
    });
    const html = await (await fetch(`${BACKEND_URL}/inbox`)).text();
    expect(html).not.toContain("<script>");
    const deleted = await fetch(
      `${BACKEND_URL}/inbox/api/messages?to=${encodeURIComponent(email)}`,
      { method: "DELETE" },
    );
    expect(await deleted.json()).toEqual({ deleted: 1 });
    expect(await messagesFor(email)).toHaveLength(0);
  });
});

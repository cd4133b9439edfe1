import { describe, expect, it } from "vitest";
import { anonClient, freshUser, randomEmail } from "../../../../tests/support/backend.ts";
import {
  defaultTemplateLink,
  latestMessage,
  messagesFor,
} from "../../../../tests/support/inbox.ts";

describe("POST /recover (resetPasswordForEmail)", () => {
  it("mails a recovery link that signs in; the new password then works", async () => {
    const { email } = await freshUser();
    const client = anonClient();
    const { error } = await client.auth.resetPasswordForEmail(email, {
      redirectTo: "http://localhost:5173/reset-password",
    });
    expect(error).toBeNull();
    const mail = await latestMessage(email, "recovery");
    expect(mail.subject).toBe("Reset your password");
    const response = await fetch(defaultTemplateLink(mail), { redirect: "manual" });
    const location = new URL(response.headers.get("location") ?? "");
    expect(location.pathname).toBe("/reset-password");
    const fragment = new URLSearchParams(location.hash.slice(1));
    expect(fragment.get("type")).toBe("recovery");

    const { error: setError } = await client.auth.setSession({
      access_token: fragment.get("access_token") ?? "",
      refresh_token: fragment.get("refresh_token") ?? "",
    });
    expect(setError).toBeNull();
    expect((await client.auth.updateUser({ password: "a-brand-new-password" })).error).toBeNull();
    const signIn = await anonClient().auth.signInWithPassword({
      email,
      password: "a-brand-new-password",
    });
    expect(signIn.error).toBeNull();
  });

  it("PKCE recovery: ?code= exchanged for a session", async () => {
    const { email, user } = await freshUser();
    const client = anonClient({ flowType: "pkce" });
    await client.auth.resetPasswordForEmail(email, {
      redirectTo: "http://localhost:5173/reset-password",
    });
    const response = await fetch(defaultTemplateLink(await latestMessage(email, "recovery")), {
      redirect: "manual",
    });
    const code = new URL(response.headers.get("location") ?? "").searchParams.get("code") ?? "";
    const { data, error } = await client.auth.exchangeCodeForSession(code);
    expect(error).toBeNull();
    expect(data.user?.id).toBe(user.id);
  });

  it("answers an unknown address with 200 and sends nothing (no account enumeration)", async () => {
    const email = randomEmail();
    expect((await anonClient().auth.resetPasswordForEmail(email)).error).toBeNull();
    expect(await messagesFor(email)).toHaveLength(0);
  });

  it("falls back to site_url for a redirect outside the allow-list", async () => {
    const { email } = await freshUser();
    await anonClient().auth.resetPasswordForEmail(email, {
      redirectTo: "https://evil.example/steal",
    });
    const link = new URL(defaultTemplateLink(await latestMessage(email, "recovery")));
    expect(link.searchParams.get("redirect_to")).toBe("http://localhost:5173");
  });
});

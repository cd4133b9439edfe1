import { describe, expect, it } from "vitest";
import { anonClient, freshUser, randomEmail } from "../../../../tests/support/backend.ts";
import {
  confirmLink,
  defaultTemplateLink,
  latestMessage,
  messagesFor,
} from "../../../../tests/support/inbox.ts";

describe("POST /otp (signInWithOtp)", () => {
  it("mails an existing user a magic link and a code; the code signs in", async () => {
    const { email, user } = await freshUser();
    const client = anonClient();
    const { error } = await client.auth.signInWithOtp({ email });
    expect(error).toBeNull();
    const mail = await latestMessage(email, "magic_link");
    expect(mail.subject).toBe("Your sign-in link");
    // The project's template: the app's /auth/confirm link, and the code in the text.
    expect(confirmLink(mail).searchParams.get("type")).toBe("magiclink");
    expect(mail.html).toContain(mail.token ?? "missing");
    const { data, error: verifyError } = await client.auth.verifyOtp({
      email,
      token: mail.token ?? "",
      type: "email",
    });
    expect(verifyError).toBeNull();
    expect(data.user?.id).toBe(user.id);
    const claims = (await client.auth.getClaims()).data?.claims;
    expect(claims?.amr).toEqual([{ method: "otp", timestamp: expect.any(Number) }]);
  });

  it("magic link with PKCE: ?code= then exchangeCodeForSession", async () => {
    const { email, user } = await freshUser();
    const client = anonClient({ flowType: "pkce" });
    await client.auth.signInWithOtp({
      email,
      options: { emailRedirectTo: "http://localhost:5173/auth/callback?next=/notes" },
    });
    const mail = await latestMessage(email, "magic_link");
    const response = await fetch(defaultTemplateLink(mail), { redirect: "manual" });
    expect(response.status).toBe(303);
    const location = new URL(response.headers.get("location") ?? "");
    expect(location.searchParams.get("next")).toBe("/notes");
    const { data, error } = await client.auth.exchangeCodeForSession(
      location.searchParams.get("code") ?? "",
    );
    expect(error).toBeNull();
    expect(data.user?.id).toBe(user.id);
  });

  it("creates the user for a new address (a confirmation email) unless shouldCreateUser is false", async () => {
    const client = anonClient();
    const email = randomEmail();
    expect((await client.auth.signInWithOtp({ email })).error).toBeNull();
    const mail = await latestMessage(email);
    expect(mail.type).toBe("confirmation");
    const verified = await client.auth.verifyOtp({ email, token: mail.token ?? "", type: "email" });
    expect(verified.data.user?.email_confirmed_at).toBeTruthy();

    const other = randomEmail();
    const refused = await client.auth.signInWithOtp({
      email: other,
      options: { shouldCreateUser: false },
    });
    expect(refused.error).toMatchObject({
      status: 422,
      code: "otp_disabled",
      message: "Signups not allowed for otp",
    });
    expect(await messagesFor(other)).toHaveLength(0);
  });

  it("refuses a bad address and a missing one", async () => {
    const client = anonClient();
    const bad = await client.auth.signInWithOtp({ email: "nope@" });
    expect(bad.error).toMatchObject({ status: 400, code: "validation_failed" });
    const none = await client.auth.signInWithOtp({ email: "" });
    expect(none.error).toMatchObject({
      status: 400,
      code: "validation_failed",
      message: "One of email or phone must be set",
    });
  });
});

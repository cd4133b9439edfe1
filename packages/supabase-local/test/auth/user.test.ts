import { describe, expect, it } from "vitest";
import {
  anonClient,
  BACKEND_URL,
  freshUser,
  PASSWORD,
  PUBLISHABLE_KEY,
  randomEmail,
  signedInClient,
} from "../../../../tests/support/backend.ts";
import {
  defaultTemplateLink,
  latestMessage,
  messagesFor,
} from "../../../../tests/support/inbox.ts";

describe("GET/PUT /user", () => {
  it("returns the signed-in user", async () => {
    const { client, user } = await signedInClient();
    const { data, error } = await client.auth.getUser();
    expect(error).toBeNull();
    expect(data.user).toMatchObject({
      id: user.id,
      email: user.email,
      aud: "authenticated",
      is_anonymous: false,
    });
    expect(data.user?.last_sign_in_at).toBeTruthy();
  });

  it("merges user_metadata (null removes a key) and refuses app_metadata", async () => {
    const { client } = await signedInClient();
    await client.auth.updateUser({ data: { name: "Ada", theme: "dark" } });
    const { data, error } = await client.auth.updateUser({ data: { theme: null, lang: "en" } });
    expect(error).toBeNull();
    expect(data.user?.user_metadata).toEqual({ name: "Ada", lang: "en" });

    const session = (await client.auth.getSession()).data.session;
    const response = await fetch(`${BACKEND_URL}/auth/v1/user`, {
      method: "PUT",
      headers: {
        apikey: PUBLISHABLE_KEY,
        Authorization: `Bearer ${session?.access_token}`,
        "Content-Type": "application/json",
      },
      body: JSON.stringify({ app_metadata: { role: "admin" } }),
    });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({
      error_code: "not_admin",
      msg: "Updating app_metadata requires admin privileges",
    });
  });

  it("changes the password (the old one stops working; the same one is refused)", async () => {
    const { client, email } = await signedInClient();
    const same = await client.auth.updateUser({ password: PASSWORD });
    expect(same.error).toMatchObject({
      status: 422,
      code: "same_password",
      message: "New password should be different from the old password.",
    });
    const weak = await client.auth.updateUser({ password: "abc" });
    expect(weak.error).toMatchObject({ status: 422, code: "weak_password" });
    expect((await client.auth.updateUser({ password: "new-password-123" })).error).toBeNull();
    expect(
      (await anonClient().auth.signInWithPassword({ email, password: PASSWORD })).error?.code,
    ).toBe("invalid_credentials");
    expect(
      (await anonClient().auth.signInWithPassword({ email, password: "new-password-123" })).error,
    ).toBeNull();
  });

  it("changes the email after both addresses confirm (double_confirm_changes)", async () => {
    const { client, email } = await signedInClient();
    const next = randomEmail("new");
    const { data, error } = await client.auth.updateUser(
      { email: next },
      { emailRedirectTo: "http://localhost:5173/settings" },
    );
    expect(error).toBeNull();
    expect(data.user).toMatchObject({ email, new_email: next });
    expect(data.user?.email_change_sent_at).toBeTruthy();

    const toNew = await latestMessage(next, "email_change");
    const toOld = await latestMessage(email, "email_change");
    expect(toNew.subject).toBe("Confirm your new email address");
    expect(toNew.token).not.toBe(toOld.token);

    const first = await fetch(defaultTemplateLink(toNew), { redirect: "manual" });
    const firstLocation = new URL(first.headers.get("location") ?? "");
    expect(new URLSearchParams(firstLocation.hash.slice(1)).get("message")).toBe(
      "Confirmation link accepted. Please proceed to confirm link sent to the other email",
    );
    expect((await client.auth.getUser()).data.user?.email).toBe(email);

    const second = await fetch(defaultTemplateLink(toOld), { redirect: "manual" });
    const fragment = new URLSearchParams(
      new URL(second.headers.get("location") ?? "").hash.slice(1),
    );
    expect(fragment.get("type")).toBe("email_change");
    const { data: after } = await client.auth.getUser();
    expect(after.user?.email).toBe(next);
    expect(after.user?.new_email).toBeUndefined();
    expect(after.user?.identities?.[0]?.identity_data?.email).toBe(next);
    expect(
      (await anonClient().auth.signInWithPassword({ email: next, password: PASSWORD })).error,
    ).toBeNull();
  });

  it("resends the email-change emails (after max_frequency)", async () => {
    const { client, email } = await signedInClient();
    const next = randomEmail("resend");
    await client.auth.updateUser({ email: next });
    await new Promise((r) => setTimeout(r, 1100));
    expect((await client.auth.resend({ type: "email_change", email })).error).toBeNull();
    const toNew = await messagesFor(next);
    expect(toNew).toHaveLength(2);
    expect(toNew[0]?.token).not.toBe(toNew[1]?.token);
    const verified = await client.auth.verifyOtp({
      email: next,
      token: toNew[0]?.token ?? "",
      type: "email_change",
    });
    expect(verified.error).toBeNull();
  });

  it("refuses an address that belongs to someone else", async () => {
    const { client } = await signedInClient();
    const other = await freshUser();
    const { error } = await client.auth.updateUser({ email: other.email });
    expect(error).toMatchObject({
      status: 422,
      code: "email_exists",
      message: "A user with this email address has already been registered",
    });
    expect(await messagesFor(other.email)).toHaveLength(0);
  });

  it("GET /reauthenticate mails a nonce code", async () => {
    const { client, email } = await signedInClient();
    expect((await client.auth.reauthenticate()).error).toBeNull();
    const mail = await latestMessage(email, "reauthentication");
    expect(mail.subject).toBe(`${mail.token} is your verification code`);
    expect(mail.token).toMatch(/^\d{6}$/);
  });
});

describe("POST /logout scopes", () => {
  async function twoSessions() {
    const first = await signedInClient();
    const second = anonClient();
    await second.auth.signInWithPassword({ email: first.email, password: first.password });
    const third = anonClient();
    await third.auth.signInWithPassword({ email: first.email, password: first.password });
    return { first: first.client, second, third };
  }
  const stillValid = async (client: ReturnType<typeof anonClient>) => {
    const token = (await client.auth.getSession()).data.session?.refresh_token ?? "";
    const response = await fetch(`${BACKEND_URL}/auth/v1/token?grant_type=refresh_token`, {
      method: "POST",
      headers: { apikey: PUBLISHABLE_KEY, "Content-Type": "application/json" },
      body: JSON.stringify({ refresh_token: token }),
    });
    return response.status === 200;
  };

  it("local ends only this session", async () => {
    const { first, second, third } = await twoSessions();
    const firstToken = (await first.auth.getSession()).data.session?.refresh_token;
    expect((await first.auth.signOut({ scope: "local" })).error).toBeNull();
    expect((await first.auth.getSession()).data.session).toBeNull();
    expect(await stillValid(second)).toBe(true);
    expect(await stillValid(third)).toBe(true);
    expect(firstToken).toBeTruthy();
  });

  it("others ends every other session", async () => {
    const { first, second, third } = await twoSessions();
    expect((await first.auth.signOut({ scope: "others" })).error).toBeNull();
    expect(await stillValid(first)).toBe(true);
    expect(await stillValid(second)).toBe(false);
    expect(await stillValid(third)).toBe(false);
  });

  it("global ends all sessions; the old access token then fails at /user (session gone)", async () => {
    const { first, second } = await twoSessions();
    const token = (await second.auth.getSession()).data.session?.access_token ?? "";
    expect((await first.auth.signOut()).error).toBeNull();
    expect(await stillValid(second)).toBe(false);
    const response = await fetch(`${BACKEND_URL}/auth/v1/user`, {
      headers: {
        apikey: PUBLISHABLE_KEY,
        Authorization: `Bearer ${token}`,
        "X-Supabase-Api-Version": "2024-01-01",
      },
    });
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({
      code: "session_not_found",
      message: "Session from session_id claim in JWT does not exist",
    });
    // supabase-js turns that into its AuthSessionMissingError
    const { error } = await anonClient().auth.getUser(token);
    expect(error?.name).toBe("AuthSessionMissingError");
  });
});

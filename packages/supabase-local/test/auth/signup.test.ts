import { describe, expect, it } from "vitest";
import {
  adminClient,
  anonClient,
  authFetch,
  BACKEND_URL,
  PASSWORD,
  PUBLISHABLE_KEY,
  randomEmail,
  signedInClient,
} from "../../../../tests/support/backend.ts";
import {
  confirmLink,
  defaultTemplateLink,
  latestMessage,
  messagesFor,
} from "../../../../tests/support/inbox.ts";
import { memoryBackend } from "../../../../tests/support/memory-backend.ts";

describe("sign up with email confirmation (config.toml: enable_confirmations = true)", () => {
  it("creates an unconfirmed user; its token's /verify link confirms and signs in", async () => {
    const client = anonClient();
    const email = randomEmail();
    const { data, error } = await client.auth.signUp({
      email,
      password: PASSWORD,
      options: { data: { name: "Ada" }, emailRedirectTo: "http://localhost:5173/welcome" },
    });
    expect(error).toBeNull();
    expect(data.session).toBeNull();
    expect(data.user).toMatchObject({
      email,
      role: "authenticated",
      aud: "authenticated",
      user_metadata: { name: "Ada" },
    });
    expect(data.user?.email_confirmed_at).toBeUndefined();
    expect(data.user?.identities?.[0]).toMatchObject({
      provider: "email",
      identity_data: { email, email_verified: false },
    });

    const signIn = await client.auth.signInWithPassword({ email, password: PASSWORD });
    expect(signIn.error).toMatchObject({
      status: 400,
      code: "email_not_confirmed",
      message: "Email not confirmed",
    });

    const mail = await latestMessage(email, "confirmation");
    expect(mail.subject).toBe("Confirm your email address");
    expect(mail.token).toMatch(/^\d{6}$/);
    // The project's template (supabase/templates) links to the app's /auth/confirm at site_url;
    // the default template's link goes to the auth server's /verify with the same token.
    const emailed = confirmLink(mail);
    expect(emailed.origin).toBe("http://localhost:5173");
    expect(emailed.searchParams.get("token_hash")).toBe(mail.tokenHash);
    expect(emailed.searchParams.get("type")).toBe("signup");
    const link = new URL(defaultTemplateLink(mail));
    expect(link.origin + link.pathname).toBe(`${BACKEND_URL}/auth/v1/verify`);
    expect(link.searchParams.get("type")).toBe("signup");
    expect(link.searchParams.get("redirect_to")).toBe("http://localhost:5173/welcome");

    const response = await fetch(link, { redirect: "manual" });
    expect(response.status).toBe(303);
    const location = new URL(response.headers.get("location") ?? "");
    expect(location.origin + location.pathname).toBe("http://localhost:5173/welcome");
    const fragment = new URLSearchParams(location.hash.slice(1));
    expect(fragment.get("type")).toBe("signup");
    expect(fragment.get("token_type")).toBe("bearer");
    expect(fragment.get("refresh_token")).toMatch(/^[a-z0-9]{12}$/);
    const { data: me } = await client.auth.getUser(fragment.get("access_token") ?? "");
    expect(me.user?.email_confirmed_at).toBeTruthy();
    expect(me.user?.identities?.[0]?.identity_data?.email_verified).toBe(true);

    const again = await client.auth.signInWithPassword({ email, password: PASSWORD });
    expect(again.error).toBeNull();
    expect(again.data.user?.user_metadata).toMatchObject({ name: "Ada" });

    const reused = await fetch(link, { redirect: "manual" });
    const failed = new URL(reused.headers.get("location") ?? "");
    expect(Object.fromEntries(new URLSearchParams(failed.hash.slice(1)))).toMatchObject({
      error: "access_denied",
      error_code: "otp_expired",
      error_description: "Email link is invalid or has expired",
    });
  });

  it("confirms with the emailed code (verifyOtp type email)", async () => {
    const client = anonClient();
    const email = randomEmail();
    await client.auth.signUp({ email, password: PASSWORD });
    const { token } = await latestMessage(email, "confirmation");
    const wrong = await client.auth.verifyOtp({
      email,
      token: token === "000000" ? "111111" : "000000",
      type: "email",
    });
    expect(wrong.error).toMatchObject({
      status: 403,
      code: "otp_expired",
      message: "Token has expired or is invalid",
    });
    const { data, error } = await client.auth.verifyOtp({
      email,
      token: token ?? "",
      type: "email",
    });
    expect(error).toBeNull();
    expect(data.session?.user.email).toBe(email);
    expect(data.user?.email_confirmed_at).toBeTruthy();
  });

  it("confirms with the token hash (the /auth/confirm route's verifyOtp({ token_hash }))", async () => {
    const client = anonClient();
    const email = randomEmail();
    await client.auth.signUp({ email, password: PASSWORD });
    const { tokenHash } = await latestMessage(email, "confirmation");
    const { data, error } = await client.auth.verifyOtp({
      token_hash: tokenHash ?? "",
      type: "email",
    });
    expect(error).toBeNull();
    expect(data.session?.access_token).toBeTruthy();
    const twice = await client.auth.verifyOtp({ token_hash: tokenHash ?? "", type: "email" });
    expect(twice.error).toMatchObject({ status: 403, code: "otp_expired" });
  });

  it("PKCE: the link redirects with ?code= and exchangeCodeForSession signs in", async () => {
    const client = anonClient({ flowType: "pkce" });
    const email = randomEmail();
    const { error } = await client.auth.signUp({
      email,
      password: PASSWORD,
      options: { emailRedirectTo: "http://localhost:5173/auth/callback" },
    });
    expect(error).toBeNull();
    const mail = await latestMessage(email, "confirmation");
    expect(mail.tokenHash).toMatch(/^pkce_/);
    const response = await fetch(defaultTemplateLink(mail), { redirect: "manual" });
    const location = new URL(response.headers.get("location") ?? "");
    expect(location.pathname).toBe("/auth/callback");
    const code = location.searchParams.get("code") ?? "";
    expect(code).toMatch(/^[0-9a-f-]{36}$/);
    const exchanged = await client.auth.exchangeCodeForSession(code);
    expect(exchanged.error).toBeNull();
    expect(exchanged.data.user?.email).toBe(email);
    const again = await client.auth.exchangeCodeForSession(code);
    expect(again.error?.message).toBeTruthy();
  });

  it("answers a repeated sign-up of a confirmed address with an obfuscated user, sending nothing", async () => {
    const { email } = await signedInClient();
    const { data, error } = await anonClient().auth.signUp({ email, password: "another-password" });
    expect(error).toBeNull();
    expect(data.session).toBeNull();
    expect(data.user?.identities).toEqual([]);
    expect(await messagesFor(email)).toHaveLength(0);
  });

  it("rejects weak passwords, bad emails and missing passwords with the real codes", async () => {
    const client = anonClient();
    const weak = await client.auth.signUp({ email: randomEmail(), password: "short" });
    expect(weak.error).toMatchObject({
      status: 422,
      code: "weak_password",
      message: "Password should be at least 8 characters.",
    });
    expect((weak.error as unknown as { reasons: string[] }).reasons).toEqual(["length"]);

    const badEmail = await client.auth.signUp({ email: "not-an-email", password: PASSWORD });
    expect(badEmail.error).toMatchObject({
      status: 400,
      code: "validation_failed",
      message: "Unable to validate email address: invalid format",
    });

    const response = await authFetch("/signup", {
      method: "POST",
      body: JSON.stringify({ email: randomEmail() }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error_code: "validation_failed",
      msg: "Signup requires a valid password",
    });
  });

  it("rejects a second confirmation email inside max_frequency with 429", async () => {
    const client = anonClient();
    const email = randomEmail();
    await client.auth.signUp({ email, password: PASSWORD });
    const { error } = await client.auth.resend({ type: "signup", email });
    expect(error).toMatchObject({ status: 429, code: "over_email_send_rate_limit" });
    expect(error?.message).toMatch(
      /^For security purposes, you can only request this after \d+ seconds\.$/,
    );
    expect(await messagesFor(email)).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await client.auth.resend({ type: "signup", email })).error).toBeNull();
    expect(await messagesFor(email)).toHaveLength(2);
  });

  it("answers simultaneous sign-ups of one address without a 500: one user, one first mail", async () => {
    // Its own backend with a one-minute mail window: on a loaded machine the four requests may
    // be served more than config.toml's 1 s apart, and a later repeat may then rightly re-send.
    const local = await memoryBackend({ auth: { email: { maxFrequencySeconds: 60 } } });
    try {
      const email = randomEmail();
      const body = JSON.stringify({ email, password: PASSWORD });
      const responses = await Promise.all(
        Array.from({ length: 4 }, () =>
          local.fetch(`${local.backend.url}/auth/v1/signup`, {
            method: "POST",
            headers: { apikey: PUBLISHABLE_KEY, "Content-Type": "application/json" },
            body,
          }),
        ),
      );
      const statuses = responses.map((response) => response.status);
      expect(statuses.every((status) => status === 200 || status === 429)).toBe(true);
      expect(statuses).toContain(200);
      const { data } = await local.admin().auth.admin.listUsers({ perPage: 1000 });
      expect(data.users.filter((user) => user.email === email)).toHaveLength(1);
      expect(local.backend.inbox.list(email)).toHaveLength(1);
    } finally {
      await local.close();
    }
  });
});

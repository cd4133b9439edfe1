import { describe, expect, it } from "vitest";
import {
  adminClient,
  anonClient,
  authFetch,
  freshUser,
  PASSWORD,
  randomEmail,
  SECRET_KEY,
  SERVICE_ROLE_KEY,
  signedInClient,
} from "../../../../tests/support/backend.ts";
import {
  defaultTemplateLink,
  latestMessage,
  messagesFor,
} from "../../../../tests/support/inbox.ts";

describe("admin users API (secret key)", () => {
  it("creates, gets, updates and deletes a user", async () => {
    const admin = adminClient();
    const email = randomEmail("admin");
    const created = await admin.auth.admin.createUser({
      email,
      password: PASSWORD,
      email_confirm: true,
      user_metadata: { name: "Grace" },
      app_metadata: { plan: "pro" },
    });
    expect(created.error).toBeNull();
    const id = created.data.user?.id ?? "";
    expect(created.data.user).toMatchObject({
      email,
      app_metadata: { provider: "email", providers: ["email"], plan: "pro" },
      user_metadata: { name: "Grace" },
    });
    expect(created.data.user?.email_confirmed_at).toBeTruthy();

    expect((await admin.auth.admin.getUserById(id)).data.user?.email).toBe(email);

    const updated = await admin.auth.admin.updateUserById(id, {
      user_metadata: { team: "x" },
      app_metadata: { plan: "free" },
    });
    expect(updated.data.user?.user_metadata).toEqual({ name: "Grace", team: "x" });
    expect(updated.data.user?.app_metadata).toMatchObject({ plan: "free" });

    const banned = await admin.auth.admin.updateUserById(id, { ban_duration: "24h" });
    expect(new Date(banned.data.user?.banned_until ?? 0).getTime()).toBeGreaterThan(
      Date.now() + 23 * 3600_000,
    );
    const refused = await anonClient().auth.signInWithPassword({ email, password: PASSWORD });
    expect(refused.error).toMatchObject({ code: "user_banned", message: "User is banned" });
    await admin.auth.admin.updateUserById(id, { ban_duration: "none" });
    expect(
      (await anonClient().auth.signInWithPassword({ email, password: PASSWORD })).error,
    ).toBeNull();

    expect((await admin.auth.admin.deleteUser(id)).error).toBeNull();
    const gone = await admin.auth.admin.getUserById(id);
    expect(gone.error).toMatchObject({
      status: 404,
      code: "user_not_found",
      message: "User not found",
    });
  });

  it("lists users with pagination and the total", async () => {
    const admin = adminClient();
    await Promise.all([freshUser(), freshUser(), freshUser()]);
    const { data, error } = await admin.auth.admin.listUsers({ page: 1, perPage: 2 });
    expect(error).toBeNull();
    expect(data.users).toHaveLength(2);
    expect((data as unknown as { total: number }).total).toBeGreaterThanOrEqual(3);
    expect((data as unknown as { nextPage: number | null }).nextPage).toBe(2);
  });

  it("refuses a duplicate email and a malformed id", async () => {
    const admin = adminClient();
    const { email } = await freshUser();
    const dup = await admin.auth.admin.createUser({ email, password: PASSWORD });
    expect(dup.error).toMatchObject({ status: 422, code: "email_exists" });
    const bad = await authFetch("/admin/users/not-a-uuid", {
      key: SECRET_KEY,
      headers: { "X-Supabase-Api-Version": "2024-01-01" },
    });
    expect(bad.status).toBe(404);
    expect(await bad.json()).toEqual({
      code: "validation_failed",
      message: "user_id must be an UUID",
    });
  });

  it("generate_link returns the link and code without sending mail", async () => {
    const { email, user } = await freshUser();
    const { data, error } = await adminClient().auth.admin.generateLink({
      type: "magiclink",
      email,
    });
    expect(error).toBeNull();
    expect(data.user?.id).toBe(user.id);
    expect(data.properties).toMatchObject({
      verification_type: "magiclink",
      redirect_to: "http://localhost:5173",
    });
    expect(data.properties?.email_otp).toMatch(/^\d{6}$/);
    expect(data.properties?.action_link).toContain("/auth/v1/verify?token=");
    expect(await messagesFor(email)).toHaveLength(0);
    const client = anonClient();
    const verified = await client.auth.verifyOtp({
      token_hash: data.properties?.hashed_token ?? "",
      type: "magiclink",
    });
    expect(verified.data.user?.id).toBe(user.id);

    const signupEmail = randomEmail("gl");
    const signup = await adminClient().auth.admin.generateLink({
      type: "signup",
      email: signupEmail,
      password: PASSWORD,
    });
    expect(signup.data.user?.email).toBe(signupEmail);
    expect(signup.data.properties?.verification_type).toBe("signup");

    const unknown = await adminClient().auth.admin.generateLink({
      type: "recovery",
      email: randomEmail(),
    });
    expect(unknown.error).toMatchObject({ status: 404, code: "user_not_found" });
  });

  it("accepts the legacy service_role JWT too, and refuses a user's token or the publishable key", async () => {
    const ok = await authFetch("/admin/users?per_page=1", { key: SERVICE_ROLE_KEY });
    expect(ok.status).toBe(200);
    const anon = await authFetch("/admin/users");
    expect(anon.status).toBe(403);
    expect(await anon.json()).toMatchObject({ error_code: "not_admin", msg: "User not allowed" });
    const { session } = await signedInClient();
    const asUser = await authFetch("/admin/users", {
      headers: { Authorization: `Bearer ${session.access_token}` },
    });
    expect(asUser.status).toBe(403);
  });

  it("invites a user by email; the invite link confirms and signs in", async () => {
    const email = randomEmail("invited");
    const { data, error } = await adminClient().auth.admin.inviteUserByEmail(email, {
      data: { team: "docs" },
      redirectTo: "http://localhost:5173/welcome",
    });
    expect(error).toBeNull();
    expect(data.user).toMatchObject({ email, user_metadata: { team: "docs" } });
    expect(data.user?.invited_at).toBeTruthy();
    const mail = await latestMessage(email, "invite");
    expect(mail.subject).toBe("You've been invited");
    const response = await fetch(defaultTemplateLink(mail), { redirect: "manual" });
    const fragment = new URLSearchParams(
      new URL(response.headers.get("location") ?? "").hash.slice(1),
    );
    expect(fragment.get("type")).toBe("invite");
    expect(fragment.get("access_token")).toBeTruthy();
    const again = await adminClient().auth.admin.inviteUserByEmail(email);
    expect(again.error).toMatchObject({ status: 422, code: "email_exists" });
  });
});

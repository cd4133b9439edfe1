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

  it("refuses pagination past Go's uint64 with Auth's 400", async () => {
    const list = async (query: string) => {
      const response = await authFetch(`/admin/users?${query}`, {
        key: SECRET_KEY,
        headers: { "X-Supabase-Api-Version": "2024-01-01" },
      });
      return { status: response.status, body: await response.json() };
    };
    expect(await list("page=99999999999999999999")).toEqual({
      status: 400,
      body: {
        code: "validation_failed",
        message:
          'Bad Pagination Parameters: strconv.ParseUint: parsing "99999999999999999999": value out of range',
      },
    });
    expect(await list("per_page=x")).toEqual({
      status: 400,
      body: {
        code: "validation_failed",
        message: 'Bad Pagination Parameters: strconv.ParseUint: parsing "x": invalid syntax',
      },
    });
    // a page past the end, however far, is an empty page
    for (const page of ["18446744073709551615", "9223372036854775807", "9007199254740993"]) {
      expect(await list(`page=${page}&per_page=1000`)).toMatchObject({
        status: 200,
        body: { users: [] },
      });
    }
  });

  it("a ban refuses the tokens a user already holds (403 user_banned), and lifting it lets them back", async () => {
    const { client, user, session } = await signedInClient();
    const admin = adminClient();
    expect(
      (await admin.auth.admin.updateUserById(user.id, { ban_duration: "1h" })).error,
    ).toBeNull();
    const bearer = { authorization: `Bearer ${session.access_token}` };
    for (const [method, path] of [
      ["GET", "/user"],
      ["PUT", "/user"],
      ["GET", "/reauthenticate"],
      ["POST", "/factors"],
      ["GET", "/passkeys"],
      ["POST", "/logout"],
    ] as const) {
      const answer = await authFetch(path, {
        method,
        headers: bearer,
        body: method === "GET" ? undefined : "{}",
      });
      expect([path, answer.status, await answer.json()]).toEqual([
        path,
        403,
        { code: 403, error_code: "user_banned", msg: "User is banned" },
      ]);
    }
    const refreshed = await anonClient().auth.refreshSession({
      refresh_token: session.refresh_token,
    });
    expect(refreshed.error).toMatchObject({
      code: "user_banned",
      message: "Invalid Refresh Token: User Banned",
    });
    // the session was kept, as upstream keeps it: unbanned, the same token works again
    await admin.auth.admin.updateUserById(user.id, { ban_duration: "none" });
    expect((await client.auth.getUser(session.access_token)).data.user?.id).toBe(user.id);
  });

  it("an admin token of a user's session stops working once that session is signed out", async () => {
    const { client, user, session } = await signedInClient();
    // a user whose role is service_role (set by an admin): their own sessions' tokens are admin
    await adminClient().auth.admin.updateUserById(user.id, { role: "service_role" });
    const { data } = await client.auth.refreshSession();
    const token = data.session?.access_token ?? "";
    const asAdmin = () =>
      authFetch("/admin/users?per_page=1", { headers: { authorization: `Bearer ${token}` } });
    expect((await asAdmin()).status).toBe(200);
    const out = await authFetch("/logout?scope=local", {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
    });
    expect(out.status).toBe(204);
    const refused = await asAdmin();
    expect([refused.status, await refused.json()]).toEqual([
      403,
      {
        code: 403,
        error_code: "session_not_found",
        msg: "Session from session_id claim in JWT does not exist",
      },
    ]);
    expect(session.access_token).not.toBe(token);
  });

  it("ban_duration is a Go duration: overflowing or malformed is 400, as time.ParseDuration", async () => {
    const { user } = await freshUser();
    const update = async (ban_duration: string) => {
      const response = await authFetch(`/admin/users/${user.id}`, {
        method: "PUT",
        key: SECRET_KEY,
        headers: { "X-Supabase-Api-Version": "2024-01-01" },
        body: JSON.stringify({ ban_duration }),
      });
      return { status: response.status, body: await response.json() };
    };
    const invalid = (message: string) => ({
      status: 400,
      body: { code: "validation_failed", message: `invalid format for ban duration: ${message}` },
    });
    expect(await update("99999999999h")).toEqual(invalid('time: invalid duration "99999999999h"'));
    expect(await update("5")).toEqual(invalid('time: missing unit in duration "5"'));
    expect(await update("5y")).toEqual(invalid('time: unknown unit "y" in duration "5y"'));
    // what Go reads is accepted: fractions, units together, µs, the largest duration
    for (const ok of ["1.5h", "1h30m15s", ".5m", "1500us", "2562047h47m16.854775807s"]) {
      expect((await update(ok)).status, ok).toBe(200);
    }
    expect(await update("2562047h47m16.854775808s")).toEqual(
      invalid('time: invalid duration "2562047h47m16.854775808s"'),
    );
  });

  it("a role longer than the column is a 400; an unusable password_hash is refused, as Auth refuses it", async () => {
    const create = async (body: Record<string, unknown>) => {
      const response = await authFetch("/admin/users", {
        method: "POST",
        key: SECRET_KEY,
        headers: { "X-Supabase-Api-Version": "2024-01-01" },
        body: JSON.stringify({ email: randomEmail(), email_confirm: true, ...body }),
      });
      return { status: response.status, body: await response.json() };
    };
    expect(await create({ role: "r".repeat(300) })).toEqual({
      status: 400,
      body: { code: "validation_failed", message: "role must be 255 characters or less" },
    });
    for (const password_hash of [
      "x",
      "$2a$10$abc",
      `$2a$99$${"a".repeat(53)}`,
      "$argon2id$v=19$m=4294967295,t=4294967295,p=255$YWJjZGVmZ2g$YWJjZGVmZ2hpamtsbW5vcA",
      "$fbscrypt$v=2,n=16,r=8,p=1,ss=Bw==,sk=YWJj$YWJjZGVmZ2g$YWJj",
    ]) {
      expect(await create({ password_hash }), password_hash).toMatchObject({
        status: 400,
        body: { code: "validation_failed" },
      });
    }
    // a bcrypt hash is taken as it is and signs in
    const email = randomEmail();
    const hash = "$2a$04$0EhdOsRhyQLmvoW1m.7tYOg8hp5X1MbU7qs2xq8e.i91BswfuyX/i";
    expect((await create({ email, password_hash: hash })).status).toBe(200);
    const { error } = await anonClient().auth.signInWithPassword({ email, password: "password1" });
    expect(error).toBeNull();
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

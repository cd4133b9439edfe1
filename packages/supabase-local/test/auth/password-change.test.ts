// PUT /user for password and email as the hosted service guards it (supabase/auth user.go and
// models.User.UpdatePassword): once a user has a verified factor, an aal1 session may not change
// either; a password change ends every other session and voids every emailed link and code.
// On a second, in-memory backend so the tests can look at auth.* directly.
import type { SupabaseClient } from "@supabase/supabase-js";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PASSWORD, randomEmail } from "../../../../tests/support/backend.ts";
import { defaultTemplateLink } from "../../../../tests/support/inbox.ts";
import { type MemoryBackend, memoryBackend } from "../../../../tests/support/memory-backend.ts";
import { enroll, enrollVerified, totpCode } from "../../../../tests/support/mfa.ts";

let local: MemoryBackend;

beforeAll(async () => {
  local = await memoryBackend({});
}, 60_000);
afterAll(() => local?.close());

const NEW_PASSWORD = "a-new-password-42";

const insufficientAal = {
  status: 401,
  code: "insufficient_aal",
  message: "AAL2 session is required to update email or password when MFA is enabled.",
};

/** Another session of the same user, signed in with the password on a client of its own. */
async function secondSession(email: string, password = PASSWORD) {
  const client = local.client();
  const { data, error } = await client.auth.signInWithPassword({ email, password });
  if (error) throw error;
  return { client, session: data.session };
}

async function signInWorks(email: string, password: string): Promise<boolean> {
  const { error } = await local.client().auth.signInWithPassword({ email, password });
  if (error && error.code !== "invalid_credentials") throw error;
  return !error;
}

async function accessToken(client: SupabaseClient): Promise<string> {
  const { data } = await client.auth.getSession();
  if (!data.session) throw new Error("no session");
  return data.session.access_token;
}

/** PUT /user without supabase-js (the error shape of clients that send no API version). */
async function rawUpdate(token: string, body: Record<string, unknown>) {
  return local.fetch(`${local.backend.url}/auth/v1/user`, {
    method: "PUT",
    headers: {
      apikey: "sb_publishable_ACJWlzQHlZjBrEguHvfOxg_3BJgxAaH",
      Authorization: `Bearer ${token}`,
      "Content-Type": "application/json",
    },
    body: JSON.stringify(body),
  });
}

async function userRow(id: string) {
  const { rows } = await local.backend.db.query<Record<string, unknown>>(
    `select email, email_change, confirmation_token, confirmation_sent_at, recovery_token, recovery_sent_at,
       email_change_token_new, email_change_token_current, email_change_sent_at,
       reauthentication_token, reauthentication_sent_at, phone_change_token, phone_change_sent_at
     from auth.users where id = $1`,
    [id],
  );
  return rows[0] ?? {};
}

async function count(sql: string, params: unknown[]): Promise<number> {
  const { rows } = await local.backend.db.query<{ n: number }>(sql, params);
  return Number(rows[0]?.n ?? 0);
}

describe("an aal1 session of a user with MFA (user.HasMFAEnabled && !session.IsAAL2)", () => {
  it("may not change the password: 401 insufficient_aal, the old password still works", async () => {
    const { email, client } = await local.signedIn();
    await enrollVerified(client);
    const { client: aal1 } = await secondSession(email);
    expect(decodeJwt(await accessToken(aal1)).aal).toBe("aal1");

    const { data, error } = await aal1.auth.updateUser({ password: NEW_PASSWORD });
    expect(error).toMatchObject(insufficientAal);
    expect(data.user).toBeNull();

    // The same refusal in the pre-2024 error shape.
    const raw = await rawUpdate(await accessToken(aal1), { password: NEW_PASSWORD });
    expect(raw.status).toBe(401);
    expect(raw.headers.get("x-sb-error-code")).toBe("insufficient_aal");
    expect(await raw.json()).toEqual({
      code: 401,
      error_code: "insufficient_aal",
      msg: insufficientAal.message,
    });

    expect(await signInWorks(email, PASSWORD)).toBe(true);
    expect(await signInWorks(email, NEW_PASSWORD)).toBe(false);
    // The aal1 session was not ended by its refused attempt.
    expect((await aal1.auth.getUser()).error).toBeNull();
  });

  it("may not change the email: 401 insufficient_aal, no change is pending and no mail goes out", async () => {
    const { email, client, user } = await local.signedIn();
    await enrollVerified(client);
    const { client: aal1 } = await secondSession(email);
    const next = randomEmail("taken-over");

    const { error } = await aal1.auth.updateUser({ email: next });
    expect(error).toMatchObject(insufficientAal);
    expect(await userRow(user.id)).toMatchObject({ email, email_change: "" });
    expect(local.backend.inbox.list(next)).toHaveLength(0);
    expect(local.backend.inbox.list(email).filter((m) => m.type === "email_change")).toHaveLength(
      0,
    );
  });

  it("may still update metadata, or send its own address unchanged", async () => {
    const { email, client } = await local.signedIn();
    await enrollVerified(client);
    const { client: aal1 } = await secondSession(email);

    const { data, error } = await aal1.auth.updateUser({ email, data: { theme: "dark" } });
    expect(error).toBeNull();
    expect(data.user?.user_metadata).toMatchObject({ theme: "dark" });
  });

  it("once stepped up to aal2 it may change the password", async () => {
    const { email, client } = await local.signedIn();
    const { factor } = await enrollVerified(client);
    const { client: second } = await secondSession(email);
    // A later code than the one the first session used.
    const stepped = await second.auth.mfa.challengeAndVerify({
      factorId: factor.id,
      code: totpCode(factor.totp.secret, 30),
    });
    expect(stepped.error).toBeNull();

    expect((await second.auth.updateUser({ password: NEW_PASSWORD })).error).toBeNull();
    expect(await signInWorks(email, NEW_PASSWORD)).toBe(true);
  });

  it("an unverified factor does not count: the aal1 session may change the password", async () => {
    const { email, client } = await local.signedIn();
    await enroll(client, "Not finished");
    expect((await client.auth.updateUser({ password: NEW_PASSWORD })).error).toBeNull();
    expect(await signInWorks(email, NEW_PASSWORD)).toBe(true);
  });
});

describe("a password change (User.UpdatePassword)", () => {
  it("ends every other session and voids the emailed links and codes; the current session carries on", async () => {
    const { email, client: current, user } = await local.signedIn();
    const { client: other, session: otherSession } = await secondSession(email);
    const otherAccess = otherSession?.access_token ?? "";

    // Emailed before the change: a recovery link (and code), an email change, a reauthentication code.
    expect((await local.client().auth.resetPasswordForEmail(email)).error).toBeNull();
    const recovery = local.backend.inbox.list(email).find((m) => m.type === "recovery");
    expect((await current.auth.updateUser({ email: randomEmail("moving") })).error).toBeNull();
    expect((await current.auth.reauthenticate()).error).toBeNull();
    expect(
      await count("select count(*) as n from auth.one_time_tokens where user_id = $1", [user.id]),
    ).toBe(4);

    const changed = await current.auth.updateUser({ password: NEW_PASSWORD });
    expect(changed.error).toBeNull();

    // Only the session that changed the password is left; every token is gone.
    expect(
      await count("select count(*) as n from auth.sessions where user_id = $1", [user.id]),
    ).toBe(1);
    expect(
      await count("select count(*) as n from auth.one_time_tokens where user_id = $1", [user.id]),
    ).toBe(0);
    expect(await userRow(user.id)).toMatchObject({
      confirmation_token: "",
      confirmation_sent_at: null,
      recovery_token: "",
      recovery_sent_at: null,
      email_change_token_new: "",
      email_change_token_current: "",
      email_change_sent_at: null,
      reauthentication_token: "",
      reauthentication_sent_at: null,
      phone_change_token: "",
      phone_change_sent_at: null,
    });

    // The other session can neither refresh nor call /user.
    const refreshed = await other.auth.refreshSession();
    expect(refreshed.error).toMatchObject({
      status: 400,
      code: "refresh_token_not_found",
      message: "Invalid Refresh Token: Refresh Token Not Found",
    });
    const asOther = await local.fetch(`${local.backend.url}/auth/v1/user`, {
      headers: {
        apikey: "sb_publishable_ACJWlzQHlZjBrEguHvfOxg_3BJgxAaH",
        Authorization: `Bearer ${otherAccess}`,
        "X-Supabase-Api-Version": "2024-01-01",
      },
    });
    expect(asOther.status).toBe(403);
    expect(await asOther.json()).toEqual({
      code: "session_not_found",
      message: "Session from session_id claim in JWT does not exist",
    });

    // The recovery link, its code and its hash no longer sign in.
    const link = recovery ? defaultTemplateLink(recovery, local.backend.url) : "";
    const followed = await local.fetch(link, { redirect: "manual" });
    expect(followed.status).toBe(303);
    const fragment = new URLSearchParams(
      new URL(followed.headers.get("location") ?? "").hash.slice(1),
    );
    expect(fragment.get("error_code")).toBe("otp_expired");
    expect(fragment.get("access_token")).toBeNull();
    const byCode = await local
      .client()
      .auth.verifyOtp({ email, token: recovery?.token ?? "", type: "recovery" });
    expect(byCode.error).toMatchObject({
      status: 403,
      code: "otp_expired",
      message: "Token has expired or is invalid",
    });
    const byHash = await local
      .client()
      .auth.verifyOtp({ token_hash: recovery?.tokenHash ?? "", type: "recovery" });
    expect(byHash.error).toMatchObject({ status: 403, code: "otp_expired" });

    // The email change link no longer confirms.
    const change = local.backend.inbox.list(email).find((m) => m.type === "email_change");
    const confirmChange = await local
      .client()
      .auth.verifyOtp({ token_hash: change?.tokenHash ?? "", type: "email_change" });
    expect(confirmChange.error).toMatchObject({ status: 403, code: "otp_expired" });

    // The session that changed it goes on (refresh, /user).
    expect((await current.auth.refreshSession()).error).toBeNull();
    expect((await current.auth.getUser()).data.user?.id).toBe(user.id);
  });

  it("through a recovery link: the recovery session stays, the sessions from before end", async () => {
    const { email, client: before } = await local.signedIn();
    await local.client().auth.resetPasswordForEmail(email);
    const recovery = local.backend.inbox.list(email).find((m) => m.type === "recovery");
    const reset = local.client();
    const verified = await reset.auth.verifyOtp({
      token_hash: recovery?.tokenHash ?? "",
      type: "recovery",
    });
    expect(verified.error).toBeNull();

    expect((await reset.auth.updateUser({ password: NEW_PASSWORD })).error).toBeNull();
    expect((await reset.auth.refreshSession()).error).toBeNull();
    expect((await before.auth.refreshSession()).error).toMatchObject({
      code: "refresh_token_not_found",
    });
  });

  it("by an admin (PUT /admin/users/{id}) ends all the user's sessions", async () => {
    const { client, user } = await local.signedIn();
    await local.client().auth.resetPasswordForEmail(user.email ?? "");
    const updated = await local.admin().auth.admin.updateUserById(user.id, {
      password: NEW_PASSWORD,
    });
    expect(updated.error).toBeNull();
    expect((await client.auth.refreshSession()).error).toMatchObject({
      code: "refresh_token_not_found",
    });
    expect(
      await count("select count(*) as n from auth.sessions where user_id = $1", [user.id]),
    ).toBe(0);
    expect(
      await count("select count(*) as n from auth.one_time_tokens where user_id = $1", [user.id]),
    ).toBe(0);
    expect(await signInWorks(user.email ?? "", NEW_PASSWORD)).toBe(true);
  });

  it("a metadata-only update ends nothing", async () => {
    const { email, client } = await local.signedIn();
    const { client: other } = await secondSession(email);
    expect((await client.auth.updateUser({ data: { lang: "en" } })).error).toBeNull();
    expect((await other.auth.refreshSession()).error).toBeNull();
  });
});

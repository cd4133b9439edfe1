// Security notification emails ([auth.email.notification.<kind>], on in this project's config.toml):
// password changed, email changed (to the old address), MFA factor added or removed, identity
// linked or unlinked — with the real default subjects and bodies, in the local inbox; none when a
// kind is off. And the audit entries of passkeys and recovery codes (read from a backend's database).
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SoftAuthenticator } from "../../../../tests/support/authenticator.ts";
import { PUBLISHABLE_KEY, randomEmail, signedInClient } from "../../../../tests/support/backend.ts";
import { type InboxMessage, messagesFor } from "../../../../tests/support/inbox.ts";
import { type MemoryBackend, memoryBackend } from "../../../../tests/support/memory-backend.ts";
import { enrollVerifiedTotp } from "../../../../tests/support/mfa.ts";
import { followOAuth } from "../../../../tests/support/oauth.ts";

async function notices(email: string): Promise<InboxMessage[]> {
  return (await messagesFor(email)).filter((m) => m.type.endsWith("_notification"));
}

async function linkGithub(client: SupabaseClient) {
  const { data, error } = await client.auth.linkIdentity({
    provider: "github",
    options: { redirectTo: "http://localhost:5173/auth/callback", skipBrowserRedirect: true },
  });
  if (error) throw error;
  const landed = await followOAuth(fetch, data.url, { email: randomEmail("gh") });
  const code = landed.searchParams.get("code") ?? "";
  const exchanged = await client.auth.exchangeCodeForSession(code);
  if (exchanged.error) throw exchanged.error;
}

describe("security notifications", () => {
  it("tells the user their password was changed", async () => {
    const { client, email } = await signedInClient();
    expect(await notices(email)).toEqual([]);
    const { error } = await client.auth.updateUser({ password: "another-horse-battery" });
    expect(error).toBeNull();
    const [notice] = await notices(email);
    expect(notice).toMatchObject({
      type: "password_changed_notification",
      subject: "Your password was changed",
    });
    expect(notice?.html).toContain("The password for your account was recently changed.");
    // Metadata changes are not worth a notice.
    await client.auth.updateUser({ data: { name: "Ada" } });
    expect(await notices(email)).toHaveLength(1);
  });

  it("tells the old address that the email address was changed, once the change is confirmed", async () => {
    const { client, email } = await signedInClient();
    const next = randomEmail("moved");
    expect((await client.auth.updateUser({ email: next })).error).toBeNull();
    const token = async (to: string) =>
      (await messagesFor(to)).find((m) => m.type === "email_change")?.token ?? "";
    const half = await client.auth.verifyOtp({
      email: next,
      token: await token(next),
      type: "email_change",
    });
    expect(half.error).toBeNull();
    expect(await notices(email)).toEqual([]);
    const done = await client.auth.verifyOtp({
      email,
      token: await token(email),
      type: "email_change",
    });
    expect(done.error).toBeNull();
    const [notice] = await notices(email);
    expect(notice).toMatchObject({
      type: "email_changed_notification",
      subject: "Your email address was changed",
    });
    expect(notice?.html).toContain(`was changed from ${email} to ${next}.`);
    expect(await notices(next)).toEqual([]);
  });

  it("tells the user of a second factor added and removed, naming its type", async () => {
    const { client, email } = await signedInClient();
    const { factorId } = await enrollVerifiedTotp(client);
    const [added] = await notices(email);
    expect(added).toMatchObject({
      type: "mfa_factor_enrolled_notification",
      subject: "A new verification method was added to your account",
    });
    expect(added?.html).toContain("Sign-in verification method totp was added to your account.");
    expect((await client.auth.mfa.unenroll({ factorId })).error).toBeNull();
    const [removed] = await notices(email);
    expect(removed).toMatchObject({
      type: "mfa_factor_unenrolled_notification",
      subject: "A verification method was removed from your account",
    });
    expect(removed?.html).toContain("Sign-in verification method totp was removed");
  });

  it("tells the user of a sign-in method linked and removed, naming the provider", async () => {
    const { client, email } = await signedInClient({ flowType: "pkce" });
    await linkGithub(client);
    const [linked] = await notices(email);
    expect(linked).toMatchObject({
      type: "identity_linked_notification",
      subject: "A new sign-in method was linked to your account",
    });
    expect(linked?.html).toContain(
      `Your github account was linked as a new sign-in method for ${email}.`,
    );
    const { data } = await client.auth.getUserIdentities();
    const github = data?.identities.find((i) => i.provider === "github");
    if (!github) throw new Error("no github identity");
    expect((await client.auth.unlinkIdentity(github)).error).toBeNull();
    const [unlinked] = await notices(email);
    expect(unlinked).toMatchObject({
      type: "identity_unlinked_notification",
      subject: "A sign-in method was removed from your account",
    });
  });
});

describe("a backend with password_changed off", () => {
  let local: MemoryBackend;
  beforeAll(async () => {
    local = await memoryBackend({
      auth: { email: { notifications: { password_changed: { enabled: false } } } },
    });
  }, 60_000);
  afterAll(() => local?.close());

  it("sends nothing for a kind that is off", async () => {
    const { client, email } = await local.signedIn();
    expect((await client.auth.updateUser({ password: "another-horse-battery" })).error).toBeNull();
    expect(local.backend.inbox.list(email)).toEqual([]);
    const again = local.client();
    expect(
      (await again.auth.signInWithPassword({ email, password: "another-horse-battery" })).error,
    ).toBeNull();
  });

  it("records passkey and recovery-code events in auth.audit_log_entries", async () => {
    const { client, user } = await local.signedIn();
    const authenticator = new SoftAuthenticator();
    const started = await client.auth.passkey.startRegistration();
    const registered = await client.auth.passkey.verifyRegistration({
      challengeId: started.data?.challenge_id ?? "",
      credential: authenticator.create(started.data?.options as never) as never,
    });
    const passkeyId = registered.data?.id;
    const options = await local.client().auth.passkey.startAuthentication();
    const signIn = await local.client().auth.passkey.verifyAuthentication({
      challengeId: options.data?.challenge_id ?? "",
      credential: authenticator.get(options.data?.options as never) as never,
    });
    expect(signIn.error).toBeNull();
    await client.auth.passkey.update({ passkeyId: passkeyId ?? "", friendlyName: "Laptop" });
    await client.auth.passkey.delete({ passkeyId: passkeyId ?? "" });

    const recovery = createClient(local.backend.url, PUBLISHABLE_KEY, {
      auth: { persistSession: false, experimental: { recoveryCodes: true } },
      global: { fetch: local.fetch },
    });
    const { data } = await client.auth.getSession();
    await recovery.auth.setSession(data.session as never);
    await enrollVerifiedTotp(recovery);
    const codes = await recovery.auth.mfa.recoveryCodes.generate();
    await recovery.auth.mfa.recoveryCodes.verify({ code: codes.data?.codes[0] ?? "" });
    await recovery.auth.mfa.recoveryCodes.regenerate();
    await recovery.auth.mfa.recoveryCodes.unenroll();

    const { rows } = await local.backend.db.query<{
      payload: { action: string; log_type: string; traits?: Record<string, unknown> };
    }>(
      `select payload from auth.audit_log_entries where payload->>'actor_id' = $1 order by created_at, id`,
      [user.id],
    );
    const actions = rows.map((r) => r.payload);
    const pick = (action: string) => actions.filter((a) => a.action === action);
    expect(pick("passkey_created")).toEqual([
      expect.objectContaining({ log_type: "user", traits: { passkey_id: passkeyId } }),
    ]);
    expect(pick("login").at(-1)).toMatchObject({ traits: { passkey_id: passkeyId } });
    expect(pick("passkey_updated")).toHaveLength(1);
    expect(pick("passkey_deleted")).toHaveLength(1);
    const factorId = codes.data?.id;
    expect(pick("recovery_codes_generated")).toEqual([
      expect.objectContaining({ log_type: "factor", traits: { factor_id: factorId, count: 10 } }),
    ]);
    expect(pick("recovery_codes_verified")).toEqual([
      expect.objectContaining({ traits: { factor_id: factorId, remaining: 9 } }),
    ]);
    expect(pick("recovery_codes_regenerated")).toHaveLength(1);
    expect(pick("recovery_codes_deleted")).toEqual([
      expect.objectContaining({ traits: { factor_id: factorId } }),
    ]);
  });
});

// auth.audit_log_entries as the source of a security activity page: logins (password, OAuth),
// token refreshes, user changes, factor changes, identity links and unlinks, logouts — with the
// real service's action names, log types and traits. Read straight from the backend's database.
import { Secret, TOTP } from "otpauth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomEmail } from "../../../../tests/support/backend.ts";
import { type MemoryBackend, memoryBackend } from "../../../../tests/support/memory-backend.ts";
import { followOAuth } from "../../../../tests/support/oauth.ts";

let local: MemoryBackend;
beforeAll(async () => {
  // as behind a proxy that sets X-Forwarded-For, so the recorded address can be told apart
  local = await memoryBackend({}, { trustProxyHeader: "X-Forwarded-For" });
}, 60_000);
afterAll(() => local?.close());

interface Entry {
  action: string;
  log_type: string;
  actor_id: string;
  actor_username: string;
  traits?: Record<string, unknown>;
}

async function entries(userId: string): Promise<Entry[]> {
  const { rows } = await local.backend.db.query<{ payload: Entry; ip_address: string }>(
    `select payload, ip_address from auth.audit_log_entries
     where payload->>'actor_id' = $1 order by created_at, id`,
    [userId],
  );
  return rows.map((r) => r.payload);
}

describe("auth.audit_log_entries", () => {
  it("records a whole security story of one user", async () => {
    const { client, user, email } = await local.signedIn({
      headers: { "X-Forwarded-For": "203.0.113.7" },
    });
    await client.auth.refreshSession();
    await client.auth.updateUser({ data: { display_name: "Ada" } });

    const factor = (await client.auth.mfa.enroll({ factorType: "totp", friendlyName: "Phone" }))
      .data;
    if (!factor) throw new Error("no factor");
    const code = new TOTP({ secret: Secret.fromBase32(factor.totp.secret) }).generate();
    const verified = await client.auth.mfa.challengeAndVerify({ factorId: factor.id, code });
    expect(verified.error).toBeNull();
    expect((await client.auth.mfa.unenroll({ factorId: factor.id })).error).toBeNull();

    const pkce = local.client({ flowType: "pkce", headers: { "X-Forwarded-For": "203.0.113.7" } });
    await pkce.auth.setSession((await client.auth.getSession()).data.session as never);
    const { data: link } = await pkce.auth.linkIdentity({
      provider: "github",
      options: { redirectTo: "http://localhost:5173/auth/callback", skipBrowserRedirect: true },
    });
    const landed = await followOAuth(local.fetch, link.url ?? "", {
      email: randomEmail("audit"),
      provider_id: "424242",
    });
    await pkce.auth.exchangeCodeForSession(landed.searchParams.get("code") ?? "");
    const github = (await pkce.auth.getUserIdentities()).data?.identities.find(
      (i) => i.provider === "github",
    );
    if (!github) throw new Error("not linked");
    expect((await pkce.auth.unlinkIdentity(github)).error).toBeNull();
    await pkce.auth.signOut();

    const log = await entries(user.id);
    expect(log.map((e) => [e.action, e.log_type])).toEqual([
      ["user_signedup", "team"],
      ["login", "account"],
      ["token_refreshed", "token"],
      ["user_modified", "user"],
      ["factor_in_progress", "factor"],
      ["challenge_created", "factor"],
      ["verification_attempted", "factor"],
      ["factor_unenrolled", "factor"],
      ["identity_linked", "user"],
      ["login", "account"],
      ["identity_unlinked", "user"],
      ["logout", "account"],
    ]);
    expect(log.every((e) => e.actor_username === email)).toBe(true);
    expect(log.find((e) => e.action === "verification_attempted")?.traits).toMatchObject({
      factor_id: factor.id,
      factor_type: "totp",
    });
    expect(log.find((e) => e.action === "identity_linked")?.traits).toMatchObject({
      provider: "github",
      provider_id: "424242",
    });
    expect(log[9]?.traits).toEqual({ provider_type: "github" });
    // The address is the caller's (the trusted X-Forwarded-For); the provider's callback came from the browser.
    const ips = await local.backend.db.query<{ action: string; ip_address: string }>(
      `select payload->>'action' as action, ip_address from auth.audit_log_entries
       where payload->>'actor_id' = $1 and payload->>'action' in ('token_refreshed', 'factor_unenrolled', 'logout')`,
      [user.id],
    );
    expect(ips.rows.map((r) => r.ip_address)).toEqual([
      "203.0.113.7",
      "203.0.113.7",
      "203.0.113.7",
    ]);
  });

  it("records an OAuth sign-up and login", async () => {
    const email = randomEmail("oauth-audit");
    const client = local.client({ flowType: "pkce" });
    const { data } = await client.auth.signInWithOAuth({
      provider: "google",
      options: { skipBrowserRedirect: true },
    });
    const landed = await followOAuth(local.fetch, data.url ?? "", { email, name: "G" });
    const session = await client.auth.exchangeCodeForSession(landed.searchParams.get("code") ?? "");
    const userId = session.data.user?.id ?? "";
    expect((await entries(userId)).map((e) => [e.action, e.traits])).toEqual([
      ["user_signedup", { provider: "google" }],
      ["login", { provider_type: "google" }],
    ]);
  });
});

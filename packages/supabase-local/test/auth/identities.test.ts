// Identity linking with supabase-js linkIdentity / unlinkIdentity / getUserIdentities, through the
// local provider page with a cookie-less fetch, and the bad input of each.
import type { SupabaseClient } from "@supabase/supabase-js";
import { describe, expect, it } from "vitest";
import {
  adminClient,
  anonClient,
  authFetch,
  randomEmail,
  signedInClient,
} from "../../../../tests/support/backend.ts";
import { latestMessage } from "../../../../tests/support/inbox.ts";
import { followOAuth, type ProviderAccountInput } from "../../../../tests/support/oauth.ts";

const APP_CALLBACK = "http://localhost:5173/auth/callback";

/** linkIdentity on a PKCE client, followed through the provider page: where it lands. */
async function link(
  client: SupabaseClient,
  provider: "github" | "google",
  account: ProviderAccountInput,
) {
  const { data, error } = await client.auth.linkIdentity({
    provider,
    options: { redirectTo: APP_CALLBACK, skipBrowserRedirect: true },
  });
  if (error) throw error;
  return followOAuth(fetch, data.url, account);
}

async function linkAndExchange(
  client: SupabaseClient,
  provider: "github" | "google",
  account: ProviderAccountInput,
) {
  const landed = await link(client, provider, account);
  const code = landed.searchParams.get("code");
  if (!code) throw new Error(`no code: ${landed}`);
  const { data, error } = await client.auth.exchangeCodeForSession(code);
  if (error) throw error;
  return data;
}

describe("linkIdentity", () => {
  it("links a provider account to the signed-in user; the session stays theirs", async () => {
    const { client, user, email } = await signedInClient({ flowType: "pkce" });
    const providerEmail = randomEmail("work");
    const data = await linkAndExchange(client, "github", {
      name: "Ada at work",
      email: providerEmail,
    });
    expect(data.user.id).toBe(user.id);
    expect(data.user.email).toBe(email);
    expect(data.user.app_metadata.providers).toEqual(["email", "github"]);

    const identities = await client.auth.getUserIdentities();
    expect(identities.error).toBeNull();
    expect(identities.data?.identities.map((i) => [i.provider, i.identity_data?.email])).toEqual([
      ["email", email],
      ["github", providerEmail],
    ]);
  });

  it("answers { url } for the provider page (PKCE parameters and a signed state)", async () => {
    const { session } = await signedInClient();
    const response = await authFetch(
      `/user/identities/authorize?provider=google&skip_http_redirect=true&redirect_to=${encodeURIComponent(APP_CALLBACK)}`,
      { headers: { Authorization: `Bearer ${session?.access_token}` } },
    );
    expect(response.status).toBe(200);
    const { url } = (await response.json()) as { url: string };
    const page = new URL(url);
    expect(page.pathname).toBe("/provider/google/authorize");
    expect(page.searchParams.get("state")?.split(".")).toHaveLength(3);

    const redirect = await authFetch("/user/identities/authorize?provider=google", {
      headers: { Authorization: `Bearer ${session?.access_token}` },
    });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get("location")).toContain("/provider/google/authorize?");
  });

  it("identity_already_exists: the provider account is someone else's, or already this user's", async () => {
    const owner = await signedInClient({ flowType: "pkce" });
    const account = { email: randomEmail("taken"), provider_id: `gh-${crypto.randomUUID()}` };
    await linkAndExchange(owner.client, "github", account);

    const other = await signedInClient({ flowType: "pkce" });
    const refused = await link(other.client, "github", account);
    expect(refused.searchParams.get("error")).toBe("server_error");
    expect(refused.searchParams.get("error_code")).toBe("identity_already_exists");
    expect(refused.searchParams.get("error_description")).toBe(
      "Identity is already linked to another user",
    );
    const again = await link(owner.client, "github", account);
    expect(again.searchParams.get("error_description")).toBe("Identity is already linked");
    const identities = await other.client.auth.getUserIdentities();
    expect(identities.data?.identities.map((i) => i.provider)).toEqual(["email"]);
  });

  it("needs a signed-in user and a known provider", async () => {
    const anonymous = await authFetch("/user/identities/authorize?provider=github");
    expect(anonymous.status).toBe(403);
    const { session } = await signedInClient();
    const unknown = await authFetch("/user/identities/authorize?provider=nope", {
      headers: { Authorization: `Bearer ${session?.access_token}` },
    });
    expect(unknown.status).toBe(400);
    expect((await unknown.json()).msg).toBe(
      "Unsupported provider: Provider nope could not be found",
    );
  });
});

describe("unlinkIdentity", () => {
  it("refuses the last identity", async () => {
    const { client } = await signedInClient();
    const { data } = await client.auth.getUserIdentities();
    const only = data?.identities[0];
    if (!only) throw new Error("no identity");
    const { error } = await client.auth.unlinkIdentity(only);
    expect(error).toMatchObject({
      status: 422,
      code: "single_identity_not_deletable",
      message: "User must have at least 1 identity after unlinking",
    });
  });

  it("removes a linked identity; the providers follow", async () => {
    const { client, user } = await signedInClient({ flowType: "pkce" });
    await linkAndExchange(client, "google", { email: randomEmail("g") });
    const { data } = await client.auth.getUserIdentities();
    const google = data?.identities.find((i) => i.provider === "google");
    if (!google) throw new Error("no google identity");
    const { error } = await client.auth.unlinkIdentity(google);
    expect(error).toBeNull();
    const after = await adminClient().auth.admin.getUserById(user.id);
    expect(after.data.user?.identities?.map((i) => i.provider)).toEqual(["email"]);
    expect(after.data.user?.app_metadata.providers).toEqual(["email"]);
  });

  it("unlinking the email identity moves the user's address to the remaining identity", async () => {
    const { client } = await signedInClient({ flowType: "pkce" });
    const providerEmail = randomEmail("moved");
    await linkAndExchange(client, "github", { email: providerEmail });
    const { data } = await client.auth.getUserIdentities();
    const emailIdentity = data?.identities.find((i) => i.provider === "email");
    if (!emailIdentity) throw new Error("no email identity");
    expect((await client.auth.unlinkIdentity(emailIdentity)).error).toBeNull();
    const { data: user } = await client.auth.getUser();
    expect(user.user?.email).toBe(providerEmail);
    expect(user.user?.app_metadata).toMatchObject({ provider: "github", providers: ["github"] });
  });

  it("when the address moves, every token sent to the old one stops working; an unverified one is not confirmed", async () => {
    const { client, user, email } = await signedInClient({ flowType: "pkce" });
    const providerEmail = randomEmail("unverified");
    await linkAndExchange(client, "github", { email: providerEmail, email_verified: false });
    // a recovery link sent to the old address, before it moves
    expect((await anonClient().auth.resetPasswordForEmail(email)).error).toBeNull();
    const recovery = await latestMessage(email, "recovery");
    const { data } = await client.auth.getUserIdentities();
    const emailIdentity = data?.identities.find((i) => i.provider === "email");
    if (!emailIdentity) throw new Error("no email identity");
    expect((await client.auth.unlinkIdentity(emailIdentity)).error).toBeNull();

    const verified = await anonClient().auth.verifyOtp({
      token_hash: recovery.tokenHash ?? "",
      type: "recovery",
    });
    expect(verified.error).toMatchObject({ code: "otp_expired" });
    const after = (await adminClient().auth.admin.getUserById(user.id)).data.user;
    expect(after?.email).toBe(providerEmail);
    expect(after?.email_confirmed_at).toBeFalsy();
    expect(after?.user_metadata.email_verified).toBe(false);
  });

  it("refuses another user's identity and a malformed id, and changes nothing", async () => {
    const victim = await signedInClient({ flowType: "pkce" });
    await linkAndExchange(victim.client, "github", { email: randomEmail("victim") });
    const victimIdentities = (await victim.client.auth.getUserIdentities()).data?.identities ?? [];
    const target = victimIdentities.find((i) => i.provider === "github");
    if (!target) throw new Error("no identity");

    const attacker = await signedInClient({ flowType: "pkce" });
    await linkAndExchange(attacker.client, "google", { email: randomEmail("attacker") });
    const { error } = await attacker.client.auth.unlinkIdentity(target);
    expect(error).toMatchObject({
      status: 422,
      code: "identity_not_found",
      message: "Identity doesn't exist",
    });
    const token = (await attacker.client.auth.getSession()).data.session?.access_token;
    const malformed = await authFetch("/user/identities/not-a-uuid", {
      method: "DELETE",
      headers: { Authorization: `Bearer ${token}`, "X-Supabase-Api-Version": "2024-01-01" },
    });
    expect(malformed.status).toBe(404);
    expect(await malformed.json()).toEqual({
      code: "validation_failed",
      message: "identity_id must be an UUID",
    });
    const still = (await victim.client.auth.getUserIdentities()).data?.identities ?? [];
    expect(still.map((i) => i.identity_id)).toContain(target.identity_id);
  });
});

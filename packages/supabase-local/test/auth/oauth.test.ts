// OAuth sign-in without the internet: supabase-js signInWithOAuth -> /authorize -> the local
// provider page (driven through its HTML form with a cookie-less fetch) -> /callback ->
// redirect_to?code= -> exchangeCodeForSession; and every bad input on the way.
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import {
  adminClient,
  anonClient,
  authFetch,
  BACKEND_URL,
  freshUser,
  randomEmail,
} from "../../../../tests/support/backend.ts";
import { messagesFor } from "../../../../tests/support/inbox.ts";
import {
  expectRedirect,
  followOAuth,
  openProviderPage,
  type ProviderAccountInput,
  submitProviderPage,
} from "../../../../tests/support/oauth.ts";

const SITE_URL = "http://localhost:5173";
const APP_CALLBACK = `${SITE_URL}/auth/callback`;

/** signInWithOAuth in a PKCE client: the authorize URL, and the client that keeps the verifier. */
async function startOAuth(provider: "github" | "google", redirectTo = APP_CALLBACK) {
  const client = anonClient({ flowType: "pkce" });
  const { data, error } = await client.auth.signInWithOAuth({
    provider,
    options: { redirectTo, skipBrowserRedirect: true },
  });
  if (error) throw error;
  return { client, url: data.url };
}

/** A whole PKCE sign-in with `account`: the session and the client holding it. */
async function signInWith(provider: "github" | "google", account: ProviderAccountInput) {
  const { client, url } = await startOAuth(provider);
  const landed = await followOAuth(fetch, url, account);
  const code = landed.searchParams.get("code");
  if (!code) throw new Error(`no code: ${landed}`);
  const { data, error } = await client.auth.exchangeCodeForSession(code);
  if (error) throw error;
  return { client, session: data.session, user: data.user, landed };
}

describe("GET /settings", () => {
  it("lists the OAuth providers config.toml turns on", async () => {
    const settings = await (await authFetch("/settings")).json();
    expect(settings.external).toMatchObject({ github: true, google: true, gitlab: false });
  });
});

describe("signInWithOAuth through the local provider page", () => {
  it("a new account: redirect_to?code=, then a session with the provider's identity", async () => {
    const email = randomEmail("gh");
    const { user, session, landed } = await signInWith("github", {
      name: "Ada Lovelace",
      email,
      provider_id: `ada-${email.slice(3, 11)}`,
    });
    expect(`${landed.origin}${landed.pathname}`).toBe(APP_CALLBACK);
    expect(user.email).toBe(email);
    expect(user.email_confirmed_at).toBeTruthy();
    expect(user.app_metadata).toMatchObject({ provider: "github", providers: ["github"] });
    expect(user.user_metadata).toMatchObject({
      name: "Ada Lovelace",
      full_name: "Ada Lovelace",
      email,
      email_verified: true,
      iss: "https://api.github.com",
      provider_id: `ada-${email.slice(3, 11)}`,
    });
    expect(user.identities).toEqual([
      expect.objectContaining({
        provider: "github",
        id: `ada-${email.slice(3, 11)}`,
        email,
        identity_data: expect.objectContaining({ sub: `ada-${email.slice(3, 11)}`, email }),
      }),
    ]);
    const claims = decodeJwt(session.access_token);
    expect(claims.aal).toBe("aal1");
    expect((claims.amr as Array<{ method: string }>).map((a) => a.method)).toEqual(["oauth"]);
    expect(session.provider_token).toMatch(/^local_/);
  });

  it("the same provider account signs in to the same user, and the page offers it next time", async () => {
    const email = randomEmail("again");
    const first = await signInWith("google", { name: "Grace", email });
    const { url } = await startOAuth("google");
    const { html } = await openProviderPage(fetch, url);
    expect(html).toContain("Local stand-in for Google");
    expect(html).toContain(email);
    const second = await signInWith("google", { name: "Grace Hopper", email });
    expect(second.user.id).toBe(first.user.id);
    expect(second.user.identities).toHaveLength(1);
    expect(second.user.user_metadata.name).toBe("Grace Hopper");
  });

  it("links the provider to an existing user with the same verified email", async () => {
    const { email, user: existing } = await freshUser();
    const { user } = await signInWith("google", { name: "Existing", email });
    expect(user.id).toBe(existing.id);
    expect(user.app_metadata.providers).toEqual(["email", "google"]);
    expect(user.identities?.map((i) => i.provider).sort()).toEqual(["email", "google"]);
  });

  it("an unverified provider email is not signed in: access_denied and a confirmation email", async () => {
    const email = randomEmail("unverified");
    const { url } = await startOAuth("github");
    const landed = await followOAuth(fetch, url, { email, email_verified: false });
    expect(landed.searchParams.get("error")).toBe("access_denied");
    expect(landed.searchParams.get("error_code")).toBe("provider_email_needs_verification");
    expect(landed.searchParams.get("error_description")).toBe(
      "Unverified email with github. A confirmation email has been sent to your github email",
    );
    expect(landed.searchParams.get("code")).toBeNull();
    expect(new URLSearchParams(landed.hash.slice(1)).get("error_code")).toBe(
      "provider_email_needs_verification",
    );
    const mails = await messagesFor(email);
    expect(mails.map((m) => m.type)).toEqual(["confirmation"]);
  });

  it("a provider email that an existing user has but the provider has not verified does not link", async () => {
    const { email, user: existing } = await freshUser();
    const { url } = await startOAuth("github");
    const landed = await followOAuth(fetch, url, { email, email_verified: false });
    expect(landed.searchParams.get("error_code")).toBe("provider_email_needs_verification");
    const { data } = await adminClient().auth.admin.getUserById(existing.id);
    expect(data.user?.identities?.map((i) => i.provider)).toEqual(["email"]);
  });

  it("the implicit flow answers with the session in the fragment", async () => {
    const client = anonClient();
    const { data } = await client.auth.signInWithOAuth({
      provider: "github",
      options: { redirectTo: APP_CALLBACK, skipBrowserRedirect: true },
    });
    const landed = await followOAuth(fetch, data.url ?? "", { email: randomEmail("implicit") });
    const fragment = new URLSearchParams(landed.hash.slice(1));
    expect(fragment.get("token_type")).toBe("bearer");
    expect(fragment.get("refresh_token")).toMatch(/^[a-z0-9]{12}$/);
    const access = fragment.get("access_token") ?? "";
    const { data: user } = await client.auth.getUser(access);
    expect(user.user?.app_metadata.provider).toBe("github");
  });

  it("Cancel on the provider page returns error=access_denied to redirect_to", async () => {
    const { url } = await startOAuth("github");
    const landed = await followOAuth(fetch, url, "deny");
    expect(`${landed.origin}${landed.pathname}`).toBe(APP_CALLBACK);
    expect(landed.searchParams.get("error")).toBe("access_denied");
    expect(landed.searchParams.get("error_description")).toBe(
      "The user has denied your application access.",
    );
  });
});

describe("bad input", () => {
  it("/authorize refuses an unknown or disabled provider and a bad code_challenge", async () => {
    const unknown = await authFetch("/authorize?provider=myspace", {
      headers: { "X-Supabase-Api-Version": "2024-01-01" },
    });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toEqual({
      code: "validation_failed",
      message: "Unsupported provider: Provider myspace could not be found",
    });
    const disabled = await authFetch("/authorize?provider=gitlab", {
      headers: { "X-Supabase-Api-Version": "2024-01-01" },
    });
    expect(disabled.status).toBe(400);
    expect((await disabled.json()).message).toBe("Unsupported provider: provider is not enabled");
    const badPkce = await authFetch(
      "/authorize?provider=github&code_challenge=short&code_challenge_method=s256",
    );
    expect(badPkce.status).toBe(400);
    expect((await badPkce.json()).error_code).toBe("validation_failed");
  });

  it("a redirect_to outside the allow-list falls back to site_url", async () => {
    const { client, url } = await startOAuth("github", "https://evil.example/steal");
    const landed = await followOAuth(fetch, url, { email: randomEmail("fallback") });
    expect(landed.origin).toBe(SITE_URL);
    expect(landed.pathname).toBe("/");
    const { error } = await client.auth.exchangeCodeForSession(
      landed.searchParams.get("code") ?? "",
    );
    expect(error).toBeNull();
  });

  it("a tampered or missing state is refused before anything happens (303 to site_url)", async () => {
    const { url } = await startOAuth("github");
    const { pageUrl, state } = await openProviderPage(fetch, url);
    const submitted = await submitProviderPage(fetch, pageUrl, {
      state,
      decision: "allow",
      email: randomEmail("tamper"),
    });
    const callback = new URL(submitted.headers.get("location") ?? "");
    const [header, payload, signature] = state.split(".");
    const claims = JSON.parse(Buffer.from(payload ?? "", "base64url").toString());
    const forged = Buffer.from(
      JSON.stringify({ ...claims, referrer: "https://evil.example/" }),
    ).toString("base64url");
    callback.searchParams.set("state", `${header}.${forged}.${signature}`);
    const tampered = await expectRedirect(fetch, callback.toString());
    expect(tampered.status).toBe(303);
    const landed = new URL(tampered.location);
    expect(landed.origin).toBe(SITE_URL);
    expect(Object.fromEntries(landed.searchParams)).toEqual({
      error: "invalid_request",
      error_code: "bad_oauth_state",
      error_description: "OAuth callback with invalid state",
    });

    callback.searchParams.delete("state");
    const missing = new URL((await expectRedirect(fetch, callback.toString())).location);
    expect(missing.searchParams.get("error_code")).toBe("bad_oauth_callback");
    expect(missing.searchParams.get("error_description")).toBe("OAuth state parameter missing");
  });

  it("a provider code that is forged or belongs to another state is refused", async () => {
    const first = await startOAuth("github");
    const a = await openProviderPage(fetch, first.url);
    const second = await startOAuth("github");
    const b = await openProviderPage(fetch, second.url);
    const submitted = await submitProviderPage(fetch, a.pageUrl, {
      state: a.state,
      decision: "allow",
      email: randomEmail("swap"),
    });
    const callback = new URL(submitted.headers.get("location") ?? "");
    // The provider's code is no API token.
    const asBearer = await authFetch("/user", {
      headers: { Authorization: `Bearer ${callback.searchParams.get("code")}` },
    });
    expect(asBearer.status).toBe(403);
    expect((await asBearer.json()).error_code).toBe("bad_jwt");
    callback.searchParams.set("state", b.state);
    const swapped = new URL((await expectRedirect(fetch, callback.toString())).location);
    expect(swapped.searchParams.get("error")).toBe("server_error");
    expect(swapped.searchParams.get("error_description")).toMatch(
      /^Unable to exchange external code: /,
    );
    callback.searchParams.set("state", a.state);
    callback.searchParams.set("code", "not-a-provider-code");
    const forged = new URL((await expectRedirect(fetch, callback.toString())).location);
    expect(forged.searchParams.get("error")).toBe("server_error");
    callback.searchParams.delete("code");
    const noCode = new URL((await expectRedirect(fetch, callback.toString())).location);
    expect(noCode.searchParams.get("error_code")).toBe("bad_oauth_callback");
  });

  it("a callback used twice: flow_state_already_used; a code exchanged twice: flow_state_not_found", async () => {
    const { client, url } = await startOAuth("github");
    const { pageUrl, state } = await openProviderPage(fetch, url);
    const submitted = await submitProviderPage(fetch, pageUrl, {
      state,
      decision: "allow",
      email: randomEmail("twice"),
    });
    const callback = submitted.headers.get("location") ?? "";
    const first = new URL((await expectRedirect(fetch, callback)).location);
    const again = new URL((await expectRedirect(fetch, callback)).location);
    expect(again.searchParams.get("error_code")).toBe("flow_state_already_used");
    expect(again.searchParams.get("error_description")).toBe("State has already been used");

    const code = first.searchParams.get("code") ?? "";
    const ok = await client.auth.exchangeCodeForSession(code);
    expect(ok.error).toBeNull();
    const raw = await authFetch("/token?grant_type=pkce", {
      method: "POST",
      headers: { "X-Supabase-Api-Version": "2024-01-01" },
      body: JSON.stringify({ auth_code: code, code_verifier: "x".repeat(43) }),
    });
    expect(raw.status).toBe(404);
    expect((await raw.json()).code).toBe("flow_state_not_found");
  });

  it("the wrong code verifier is bad_code_verifier and leaves the code usable", async () => {
    const { client, url } = await startOAuth("google");
    const landed = await followOAuth(fetch, url, { email: randomEmail("verifier") });
    const code = landed.searchParams.get("code") ?? "";
    const wrong = await authFetch("/token?grant_type=pkce", {
      method: "POST",
      headers: { "X-Supabase-Api-Version": "2024-01-01" },
      body: JSON.stringify({ auth_code: code, code_verifier: "w".repeat(43) }),
    });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toEqual({
      code: "bad_code_verifier",
      message: "code challenge does not match previously saved code verifier",
    });
    const { error } = await client.auth.exchangeCodeForSession(code);
    expect(error).toBeNull();
  });

  it("the provider page answers a missing state, an empty or bad email with a 4xx page", async () => {
    const noState = await fetch(`${BACKEND_URL}/provider/github/authorize`);
    expect(noState.status).toBe(400);
    expect(await noState.text()).toContain("has no <code>state</code>");
    const unknown = await fetch(`${BACKEND_URL}/provider/gitlab/authorize?state=x`);
    expect(unknown.status).toBe(404);

    const { url } = await startOAuth("github");
    const { pageUrl, state } = await openProviderPage(fetch, url);
    const empty = await submitProviderPage(fetch, pageUrl, { state, decision: "allow", email: "" });
    expect(empty.status).toBe(400);
    const html = await empty.text();
    expect(html).toContain('aria-invalid="true"');
    expect(html).toContain("Enter the account&#39;s email address.");
    const bad = await submitProviderPage(fetch, pageUrl, {
      state,
      decision: "allow",
      email: "not an email",
      provider_id: "<script>",
    });
    expect(bad.status).toBe(400);
    const badHtml = await bad.text();
    expect(badHtml).toContain("Enter an email address like ada@example.com.");
    expect(badHtml).toContain("Use letters, digits and . _ @ - only");
    expect(badHtml).not.toContain("<script>");
  });
});

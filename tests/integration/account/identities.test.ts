import { describe, expect, it } from "vitest";
import { adminClient } from "../../support/backend";
import { hiddenState } from "../../support/oauth";
import { randomEmail, signedInBrowser } from "../support/auth-flows";
import { BrowserLess, type Visit } from "../support/browser-less";

/** On the local provider page (where the app's redirect chain ended): allow with this account. */
async function allowOnProviderPage(
  browser: BrowserLess,
  page: Visit,
  account: { email: string; provider_id?: string; name?: string },
) {
  expect(page.status).toBe(200);
  const action = new URL(page.url);
  action.search = "";
  return browser.post(
    action.toString(),
    {
      state: hiddenState(page.body),
      decision: "allow",
      name: account.name ?? "Octo Cat",
      email: account.email,
      provider_id: account.provider_id ?? "",
      email_verified: "true",
    },
    // the form is on the provider page: a browser sends that page's origin
    { origin: action.origin },
  );
}

/** The identities on the /account/identities page, by provider. */
function providersOn(body: string): string[] {
  return [...body.matchAll(/<li[^>]*data-provider="([a-z]+)"/g)].map((m) => m[1] ?? "").sort();
}

function identityId(body: string, provider: string): string {
  const item = new RegExp(
    `data-provider="${provider}"[\\s\\S]*?name="identityId" value="([^"]+)"`,
  ).exec(body);
  if (!item?.[1]) throw new Error(`no unlink form for ${provider}`);
  return item[1];
}

async function identitiesOf(userId: string) {
  const { data, error } = await adminClient().auth.admin.getUserById(userId);
  if (error) throw error;
  return (data.user.identities ?? []).map((i) => i.provider).sort();
}

describe("signing in with a provider from /sign-in", () => {
  it("GitHub through the local provider page signs in (PKCE back through /auth/callback)", async () => {
    const browser = new BrowserLess();
    const email = randomEmail("octo");
    const page = await browser.post("/sign-in", { intent: "oauth", provider: "github", next: "" });
    expect(page.body).toContain('name="state"');
    const landed = await allowOnProviderPage(browser, page, { email });
    expect(new URL(landed.url).pathname).toBe("/notes");
    expect(landed.body).toContain(email);
    expect(browser.hasSession()).toBe(true);
    const activity = await browser.get("/account/activity");
    expect(activity.body).toContain('data-kind="signed_in"');
    expect(activity.body).toMatch(/data-kind="signed_in"[\s\S]*?GitHub or Google/);
  });
});

describe("/account/identities", () => {
  it("links GitHub, lists it, then unlinks it", async () => {
    const { browser, user } = await signedInBrowser();
    const before = await browser.get("/account/identities");
    expect(providersOn(before.body)).toEqual(["email"]);
    expect(before.body).toContain("Your only way to sign in");

    const page = await browser.post("/account/identities", { intent: "link", provider: "github" });
    const landed = await allowOnProviderPage(browser, page, {
      email: randomEmail("gh"),
      provider_id: `gh-${crypto.randomUUID()}`,
    });
    expect(new URL(landed.url).pathname).toBe("/account/identities");
    expect(providersOn(landed.body)).toEqual(["email", "github"]);
    expect(await identitiesOf(user.id)).toEqual(["email", "github"]);

    const unlinked = await browser.post("/account/identities", {
      intent: "unlink",
      identityId: identityId(landed.body, "github"),
    });
    expect(unlinked.status).toBe(200);
    expect(unlinked.body).toContain("GitHub was unlinked.");
    expect(await identitiesOf(user.id)).toEqual(["email"]);

    const activity = await browser.get("/account/activity");
    expect(activity.body).toContain('data-kind="identity_linked"');
    expect(activity.body).toContain('data-kind="identity_unlinked"');
  });

  it("bad input: the last identity, someone else's, unknown ids and providers: 4xx, nothing unlinked", async () => {
    const { browser, user } = await signedInBrowser();
    const other = await signedInBrowser();
    const page = await browser.get("/account/identities");
    const own = /name="identityId" value="([^"]+)"/.exec(page.body)?.[1];
    expect(own).toBeUndefined(); // no Unlink button for the only identity
    const { data } = await adminClient().auth.admin.getUserById(user.id);
    const onlyId = data.user?.identities?.[0]?.identity_id ?? "";
    const last = await browser.post("/account/identities", {
      intent: "unlink",
      identityId: onlyId,
    });
    expect(last.status).toBe(422);
    expect(last.body).toContain("This is your only way to sign in");

    const theirs = await adminClient().auth.admin.getUserById(other.user.id);
    const theirId = theirs.data.user?.identities?.[0]?.identity_id ?? "";
    const notMine = await browser.post("/account/identities", {
      intent: "unlink",
      identityId: theirId,
    });
    expect(notMine.status).toBe(404);
    const unknown = await browser.post("/account/identities", {
      intent: "unlink",
      identityId: crypto.randomUUID(),
    });
    expect(unknown.status).toBe(404);
    const badProvider = await browser.post("/account/identities", {
      intent: "link",
      provider: "myspace",
    });
    expect(badProvider.status).toBe(400);
    expect(await identitiesOf(user.id)).toEqual(["email"]);
    expect(await identitiesOf(other.user.id)).toEqual(["email"]);
  });

  it("a provider account already linked to another user is refused (409) and nothing is linked", async () => {
    const providerId = `gh-${crypto.randomUUID()}`;
    const ghEmail = randomEmail("taken");
    const first = await signedInBrowser();
    const page = await first.browser.post("/account/identities", {
      intent: "link",
      provider: "github",
    });
    await allowOnProviderPage(first.browser, page, { email: ghEmail, provider_id: providerId });
    expect(await identitiesOf(first.user.id)).toEqual(["email", "github"]);

    const second = await signedInBrowser();
    const again = await second.browser.post("/account/identities", {
      intent: "link",
      provider: "github",
    });
    const refused = await allowOnProviderPage(second.browser, again, {
      email: ghEmail,
      provider_id: providerId,
    });
    expect(refused.status).toBe(409);
    expect(refused.body).toContain("That account is linked to someone else");
    expect(await identitiesOf(second.user.id)).toEqual(["email"]);
    expect(await identitiesOf(first.user.id)).toEqual(["email", "github"]);
    expect(second.browser.hasSession()).toBe(true);
  });
});

// Linked accounts end to end: linking GitHub through the local provider page (the local backend's
// stand-in for github.com's consent screen), signing in with it, and unlinking it again.
import type { Page } from "playwright-core";
import { describe, expect } from "vitest";
import { expectAccessible } from "./support/accessibility.ts";
import {
  arrivedAt,
  expectSignedIn,
  freshUser,
  randomEmail,
  signInWithPassword,
  signOutHere,
  submit,
  visit,
} from "./support/flows.ts";
import { main as stack } from "./support/stacks.ts";
import { test } from "./support/test.ts";

/** On the provider page: sign in there as this GitHub account. */
async function allowOnProviderPage(page: Page, account: { name: string; email: string }) {
  await page.waitForURL((url) => url.origin === stack.backendUrl);
  await page.getByRole("heading", { name: "Sign in with GitHub" }).waitFor();
  await page.fill("#name", account.name);
  await page.fill("#email", account.email);
  await page.getByRole("button", { name: "Sign in with GitHub" }).click();
}

/** The providers listed on /account/identities, read in one go (the list may be re-rendering). */
async function providers(page: Page): Promise<string[]> {
  return page
    .locator("li[data-provider]")
    .evaluateAll((items) => items.map((item) => item.getAttribute("data-provider") ?? ""));
}

describe.each([
  { javaScriptEnabled: true, label: "JavaScript on" },
  { javaScriptEnabled: false, label: "JavaScript off" },
])("linked accounts ($label)", ({ javaScriptEnabled }) => {
  test("link GitHub through the provider page, sign in with it, unlink it", async ({ browser }) => {
    const user = await freshUser(stack, "link");
    const github = { name: "Octo Cat", email: randomEmail("octocat") };
    const page = await browser.open({ javaScriptEnabled });
    await signInWithPassword(page, stack, user);

    await visit(page, stack, "/account/identities");
    expect(await providers(page)).toEqual(["email"]);
    await submit(page, "Link GitHub");
    await allowOnProviderPage(page, github);
    await arrivedAt(page, stack, "/account/identities");
    expect((await providers(page)).sort()).toEqual(["email", "github"]);
    await expectAccessible(page, "/account/identities with GitHub linked");

    // GitHub now signs in to this same account (its address differs from the account's).
    await visit(page, stack, "/");
    await signOutHere(page, stack);
    await visit(page, stack, "/sign-in");
    await submit(page, "Continue with GitHub");
    await allowOnProviderPage(page, github);
    await expectSignedIn(page, stack, user.email);

    // Unlinked, it is gone from the list; the password still works.
    await visit(page, stack, "/account/identities");
    await page.getByRole("button", { name: "Unlink GitHub" }).click();
    await page.getByRole("status").waitFor();
    expect(await providersSettled(page, ["email"])).toEqual(["email"]);
    await visit(page, stack, "/");
    await signOutHere(page, stack);
    await signInWithPassword(page, stack, user);
  });
});

/** The list after an action: it may take a moment to be reloaded (JavaScript on). */
async function providersSettled(page: Page, expected: string[]) {
  const deadline = Date.now() + 15_000;
  let seen = await providers(page);
  while (JSON.stringify(seen) !== JSON.stringify(expected) && Date.now() < deadline) {
    await page.waitForTimeout(200);
    seen = await providers(page);
  }
  return seen;
}

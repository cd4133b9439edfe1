import { describe, expect } from "vitest";
import { PASSWORD, randomEmail } from "../support/backend.ts";
import {
  arrivedAt,
  confirmLinkIn,
  confirmThroughLink,
  expectSignedIn,
  followEmailLink,
  freshUser,
  invite,
  openInbox,
  submit,
  visit,
} from "./support/flows.ts";
import { main as stack } from "./support/stacks.ts";
import { test } from "./support/test.ts";

/** Session cookies the app set in this browser (none until the button is pressed). */
async function sessionCookies(page: import("playwright-core").Page) {
  const cookies = await page.context().cookies(stack.appUrl);
  return cookies.filter((cookie) => cookie.name.includes("auth-token"));
}

// The emails are the project's (supabase/templates, in config.toml): their links go to
// /auth/confirm with a token hash, so these follow a real email to the page that asks for a press.
describe.each([
  { javaScriptEnabled: true, label: "JavaScript on" },
  { javaScriptEnabled: false, label: "JavaScript off" },
])("an emailed /auth/confirm link ($label)", ({ javaScriptEnabled }) => {
  test("opening it changes nothing; pressing Confirm signs in", async ({ browser }) => {
    const email = await invite(stack);
    const page = await browser.open({ javaScriptEnabled });
    const inbox = await openInbox(page, stack, email, "invite");
    await inbox.locator('a[href*="/auth/confirm"]').first().click();
    await arrivedAt(page, stack, "/auth/confirm");
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe(
      "Accept your invitation",
    );
    expect(await sessionCookies(page)).toEqual([]);
    // A mail scanner (or the person) opening it again does not use it up either.
    await page.reload();
    expect(await sessionCookies(page)).toEqual([]);
    await page.getByRole("button", { name: "Confirm", exact: true }).click();
    await expectSignedIn(page, stack, email);
  });

  test("a link whose next points off-site (/.//evil.example) ends on the app", async ({
    browser,
  }) => {
    const email = await invite(stack);
    const page = await browser.open({ javaScriptEnabled });
    const link = await confirmLinkIn(page, stack, email, "invite");
    link.searchParams.set("next", "/.//evil.example");
    await confirmThroughLink(page, stack, link, "Confirm");
    await expectSignedIn(page, stack, email);
    expect(new URL(page.url()).origin).toBe(stack.appUrl);
  });
});

/** What a mail scanner does with the newest `type` email's links: a plain GET, no cookies. */
async function scan(page: import("playwright-core").Page, email: string, type: string) {
  const message = await openInbox(page, stack, email, type);
  const links = await message
    .locator('a[href*="/auth/"]')
    .evaluateAll((anchors) => anchors.map((a) => (a as HTMLAnchorElement).href));
  expect(links.length).toBeGreaterThan(0);
  for (const link of links) await (await fetch(link)).arrayBuffer();
}

describe("a mail scanner opens the email's link first", () => {
  test("sign-up: the person's own click still confirms and signs in", async ({ browser }) => {
    const email = randomEmail("scanned");
    const page = await browser.open();
    await visit(page, stack, "/sign-up");
    await page.fill("#field-email", email);
    await page.fill("#field-password", PASSWORD);
    await submit(page, "Sign up");
    await arrivedAt(page, stack, "/sign-up/check-email");
    await scan(await page.context().newPage(), email, "confirmation");
    await followEmailLink(page, stack, email, "confirmation");
    await expectSignedIn(page, stack, email);
  });

  test("magic link: the person's own click still signs in", async ({ browser }) => {
    const user = await freshUser(stack);
    const page = await browser.open();
    await visit(page, stack, "/sign-in");
    await page.fill("#field-email", user.email);
    await submit(page, "Email me a magic link");
    await arrivedAt(page, stack, "/sign-in/check-email");
    await scan(await page.context().newPage(), user.email, "magic_link");
    await followEmailLink(page, stack, user.email, "magic_link");
    await expectSignedIn(page, stack, user.email);
  });
});

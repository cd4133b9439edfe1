import { describe, expect } from "vitest";
import {
  arrivedAt,
  confirmLinkIn,
  confirmThroughLink,
  expectSignedIn,
  invite,
  openInbox,
} from "./support/flows.ts";
import { main as stack } from "./support/stacks.ts";
import { test } from "./support/test.ts";

/** Session cookies the app set in this browser (none until the button is pressed). */
async function sessionCookies(page: import("playwright-core").Page) {
  const cookies = await page.context().cookies(stack.appUrl);
  return cookies.filter((cookie) => cookie.name.includes("auth-token"));
}

// The e2e backends send invitations with a token-hash template that links to /auth/confirm
// (tests/e2e/setup/servers.ts), so these follow a real email to the page that asks for a press.
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

import { describe, expect } from "vitest";
import { expectAccessible } from "./support/accessibility.ts";
import {
  arrivedAt,
  expectSignedIn,
  followEmailLink,
  PASSWORD,
  randomEmail,
  signOutHere,
  submit,
  visit,
} from "./support/flows.ts";
import { main as stack } from "./support/stacks.ts";
import { test } from "./support/test.ts";

describe.each([
  { javaScriptEnabled: true, label: "JavaScript on" },
  { javaScriptEnabled: false, label: "JavaScript off" },
])("sign-up ($label)", ({ javaScriptEnabled }) => {
  test("confirmed through the link in the inbox, then signed in", async ({ browser }) => {
    const email = randomEmail("signup");
    const page = await browser.open({ javaScriptEnabled });
    await visit(page, stack, "/sign-up");
    // A too-short password is refused beside its field before anything is sent.
    await page.fill("#field-email", email);
    await page.fill("#field-password", "short");
    await submit(page, "Sign up");
    await page.locator("#field-password-error").waitFor();
    expect(await page.getAttribute("#field-password", "aria-invalid")).toBe("true");
    await expectAccessible(page, "/sign-up with field errors");

    await page.fill("#field-displayName", "Ada E2E");
    await page.fill("#field-email", email);
    await page.fill("#field-password", PASSWORD);
    await submit(page, "Sign up");
    await arrivedAt(page, stack, "/sign-up/check-email");
    expect(await page.getByRole("main").textContent()).toContain(email);

    // Until the link is opened, the password is refused with the reason.
    await visit(page, stack, "/sign-in");
    await page.fill("#field-email", email);
    await page.fill("#field-password", PASSWORD);
    await submit(page, "Sign in");
    await page.getByTestId("error-code").waitFor();
    expect(await page.getByTestId("error-code").textContent()).toBe("email_not_confirmed");

    await followEmailLink(page, stack, email, "confirmation");
    await expectSignedIn(page, stack, email);

    // The account works with its password afterwards.
    await signOutHere(page, stack);
    await visit(page, stack, "/sign-in");
    await page.fill("#field-email", email);
    await page.fill("#field-password", PASSWORD);
    await submit(page, "Sign in");
    await expectSignedIn(page, stack, email);
  });
});

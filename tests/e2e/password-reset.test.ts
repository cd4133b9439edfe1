import { describe, expect } from "vitest";
import { expectAccessible } from "./support/accessibility.ts";
import {
  arrivedAt,
  expectSignedIn,
  followEmailLink,
  freshUser,
  signOutHere,
  submit,
  visit,
} from "./support/flows.ts";
import { main as stack } from "./support/stacks.ts";
import { test } from "./support/test.ts";

describe.each([
  { javaScriptEnabled: true, label: "JavaScript on" },
  { javaScriptEnabled: false, label: "JavaScript off" },
])("password reset ($label)", ({ javaScriptEnabled }) => {
  test("the emailed link leads to a new password that signs in", async ({ browser }) => {
    const user = await freshUser(stack, "reset");
    const newPassword = `new-${crypto.randomUUID().slice(0, 12)}`;
    const page = await browser.open({ javaScriptEnabled });
    await visit(page, stack, "/sign-in");
    await page.getByRole("link", { name: "Forgot password?" }).click();
    await arrivedAt(page, stack, "/forgot-password");
    await page.fill("#field-email", user.email);
    await submit(page, "Send reset link");
    const sent = page.getByRole("status");
    await sent.waitFor();
    expect(await sent.textContent()).toContain(user.email);
    await expectAccessible(page, "/forgot-password, link sent");

    await followEmailLink(page, stack, user.email, "recovery");
    await arrivedAt(page, stack, "/reset-password");
    expect(await page.getByRole("main").textContent()).toContain(user.email);
    await page.fill("#field-password", newPassword);
    await submit(page, "Set new password");
    await expectSignedIn(page, stack, user.email);

    // The old password no longer works; the new one does.
    await signOutHere(page, stack);
    await visit(page, stack, "/sign-in");
    await page.fill("#field-email", user.email);
    await page.fill("#field-password", user.password);
    await submit(page, "Sign in");
    await page.getByTestId("error-code").waitFor();
    expect(await page.getByTestId("error-code").textContent()).toBe("invalid_credentials");
    await page.fill("#field-password", newPassword);
    await submit(page, "Sign in");
    await expectSignedIn(page, stack, user.email);
  });
});

import { describe, expect } from "vitest";
import { expectAccessible } from "./support/accessibility.ts";
import {
  arrivedAt,
  emailedCode,
  expectSignedIn,
  followEmailLink,
  freshUser,
  signInWithPassword,
  submit,
  visit,
} from "./support/flows.ts";
import { main as stack } from "./support/stacks.ts";
import { test } from "./support/test.ts";

describe.each([
  { javaScriptEnabled: true, label: "JavaScript on" },
  { javaScriptEnabled: false, label: "JavaScript off" },
])("sign-in ($label)", ({ javaScriptEnabled }) => {
  test("with the password, after a wrong one is refused beside the form", async ({ browser }) => {
    const user = await freshUser(stack);
    const page = await browser.open({ javaScriptEnabled });
    await visit(page, stack, "/sign-in");
    await page.fill("#field-email", user.email);
    await page.fill("#field-password", "not-the-password");
    await submit(page, "Sign in");
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toContain("The email or password is incorrect.");
    await expectAccessible(page, "/sign-in with a wrong password");
    expect(await page.getByTestId("error-code").textContent()).toBe("invalid_credentials");
    expect(await page.inputValue("#field-email")).toBe(user.email);

    await signInWithPassword(page, stack, user);
    const header = page.getByRole("banner");
    expect(await header.textContent()).toContain(user.email);
  });

  test("with a code from the email", async ({ browser }) => {
    const user = await freshUser(stack);
    const page = await browser.open({ javaScriptEnabled });
    await visit(page, stack, "/sign-in");
    await page.fill("#field-email", user.email);
    await submit(page, "Email me a code");
    await arrivedAt(page, stack, "/sign-in/code");
    expect(await page.inputValue("#field-email")).toBe(user.email);

    // The person reads the code in their mail in another tab and types it here.
    const inbox = await page.context().newPage();
    const code = await emailedCode(inbox, stack, user.email, "magic_link");
    await inbox.close();
    await page.fill("#field-code", `${code.slice(0, 3)} ${code.slice(3)}`);
    await submit(page, "Verify");
    await expectSignedIn(page, stack, user.email);
  });

  test("with the magic link from the email", async ({ browser }) => {
    const user = await freshUser(stack);
    const page = await browser.open({ javaScriptEnabled });
    await visit(page, stack, "/sign-in");
    await page.fill("#field-email", user.email);
    await submit(page, "Email me a magic link");
    await arrivedAt(page, stack, "/sign-in/check-email");
    expect(await page.getByRole("main").textContent()).toContain(user.email);

    await followEmailLink(page, stack, user.email, "magic_link");
    await expectSignedIn(page, stack, user.email);
  });
});

// Two-factor sign-in end to end: enrolling an authenticator app on /account/security (the code
// computed from the secret the page shows, as the app would), then signing in again, which asks for
// a code on /mfa before the account opens. The variants run side by side.
import { Secret, TOTP } from "otpauth";
import type { Page } from "playwright-core";
import { describe, expect } from "vitest";
import { expectAccessible } from "./support/accessibility.ts";
import {
  arrivedAt,
  expectSignedIn,
  freshUser,
  signOutHere,
  submit,
  visit,
} from "./support/flows.ts";
import { main as stack } from "./support/stacks.ts";
import { test } from "./support/test.ts";

/**
 * What the authenticator app shows now, or once that code is used, what it will show in the next
 * 30 s window: Auth accepts one window either side (an authenticator whose clock runs a little
 * ahead), so the test need not wait up to 30 s for the window to turn.
 */
async function codeFor(page: Page, secret: string, used: Set<string>): Promise<string> {
  const totp = new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 });
  for (const ahead of [0, 30_000]) {
    const code = totp.generate({ timestamp: Date.now() + ahead });
    if (!used.has(code)) {
      used.add(code);
      return code;
    }
  }
  // Both already used (two uses in one window and a repeated code): wait for a new window.
  let code = totp.generate();
  while (used.has(code)) {
    await page.waitForTimeout(1000);
    code = totp.generate();
  }
  used.add(code);
  return code;
}

describe.concurrent.each([
  { javaScriptEnabled: true, label: "JavaScript on" },
  { javaScriptEnabled: false, label: "JavaScript off" },
])("two-factor sign-in ($label)", ({ javaScriptEnabled }) => {
  test("enroll an authenticator app, then sign-in asks for its code", async ({ browser }) => {
    const user = await freshUser(stack, "mfa");
    const used = new Set<string>();
    const page = await browser.open({ javaScriptEnabled });
    await visit(page, stack, "/sign-in");
    await page.fill("#field-email", user.email);
    await page.fill("#field-password", user.password);
    await submit(page, "Sign in");
    await expectSignedIn(page, stack, user.email);

    await visit(page, stack, "/account/security");
    await page.fill("#field-name", "Phone");
    await submit(page, "Add authenticator app");
    await page.getByTestId("totp-qr").waitFor();
    const secret = (await page.getByTestId("totp-secret").getAttribute("data-secret")) ?? "";
    expect(secret).toMatch(/^[A-Z2-7]+=*$/);
    await expectAccessible(page, "/account/security enrolling (QR code)");

    // A wrong code is refused beside the field; the right one turns the factor on.
    const current = new TOTP({ secret: Secret.fromBase32(secret) }).generate();
    await page.fill(
      "#field-code",
      String((Number(current) + 500_000) % 1_000_000).padStart(6, "0"),
    );
    await submit(page, "Verify and turn on");
    await page.locator("#field-code-error").waitFor();
    await expectAccessible(page, "/account/security with a wrong code");
    await page.fill("#field-code", await codeFor(page, secret, used));
    await submit(page, "Verify and turn on");
    await page.getByTestId("factors").waitFor();
    expect(await page.getByTestId("factors").textContent()).toContain("Phone");
    expect(await page.getByRole("button", { name: "Remove Phone", exact: true }).count()).toBe(1);
    await expectAccessible(page, "/account/security with a factor");

    // Signing in again: the password alone leads to the code page, not into the account.
    await visit(page, stack, "/");
    await signOutHere(page, stack);
    await visit(page, stack, "/sign-in");
    await page.fill("#field-email", user.email);
    await page.fill("#field-password", user.password);
    await submit(page, "Sign in");
    await arrivedAt(page, stack, "/mfa");
    await visit(page, stack, "/notes");
    await arrivedAt(page, stack, "/mfa");
    await page.fill("#field-code", await codeFor(page, secret, used));
    await submit(page, "Continue");
    await arrivedAt(page, stack, "/notes");
    await visit(page, stack, "/");
    await expectSignedIn(page, stack, user.email, "/");
    expect(await page.getByTestId("session").textContent()).toContain("Two factors (aal2)");
  });
});

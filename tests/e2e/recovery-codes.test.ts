// Recovery codes end to end: enroll an authenticator app, make a set of recovery codes (shown
// once), sign out, and get past /mfa with one of them instead of the app.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Secret, TOTP } from "otpauth";
import { describe, expect } from "vitest";
import {
  arrivedAt,
  expectSignedIn,
  freshUser,
  signInWithPassword,
  signOutHere,
  submit,
  visit,
} from "./support/flows.ts";
import { RESULTS_DIR } from "./support/results.ts";
import { main as stack } from "./support/stacks.ts";
import { test } from "./support/test.ts";

describe("recovery codes", () => {
  test("enroll an authenticator app, then sign in with a recovery code instead", async ({
    browser,
  }) => {
    const user = await freshUser(stack, "recovery");
    const page = await browser.open();
    await signInWithPassword(page, stack, user);

    await visit(page, stack, "/account/security");
    await page.fill("#field-name", "Phone");
    await submit(page, "Add authenticator app");
    await page.getByTestId("totp-qr").waitFor();
    const secret = (await page.getByTestId("totp-secret").getAttribute("data-secret")) ?? "";
    await page.fill("#field-code", new TOTP({ secret: Secret.fromBase32(secret) }).generate());
    await submit(page, "Verify and turn on");
    await page.getByTestId("factors").waitFor();

    await submit(page, "Generate recovery codes");
    await page.getByTestId("recovery-codes").waitFor();
    const codes = await page
      .getByTestId("recovery-codes")
      .locator("li")
      .evaluateAll((items) => items.map((item) => item.getAttribute("data-code") ?? ""));
    expect(codes).toHaveLength(10);
    mkdirSync(RESULTS_DIR, { recursive: true });
    await page.screenshot({ path: join(RESULTS_DIR, "recovery-codes.png"), fullPage: true });

    await visit(page, stack, "/");
    await signOutHere(page, stack);
    await visit(page, stack, "/sign-in");
    await page.fill("#field-email", user.email);
    await page.fill("#field-password", user.password);
    await submit(page, "Sign in");
    await arrivedAt(page, stack, "/mfa");
    await page.getByText("Use a recovery code").click();
    await page.fill("#field-recoveryCode", (codes[0] ?? "").toUpperCase());
    await submit(page, "Use recovery code");
    await expectSignedIn(page, stack, user.email);

    await visit(page, stack, "/account/security");
    expect(await page.getByTestId("recovery-codes-status").textContent()).toContain(
      "9 of 10 codes left",
    );
  }, 150_000);
});

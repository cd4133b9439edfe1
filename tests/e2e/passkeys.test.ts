// Passkeys end to end in Chromium with a virtual authenticator (the DevTools protocol's WebAuthn
// domain: a platform authenticator with user verification, holding resident keys): add one on
// /account/security, sign out, sign in with it from /sign-in (through autofill, then the button).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect } from "vitest";
import {
  arrivedAt,
  expectSignedIn,
  freshUser,
  signInWithPassword,
  signOutHere,
  visit,
} from "./support/flows.ts";
import { RESULTS_DIR } from "./support/results.ts";
import { main as stack } from "./support/stacks.ts";
import { test } from "./support/test.ts";

/** A virtual platform authenticator in this page's browser context. */
async function addVirtualAuthenticator(page: Page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
    },
  });
  return {
    credentials: async () =>
      (await cdp.send("WebAuthn.getCredentials", { authenticatorId })).credentials,
  };
}

describe("passkeys", () => {
  test("add a passkey, sign out, sign in with it (autofill, then the button)", async ({
    browser,
  }) => {
    const user = await freshUser(stack, "passkey");
    const page = await browser.open();
    const authenticator = await addVirtualAuthenticator(page);
    await signInWithPassword(page, stack, user);

    await visit(page, stack, "/account/security");
    await page.getByRole("button", { name: "Add a passkey" }).click();
    await page.getByText("Passkey “Chrome on Linux” added.").waitFor();
    await page.getByTestId("passkeys").getByText("Chrome on Linux", { exact: true }).waitFor();
    expect(await authenticator.credentials()).toHaveLength(1);
    mkdirSync(RESULTS_DIR, { recursive: true });
    await page.screenshot({ path: join(RESULTS_DIR, "account-security.png"), fullPage: true });

    // Passkey autofill: Chromium's virtual authenticator answers the email field's quiet
    // (conditional) request as a person picking the suggestion would; no click needed.
    await signOutHere(page, stack);
    await page.goto(`${stack.appUrl}/sign-in`);
    await expectSignedIn(page, stack, user.email);

    // The button, in a browser without passkey autofill.
    await page.addInitScript(() => {
      PublicKeyCredential.isConditionalMediationAvailable = async () => false;
    });
    await signOutHere(page, stack);
    await visit(page, stack, "/sign-in");
    await page.getByRole("button", { name: "Sign in with a passkey" }).click();
    await expectSignedIn(page, stack, user.email);

    await visit(page, stack, "/account/activity");
    const kinds = await page
      .locator("[data-kind]")
      .evaluateAll((items) => items.map((item) => item.getAttribute("data-kind")));
    expect(kinds.slice(0, 4)).toEqual(["signed_in", "signed_out", "signed_in", "signed_out"]);
    expect(kinds).toContain("passkey_added");
    expect(await page.locator('[data-kind="signed_in"]').first().textContent()).toContain(
      "Passkey",
    );
  }, 150_000);

  test("with JavaScript off, /sign-in offers no passkey and the page works as before", async ({
    browser,
  }) => {
    const page = await browser.open({ javaScriptEnabled: false });
    await visit(page, stack, "/sign-in");
    expect(await page.getByTestId("passkey-sign-in").count()).toBe(0);
    expect(await page.getByRole("button", { name: "Sign in with a passkey" }).count()).toBe(0);
    await arrivedAt(page, stack, "/sign-in");
  });
});

// Every device's session on /account/sessions: one person signed in from two browsers (two
// contexts: separate cookie jars, so two sessions). The laptop sees both, this one marked, and
// signs the phone out from its row; the phone's next account page asks the auth server and is
// signed out at once. With JavaScript off the row's button is a plain form post.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect } from "vitest";
import {
  arrivedAt,
  expectSignedOut,
  freshUser,
  signInWithPassword,
  visit,
} from "./support/flows.ts";
import { RESULTS_DIR } from "./support/results.ts";
import { main as stack } from "./support/stacks.ts";
import { test } from "./support/test.ts";

describe.each([
  { javaScriptEnabled: true, label: "JavaScript on" },
  { javaScriptEnabled: false, label: "JavaScript off" },
])("account sessions ($label)", ({ javaScriptEnabled }) => {
  test("sign in from two browsers, end one from the other's sessions page", async ({ browser }) => {
    const user = await freshUser(stack, "sessions");
    const laptop = await browser.open({ javaScriptEnabled });
    const phone = await browser.open({ javaScriptEnabled });
    await signInWithPassword(laptop, stack, user);
    await signInWithPassword(phone, stack, user);

    await visit(laptop, stack, "/account/sessions");
    const rows = laptop.getByTestId("sessions").locator("li");
    expect(await rows.count()).toBe(2);
    const mine = laptop.locator("li[data-current]");
    expect(await mine.count()).toBe(1);
    expect(await mine.textContent()).toContain("This device");
    // Headless Chromium on Linux, read from the user agent the auth server recorded.
    expect(await mine.textContent()).toContain("Chrome on Linux");
    const other = laptop.locator("li:not([data-current])", { hasText: "Sign out this device" });
    expect(await other.textContent()).toContain("One factor (aal1)");
    if (javaScriptEnabled) {
      mkdirSync(RESULTS_DIR, { recursive: true });
      await laptop.screenshot({
        path: join(RESULTS_DIR, "account-sessions.png"),
        fullPage: true,
      });
    }

    await other.getByRole("button", { name: "Sign out this device" }).click();
    await laptop.getByText("Chrome on Linux is signed out.").waitFor();
    await arrivedAt(laptop, stack, "/account/sessions");
    // With JavaScript the notice can show while the list is still being reloaded: wait for it.
    await rows.nth(1).waitFor({ state: "detached" });
    expect(await rows.count()).toBe(1);
    expect(await laptop.locator("li[data-current]").count()).toBe(1);

    // The phone's next account page asks the auth server: signed out at once.
    await phone.goto(`${stack.appUrl}/account/sessions`);
    await arrivedAt(phone, stack, "/sign-in");
    await phone.getByTestId("session-ended").waitFor();
    await visit(phone, stack, "/");
    await expectSignedOut(phone, stack);

    // The laptop carries on, and its activity says what happened.
    await visit(laptop, stack, "/account/activity");
    expect(await laptop.locator("[data-kind]").first().getAttribute("data-kind")).toBe(
      "session_ended",
    );
  }, 150_000);
});

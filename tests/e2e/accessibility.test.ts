// The accessibility check, page by page: axe-core (WCAG 2.0/2.1 A and AA rules and best
// practices) on the app's pages signed out and signed in, and on the states a person meets when
// something goes wrong (field errors, a wrong password, a missing page, the backend down), each
// in the light and the dark colour scheme (support/accessibility.ts).
//
// The other flows audit what they visit too, under the same labels (`visit` and `arrivedAt` audit
// each page; tests audit states a URL does not tell apart), and a label is audited once per run,
// so in a full run each state costs one audit wherever it is met first; run alone
// (`npm run test:a11y`), this file audits every state below.
import type { Page } from "playwright-core";
import { describe, expect } from "vitest";
import { expectAccessible } from "./support/accessibility.ts";
import {
  arrivedAt,
  expectSignedIn,
  freshUser,
  NOTE_PAGE,
  randomEmail,
  settled,
  submit,
  visit,
} from "./support/flows.ts";
import { main as stack, unreachable } from "./support/stacks.ts";
import { test } from "./support/test.ts";

async function signIn(page: Page, user: { email: string; password: string }) {
  await visit(page, stack, "/sign-in");
  await page.fill("#field-email", user.email);
  await page.fill("#field-password", user.password);
  await submit(page, "Sign in");
  await expectSignedIn(page, stack, user.email);
}

describe("accessibility (axe, light and dark)", () => {
  test("signed-out pages, field errors, a wrong password and the 404 page", async ({ browser }) => {
    const page = await browser.open();
    for (const path of ["/", "/sign-in", "/sign-up", "/forgot-password"]) {
      await visit(page, stack, path);
    }

    // A form with field errors (the server's messages beside the fields).
    await visit(page, stack, "/sign-up");
    await page.fill("#field-email", "not-an-address");
    await page.fill("#field-password", "short");
    await submit(page, "Sign up");
    await page.locator("#field-password-error").waitFor();
    await expectAccessible(page, "/sign-up with field errors");

    // A form-level error with its code.
    await visit(page, stack, "/sign-in");
    await page.fill("#field-email", randomEmail("nobody"));
    await page.fill("#field-password", "not-the-password");
    await submit(page, "Sign in");
    await page.getByTestId("error-code").waitFor();
    await expectAccessible(page, "/sign-in with a wrong password");

    const missing = await page.goto(`${stack.appUrl}/no-such-page`);
    expect(missing?.status()).toBe(404);
    await settled(page);
    await expectAccessible(page, "404, signed out");

    // A status page with an error code: a form far too large to read, posted by the browser.
    await visit(page, stack, "/sign-in");
    // (the navigation's answer, not the passkey options the sign-in page posts for as it loads)
    const refused = page.waitForResponse(
      (response) =>
        response.request().isNavigationRequest() && response.request().method() === "POST",
    );
    await page.evaluate(() => {
      const form = document.createElement("form");
      form.method = "post";
      form.action = "/sign-in";
      const field = document.createElement("textarea");
      field.name = "email";
      field.value = "x".repeat(100 * 1024);
      form.append(field);
      document.body.append(form);
      form.submit();
    });
    expect((await refused).status()).toBe(413);
    await page.getByTestId("error-code").waitFor();
    expect(await page.getByTestId("error-code").textContent()).toBe("form_too_large");
    await expectAccessible(page, "a status page with an error code");
  });

  test("signed-in note pages: the list, a note, its forms with field errors", async ({
    browser,
  }) => {
    const owner = await freshUser(stack, "a11y");
    const page = await browser.open();
    await signIn(page, owner);
    await visit(page, stack, "/notes");
    await visit(page, stack, "/notes/new");
    await submit(page, "Create note");
    await page.locator("#field-title-error").waitFor();
    await expectAccessible(page, "/notes/new with field errors");

    await page.fill("#field-title", "Reading list");
    await page.fill("#field-body", "Inclusive Components\nThe Design of Everyday Things");
    await page.fill("#field-tags", "books, ideas");
    await submit(page, "Create note");
    const notePath = await arrivedAt(page, stack, NOTE_PAGE);
    await visit(page, stack, `${notePath}/edit`);
    await visit(page, stack, `${notePath}/delete`);

    await visit(page, stack, "/notes");
    await page.getByTestId("note-card").waitFor();
    await expectAccessible(page, "/notes with a note card");
    await visit(page, stack, "/notes?q=inclusive");
    await page.getByTestId("filter-summary").waitFor();
    await visit(page, stack, "/notes?view=archived");
  });

  test("signed-in account sections and the 404 page", async ({ browser }) => {
    const page = await browser.open();
    await signIn(page, await freshUser(stack, "a11y-account"));
    // The four sections the issue names, and the others.
    for (const path of [
      "/account",
      "/account/security",
      "/account/sessions",
      "/account/activity",
      "/account/email",
      "/account/password",
      "/account/identities",
    ]) {
      await visit(page, stack, path);
    }

    const missing = await page.goto(`${stack.appUrl}/notes/00000000-0000-4000-8000-000000000000`);
    expect(missing?.status()).toBe(404);
    await settled(page);
    await expectAccessible(page, "404, signed in");
  });

  test("when the backend is unreachable: the home page and a sign-in attempt", async ({
    browser,
  }) => {
    const page = await browser.open();
    await page.goto(`${unreachable.appUrl}/`);
    await settled(page);
    await page.getByTestId("backend-unreachable").waitFor();
    await expectAccessible(page, "/ with the backend unreachable");

    await page.goto(`${unreachable.appUrl}/sign-in`);
    await settled(page);
    await page.fill("#field-email", randomEmail("down"));
    await page.fill("#field-password", "whatever-it-is");
    await submit(page, "Sign in");
    await page.getByTestId("error-code").waitFor();
    expect(await page.getByTestId("error-code").textContent()).toBe("backend_unreachable");
    await expectAccessible(page, "/sign-in with the backend unreachable");
  });
});

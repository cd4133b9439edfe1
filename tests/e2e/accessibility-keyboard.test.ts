// Keyboard and screen-reader basics, with JavaScript on: the flows done with the keyboard alone
// (every stop on the way shows a focus outline), focus and announcements after a failed submit,
// accessible names of the note buttons, the current page in the account navigation, non-text
// contrast (focus outline, input borders) in both colour schemes, and reduced motion.
import type { Page } from "playwright-core";
import { describe, expect } from "vitest";
import { contrast, paintOf } from "./support/contrast.ts";
import {
  arrivedAt,
  expectSignedIn,
  freshUser,
  NOTE_PAGE,
  signInWithPassword,
  submit,
  visit,
} from "./support/flows.ts";
import { main as stack } from "./support/stacks.ts";
import { test } from "./support/test.ts";

/** "a “Forgot password?”" for messages: the focused element, as a person would name it. */
async function focusedName(page: Page): Promise<string> {
  return page.evaluate(() => {
    const e = document.activeElement;
    if (!e || e === document.body) return "(nothing)";
    const text = (e.getAttribute("aria-label") ?? e.textContent ?? "").trim().slice(0, 40);
    return `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ""} “${text}”`;
  });
}

/**
 * Presses Tab until the focused element matches `selector` (at most `limit` presses). Every
 * element it passes must show a focus outline, as a keyboard user needs to see where they are.
 */
async function tabTo(page: Page, selector: string, limit = 25) {
  const passed: string[] = [];
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press("Tab");
    passed.push(await focusedName(page));
    // Past the last stop the focus leaves the page for a moment before it starts over.
    if (passed.at(-1) === "(nothing)") continue;
    const focused = page.locator(":focus");
    const paint = await paintOf(focused);
    expect(paint.outlineStyle, `focus outline of ${passed.at(-1)}`).not.toBe("none");
    if (await focused.evaluate((e, s) => e.matches(s), selector)) return;
  }
  throw new Error(`Tab never reached ${selector}; it went through:\n${passed.join("\n")}`);
}

/** The element that has focus matches `selector`. */
async function expectFocusOn(page: Page, selector: string) {
  await expect
    .poll(() => page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector), {
      message: `focus on ${selector} (it is on ${await focusedName(page)})`,
    })
    .toBe(true);
}

/** The focused field is marked invalid and describes itself with its visible error message. */
async function expectAnnouncedError(page: Page, field: string) {
  const input = page.locator(field);
  expect(await input.getAttribute("aria-invalid")).toBe("true");
  const describedBy = (await input.getAttribute("aria-describedby"))?.split(" ") ?? [];
  const errorId = describedBy.find((id) => id.endsWith("-error"));
  expect(errorId, `aria-describedby of ${field}: ${describedBy}`).toBeTruthy();
  const message = (await page.locator(`#${errorId}`).textContent())?.trim() ?? "";
  expect(message.length).toBeGreaterThan(0);
  expect(await page.locator(`#${errorId}`).isVisible()).toBe(true);
  return message;
}

describe("keyboard and screen reader basics (JavaScript on)", () => {
  test("sign in and write a note with the keyboard alone", async ({ browser }) => {
    const user = await freshUser(stack, "keys");
    const page = await browser.open();
    await visit(page, stack, "/sign-in");

    // The first stop is the skip link, shown when focused.
    await page.keyboard.press("Tab");
    expect(await focusedName(page)).toBe("a “Skip to content”");
    expect((await page.locator(":focus").boundingBox())?.width ?? 0).toBeGreaterThan(20);

    await tabTo(page, "#field-email");
    await page.keyboard.type(user.email);
    await tabTo(page, "#field-password");
    await page.keyboard.type(user.password);
    await page.keyboard.press("Enter");
    await expectSignedIn(page, stack, user.email);

    // To the notes through the header, then "New note".
    await tabTo(page, 'header a[href="/notes"]');
    await page.keyboard.press("Enter");
    await arrivedAt(page, stack, "/notes");
    await tabTo(page, 'main a[href="/notes/new"]');
    await page.keyboard.press("Enter");
    await arrivedAt(page, stack, "/notes/new");

    // Submitting without a title: focus lands on the title, which says what is wrong.
    await tabTo(page, 'button[type="submit"]');
    await page.keyboard.press("Enter");
    await page.locator("#field-title-error").waitFor();
    await expectFocusOn(page, "#field-title");
    await expectAnnouncedError(page, "#field-title");

    await page.keyboard.type("Typed, not clicked");
    await tabTo(page, "#field-body");
    await page.keyboard.type("Every step of this note came from the keyboard.");
    await tabTo(page, "#field-tags");
    await page.keyboard.type("keyboard");
    await tabTo(page, 'button[type="submit"]');
    await page.keyboard.press("Enter");
    await arrivedAt(page, stack, NOTE_PAGE);
    expect(await page.getByTestId("note-title").textContent()).toBe("Typed, not clicked");

    // Pin it with the keyboard: a toggle button whose pressed state changes, not its name.
    // The pin and archive buttons name the note they act on.
    const pin = page.getByRole("button", { name: "Pin “Typed, not clicked”", exact: true });
    expect(await pin.getAttribute("aria-pressed")).toBe("false");
    const archive = { name: "Archive “Typed, not clicked”", exact: true };
    expect(await page.getByRole("button", archive).count()).toBe(1);
    await tabTo(page, '[data-testid="toggle-pin"]');
    await page.keyboard.press("Space");
    await expect.poll(() => pin.getAttribute("aria-pressed")).toBe("true");
  });

  test("after a failed submit, focus goes to the first invalid field or the form's alert", async ({
    browser,
  }) => {
    const page = await browser.open();
    await visit(page, stack, "/sign-up");
    await page.fill("#field-email", "not-an-address");
    await page.fill("#field-password", "short");
    await submit(page, "Sign up");
    await page.locator("#field-password-error").waitFor();
    // Both are wrong; the first one in the form gets focus, each one names its message.
    await expectFocusOn(page, "#field-email");
    await expectAnnouncedError(page, "#field-email");
    expect(await expectAnnouncedError(page, "#field-password")).toMatch(/characters/);
    // The hint stays described too, after the error.
    expect(await page.getAttribute("#field-password", "aria-describedby")).toBe(
      "field-password-error field-password-hint",
    );

    // An error about the whole form: focus on the alert, which is announced as one.
    await visit(page, stack, "/sign-in");
    await page.fill("#field-email", "nobody-here@example.com");
    await page.fill("#field-password", "not-the-password");
    await submit(page, "Sign in");
    await page.getByTestId("error-code").waitFor();
    await expectFocusOn(page, '[role="alert"][data-form-alert]');
    expect(await page.getByRole("alert").textContent()).toContain("incorrect");
    expect(await page.getAttribute("#field-password", "aria-invalid")).toBeNull();
  });

  test("the account navigation marks the current page, and only it", async ({ browser }) => {
    const page = await browser.open();
    await signInWithPassword(page, stack, await freshUser(stack, "current"));
    // Exactly the current section is aria-current="page" ("Profile" is /account, not its children).
    for (const [path, current] of [
      ["/account", "Profile"],
      ["/account/sessions", "Sessions"],
      ["/account/security", "Security"],
    ] as const) {
      await visit(page, stack, path);
      const sections = page.getByRole("navigation", { name: "Account sections" });
      const marked = await sections
        .locator('[aria-current="page"]')
        .evaluateAll((links) => links.map((link) => link.textContent?.trim()));
      expect(marked, path).toEqual([current]);
      const header = page.getByRole("navigation", { name: "Main" });
      expect(await header.getByRole("link", { name: "Account" }).getAttribute("aria-current")).toBe(
        "page",
      );
    }
  });

  for (const colorScheme of ["light", "dark"] as const) {
    test(`focus outlines and input borders meet 3:1 (${colorScheme})`, async ({ browser }) => {
      const page = await browser.open({ colorScheme });
      await visit(page, stack, "/sign-in");
      expect(await page.evaluate(() => matchMedia("(prefers-color-scheme: dark)").matches)).toBe(
        colorScheme === "dark",
      );

      // An input's border against the card around it and against its own inside.
      const email = await paintOf(page.locator("#field-email"));
      expect(email.borderWidth).toBe("1px");
      expect(contrast(email.border, email.behind)).toBeGreaterThanOrEqual(3);
      expect(contrast(email.border, email.fill)).toBeGreaterThanOrEqual(3);

      // A focused link and a focused button: a 2px outline, 3:1 against what is around them.
      for (const selector of ['a[href="/forgot-password"]', 'button[value="password"]']) {
        await tabTo(page, selector);
        const focused = await paintOf(page.locator(selector));
        expect(focused.outlineStyle, selector).toBe("solid");
        expect(focused.outlineWidth, selector).toBe("2px");
        expect(contrast(focused.outline, focused.behind), selector).toBeGreaterThanOrEqual(3);
      }
      // The focused input shows the same outline.
      await page.locator("#field-email").focus();
      const focusedInput = await paintOf(page.locator("#field-email"));
      expect(focusedInput.outlineStyle).toBe("solid");
      expect(contrast(focusedInput.outline, focusedInput.behind)).toBeGreaterThanOrEqual(3);
    });
  }

  test("reduced motion: no transitions or animations", async ({ browser }) => {
    const motion = async (reducedMotion: "reduce" | "no-preference") => {
      const page = await browser.open({ reducedMotion });
      await visit(page, stack, "/sign-in");
      const button = page.getByRole("button", { name: "Sign in", exact: true });
      return {
        transition: await button.evaluate((e) => getComputedStyle(e).transitionDuration),
        spinner: await button
          .locator("span[aria-hidden]")
          .evaluate((e) => getComputedStyle(e).animationName),
        progress: await page
          .locator("[class*='animate-progress']")
          .evaluate((e) => getComputedStyle(e).animationName),
      };
    };
    expect(await motion("no-preference")).toEqual({
      transition: "0.15s",
      spinner: "spin",
      progress: "progress-indeterminate",
    });
    expect(await motion("reduce")).toEqual({
      transition: "0s",
      spinner: "none",
      progress: "none",
    });
  });
});

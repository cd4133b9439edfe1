// A newcomer's first minute, on a desktop and on a phone: open the app, sign in with the demo
// account from the README (supabase/seed.sql), see the notes, open the one shared with the
// second demo account as that person, and switch to the dark theme. Each step leaves a screenshot
// in test-results/e2e/first-minute/ to look at (layout, contrast, nothing overflowing).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect } from "vitest";
import { DEMO_LOGINS } from "../../scripts/demo-logins.ts";
import { expectAccessible } from "./support/accessibility.ts";
import { paintOf, type Rgb } from "./support/contrast.ts";
import {
  arrivedAt,
  expectSignedIn,
  NOTE_PAGE,
  signOutHere,
  submit,
  visit,
} from "./support/flows.ts";
import { RESULTS_DIR } from "./support/results.ts";
import { main as stack } from "./support/stacks.ts";
import { test } from "./support/test.ts";

const [ADA, GRACE] = DEMO_LOGINS;
const SHOTS = join(RESULTS_DIR, "first-minute");

const DEVICES = [
  { name: "desktop", viewport: { width: 1280, height: 800 }, isMobile: false, hasTouch: false },
  { name: "phone", viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
];

async function shot(page: Page, name: string) {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

/** Nothing sticks out sideways (the page scrolls only down). */
async function expectNoSidewaysScroll(page: Page) {
  const overflow = await page.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  );
  expect(overflow).toBeLessThanOrEqual(0);
}

function luminance([r, g, b]: Rgb): number {
  const channel = (c: number) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
}

/** Every visible text field, select and textarea on the page is dark inside (the dark theme). */
async function expectDarkControls(page: Page) {
  const controls = page.locator(
    "input:not([type=hidden]):not([type=checkbox]):not([type=radio]):visible, select:visible, textarea:visible",
  );
  const count = await controls.count();
  expect(count).toBeGreaterThan(0);
  for (const control of await controls.all()) {
    const { fill } = await paintOf(control);
    const name = await control.evaluate((e) => e.id || e.getAttribute("name"));
    expect(luminance(fill), `${name} is light in the dark theme`).toBeLessThan(0.05);
  }
}

async function signIn(page: Page, user: { email: string; password: string }) {
  await visit(page, stack, "/sign-in");
  await page.fill("#field-email", user.email);
  await page.fill("#field-password", user.password);
  await submit(page, "Sign in");
}

describe.each(DEVICES)("a newcomer's first minute ($name)", (device) => {
  test("sign in as the demo user, see the notes, open the shared one as Grace, go dark", async ({
    browser,
  }) => {
    const page = await browser.open(device);
    const step = (name: string) => shot(page, `${device.name}-${name}`);

    // The signed-out home says what this is and how private it is, and how to get in.
    await visit(page, stack, "/");
    await page.getByRole("heading", { name: "Private by design" }).waitFor();
    expect(await page.locator("html").getAttribute("data-theme")).toBe("system");
    await expectNoSidewaysScroll(page);
    await step("1-home-signed-out");

    // Sign in as Ada: straight to her notes, the pinned welcome note first, then newest first.
    await page.getByRole("main").getByRole("link", { name: "Sign in" }).click();
    await arrivedAt(page, stack, "/sign-in");
    await page.fill("#field-email", ADA.email);
    await page.fill("#field-password", ADA.password);
    await submit(page, "Sign in");
    await expectSignedIn(page, stack, ADA.email);
    const titles = await page.getByTestId("note-card").getByRole("heading").allTextContents();
    expect(titles.map((t) => t.trim())).toEqual([
      "Welcome to Edge Notes",
      "Reading list",
      "Notes on the Analytical Engine",
      "Shopping list",
    ]);
    await expectNoSidewaysScroll(page);
    await step("2-notes");

    // A note's Markdown is rendered: bold, a list, a quote.
    await page.getByRole("link", { name: "Shopping list" }).click();
    await arrivedAt(page, stack, NOTE_PAGE);
    await page.getByTestId("note-title").waitFor();
    const body = page.getByTestId("note-body");
    expect(await body.locator("strong").first().textContent()).toBe("bread");
    expect(await body.locator("li").count()).toBe(4);
    expect(await body.locator("blockquote").textContent()).toContain("Check the market first.");
    await expectNoSidewaysScroll(page);
    await step("3-note-markdown");

    // The home page now shows the recent notes and what to do next.
    await visit(page, stack, "/");
    const recent = await page.getByTestId("recent-note").getByRole("link").allTextContents();
    expect(recent[0]).toBe("Reading list");
    await page.getByRole("link", { name: "New note" }).waitFor();
    await step("4-home-signed-in");

    // Grace, on the same device: the note Ada shared is in "Shared with me", read-only.
    await signOutHere(page, stack);
    await signIn(page, GRACE);
    await expectSignedIn(page, stack, GRACE.email);
    await visit(page, stack, "/notes?view=shared");
    await page.getByRole("link", { name: "Notes on the Analytical Engine" }).click();
    await arrivedAt(page, stack, NOTE_PAGE);
    await page.getByTestId("note-title").waitFor();
    expect(await page.getByTestId("note").textContent()).toContain("Shared by Ada Lovelace");
    expect(await page.getByTestId("note-body").locator("h2").textContent()).toBe("Note G");
    expect(await page.getByRole("link", { name: "Edit" }).count()).toBe(0);
    await expectNoSidewaysScroll(page);
    await step("5-shared-note-as-grace");

    // The theme switch at the foot of every page: dark now, and from the first byte on reload.
    await page.getByRole("button", { name: "Dark" }).click();
    await page.waitForFunction(() => document.documentElement.dataset.theme === "dark");
    expect(await page.getByRole("button", { name: "Dark" }).getAttribute("aria-pressed")).toBe(
      "true",
    );
    const reloaded = await page.reload();
    expect(await reloaded?.text()).toMatch(/<html[^>]*data-theme="dark"/);
    const canvas = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(canvas).not.toBe("rgb(246, 247, 249)"); // the light canvas
    await expectNoSidewaysScroll(page);
    await step("6-shared-note-dark");

    // Every form control is dark too, including the share field on an owner's note page.
    await visit(page, stack, "/notes/new");
    await expectDarkControls(page);
    await signOutHere(page, stack);
    await signIn(page, ADA);
    await expectSignedIn(page, stack, ADA.email);
    await expectDarkControls(page);
    await page.getByRole("link", { name: "Notes on the Analytical Engine" }).click();
    await page.getByTestId("sharing").waitFor();
    await expectDarkControls(page);
    await step("7-own-note-dark");

    // Writing: Preview shows the Markdown before anything is saved (rendered by the server).
    await visit(page, stack, "/notes/new");
    await page.fill("#field-title", "Draft");
    await page.fill("#field-body", "A **first** draft\n\n- one\n- two");
    await submit(page, "Preview");
    await page.getByTestId("note-preview").waitFor();
    expect(await page.getByTestId("note-preview").locator("strong").textContent()).toBe("first");
    expect(await page.inputValue("#field-body")).toBe("A **first** draft\n\n- one\n- two");
    expect(new URL(page.url()).pathname).toBe("/notes/new");
    await expectAccessible(page, "/notes/new with a preview");
    await expectNoSidewaysScroll(page);
    await step("8-preview-dark");
  }, 180_000);
});

// What a person does in the browser, as steps the tests compose. Every step goes through the UI
// (pages, forms, the local backend's inbox page); only creating a ready-made account, when
// signing up is not what a test is about, uses the admin API.
import { createClient } from "@supabase/supabase-js";
import type { Page } from "playwright-core";
import { expect } from "vitest";
import { PASSWORD, randomEmail, SECRET_KEY } from "../../support/backend.ts";
import { expectAccessible } from "./accessibility.ts";
import type { Stack } from "./stacks.ts";
import { runsJavaScript } from "./test.ts";

export { PASSWORD, randomEmail };

/**
 * A confirmed account made with the admin API (secret key), for tests that start signed out;
 * with a display name when one is given.
 */
export async function freshUser(stack: Stack, prefix = "e2e", displayName?: string) {
  const email = randomEmail(prefix);
  const admin = createClient(stack.backendUrl, SECRET_KEY, {
    auth: { persistSession: false, autoRefreshToken: false },
  });
  const { error } = await admin.auth.admin.createUser({
    email,
    password: PASSWORD,
    email_confirm: true,
    ...(displayName ? { user_metadata: { display_name: displayName } } : {}),
  });
  if (error) throw error;
  return { email, password: PASSWORD };
}

/**
 * Opens an app page; with JavaScript on, waits until React has hydrated it. Then the accessibility
 * check audits the page (once per page and signed-in state in a run: see `auditPage`).
 */
export async function visit(page: Page, stack: Stack, path: string) {
  await page.goto(`${stack.appUrl}${path}`);
  await settled(page);
  await auditPage(page);
}

/**
 * After a navigation: with JavaScript on, the page is hydrated, the router idle, and React has
 * committed the router's location. The URL and the router's state change first and React renders
 * the new page in a transition after them, so on a busy machine a page read as soon as the router
 * is idle can still be the one before (`<main data-location-key>` in root.tsx says which it is).
 */
export async function settled(page: Page) {
  if (!runsJavaScript(page)) return;
  await page.waitForFunction(() => {
    const router = (
      window as {
        __reactRouterDataRouter?: {
          state: { navigation: { state: string }; location: { key: string } };
        };
      }
    ).__reactRouterDataRouter;
    return (
      router?.state.navigation.state === "idle" &&
      document.getElementById("main")?.dataset.locationKey === router.state.location.key
    );
  });
}

/**
 * Opens `url` with its scripts held back, as on a slow connection (the form is there, React is
 * not yet), runs `meanwhile` (typing into it), then lets the scripts load and waits until the page
 * has hydrated.
 */
export async function beforeHydration(page: Page, url: string, meanwhile: () => Promise<void>) {
  const scripts = /\.(m?js|tsx?)(\?.*)?$/;
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  await page.route(scripts, async (route) => {
    await held;
    await route.continue();
  });
  await page.goto(url, { waitUntil: "domcontentloaded" });
  await meanwhile();
  release();
  await settled(page);
  await page.unroute(scripts);
}

/** A note's own page, `/notes/<uuid>`: where creating or opening a note lands. */
export const NOTE_PAGE = /^\/notes\/[0-9a-f-]{36}$/;

/**
 * Waits for the app to be on `path` (or a path `path` matches; query string ignored) and done
 * loading it; audits it. Returns the path it is on.
 */
export async function arrivedAt(page: Page, stack: Stack, path: string | RegExp) {
  await page.waitForURL(
    (url) =>
      url.origin === stack.appUrl &&
      (typeof path === "string" ? url.pathname === path : path.test(url.pathname)),
  );
  await settled(page);
  await auditPage(page);
  return new URL(page.url()).pathname;
}

/**
 * expectAccessible for the page the browser is on, labelled by what makes it a distinct page:
 * the route (ids as `:id`), the names of its query parameters and whether someone is signed in
 * ("/notes/:id?returnTo, signed in"). Each label is audited once per run, whichever test gets
 * there first; states that a URL does not tell apart (a form with errors) get their own
 * expectAccessible call in the tests.
 */
export async function auditPage(page: Page) {
  const url = new URL(page.url());
  const path = url.pathname.replace(
    /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g,
    ":id",
  );
  const keys = [...new Set(url.searchParams.keys())].sort();
  const signedIn = (await page.locator('header nav[aria-label="Main"]').count()) > 0;
  const label = `${path}${keys.length ? `?${keys.join("&")}` : ""}, ${signedIn ? "signed in" : "signed out"}`;
  await expectAccessible(page, label);
}

export async function submit(page: Page, button: string) {
  await page.getByRole("button", { name: button, exact: true }).click();
}

/** Signed in as `email` (the header says so), on `at`: the notes, where a sign-in lands. */
export async function expectSignedIn(page: Page, stack: Stack, email: string, at = "/notes") {
  await arrivedAt(page, stack, at);
  expect(await page.getByTestId("session-email").textContent()).toBe(email);
}

export async function expectSignedOut(page: Page, stack: Stack) {
  await arrivedAt(page, stack, "/");
  await page.getByTestId("signed-out").waitFor();
  expect(await page.getByTestId("session").count()).toBe(0);
}

export async function signInWithPassword(
  page: Page,
  stack: Stack,
  user: { email: string; password: string },
) {
  await visit(page, stack, "/sign-in");
  await page.fill("#field-email", user.email);
  await page.fill("#field-password", user.password);
  await submit(page, "Sign in");
  await expectSignedIn(page, stack, user.email);
}

/** The header's "Sign out" button (this device only). */
export async function signOutHere(page: Page, stack: Stack) {
  await page.getByRole("banner").getByRole("button", { name: "Sign out" }).click();
  await expectSignedOut(page, stack);
}

/**
 * Opens the local backend's inbox page for `email` in `page` once a message of `type` has
 * arrived (mail is written as the request that sends it ends, so it may take a moment).
 */
export async function openInbox(page: Page, stack: Stack, email: string, type: string) {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    await page.goto(`${stack.backendUrl}/inbox?to=${encodeURIComponent(email)}`);
    const newest = page.locator("article").first();
    if (
      (await newest.count()) > 0 &&
      (await newest.locator(".meta").textContent())?.includes(type)
    ) {
      return newest;
    }
    await page.waitForTimeout(200);
  }
  throw new Error(`no ${type} email for ${email} in the inbox`);
}

/**
 * Follows the link in the newest `type` email for `email`, as a person would from their inbox: it
 * opens the app's /auth/confirm (supabase/templates), where nothing happens until its one button
 * is pressed.
 */
export async function followEmailLink(page: Page, stack: Stack, email: string, type: string) {
  const message = await openInbox(page, stack, email, type);
  await message.locator('a[href*="/auth/confirm"]').first().click();
  await arrivedAt(page, stack, "/auth/confirm");
  await page.getByTestId("confirm-form").getByRole("button").click();
}

/** The one-time code in the newest `type` email for `email`. */
export async function emailedCode(page: Page, stack: Stack, email: string, type: string) {
  const message = await openInbox(page, stack, email, type);
  const code = (await message.locator(".code").textContent())?.trim() ?? "";
  expect(code).toMatch(/^\d{6}$/);
  return code;
}

/** An invitation sent with the admin API (what an admin does from the dashboard); its address. */
export async function invite(stack: Stack, prefix = "invited") {
  const email = randomEmail(prefix);
  const admin = createClient(stack.backendUrl, SECRET_KEY, {
    auth: { persistSession: false, autoRefreshToken: false },
  });
  const { error } = await admin.auth.admin.inviteUserByEmail(email);
  if (error) throw error;
  return email;
}

/** The app's /auth/confirm link in the newest `type` email for `email` (token-hash templates). */
export async function confirmLinkIn(page: Page, stack: Stack, email: string, type: string) {
  const message = await openInbox(page, stack, email, type);
  const href = await message.locator('a[href*="/auth/confirm"]').first().getAttribute("href");
  if (!href) throw new Error(`no /auth/confirm link in the ${type} email for ${email}`);
  return new URL(href);
}

/**
 * Opens an /auth/confirm link from the email, where nothing happens yet, and presses the page's
 * one button (`label`), which is what uses the link.
 */
export async function confirmThroughLink(page: Page, stack: Stack, link: URL, label: string) {
  await page.goto(link.toString());
  await arrivedAt(page, stack, "/auth/confirm");
  await submit(page, label);
}

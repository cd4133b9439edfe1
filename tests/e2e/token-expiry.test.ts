// Two tabs of one signed-in person left open until their session is due for refresh keep working:
// each tab's browser client refreshes in the background and the Worker refreshes on requests, all
// with one rotating refresh token in shared cookies. Nothing may fail on the way: no
// refresh_token_already_used ("Already Used") sign-out, no request the browser reports as failed,
// no response >= 400 in either tab.
//
// It runs on the 100-second-token stack (support/stacks.ts), where a session is due 10 s after its
// token was issued and a token just issued is not. On 10-second tokens it failed about once in six
// runs, and the hosted service would have refused the same requests: the cookie can be a rotation
// behind (a tab's Set-Cookie landing after the browser client's own write), which the auth server
// forgives by answering with the newer token, but the first of two requests sent at once then
// rotated twice more within itself (every session read refreshed a token that was never outside
// supabase-js's 90 s margin), so the second one's token, revoked over 10 s before, was no longer
// the active token's parent.
import type { Page } from "playwright-core";
import { expect } from "vitest";
import { expectSignedIn, freshUser, settled, signInWithPassword, visit } from "./support/flows.ts";
import { REFRESH_MARGIN_MS, earlyRefresh as stack } from "./support/stacks.ts";
import { test } from "./support/test.ts";

/** Idle for this long, a tab's token is due: both the browser client and the Worker refresh it. */
const IDLE_MS = (stack.jwtExpiry ?? 3600) * 1000 - REFRESH_MARGIN_MS + 3000;

test("two tabs idle until a refresh is due stay signed in without a failed request", async ({
  browser,
}) => {
  const user = await freshUser(stack, "idle");
  const first = await browser.open();
  const problems: string[] = [];
  const refreshes: number[] = [];
  const watch = (page: Page, tab: string) => {
    page.on("requestfailed", (request) => {
      const error = request.failure()?.errorText ?? "";
      // A request the browser itself cancels because the tab navigated is not a failure.
      if (error === "net::ERR_ABORTED") return;
      problems.push(`${tab}: ${request.method()} ${request.url()} failed: ${error}`);
    });
    page.on("response", async (response) => {
      if (response.url().includes("grant_type=refresh_token")) refreshes.push(response.status());
      if (response.status() < 400) return;
      const body = await response.text().catch(() => "");
      problems.push(`${tab}: ${response.status()} ${response.url()} ${body.slice(0, 200)}`);
    });
  };
  watch(first, "tab 1");
  await signInWithPassword(first, stack, user);
  const second = await first.context().newPage();
  watch(second, "tab 2");
  await visit(second, stack, "/");
  await expectSignedIn(second, stack, user.email, "/");

  // Round 1: both idle until due, then one reloads and the other navigates in the app.
  await first.waitForTimeout(IDLE_MS);
  await visit(first, stack, "/");
  await second.getByRole("link", { name: "Edge Notes" }).click();
  await settled(second);
  await expectSignedIn(first, stack, user.email, "/");
  await expectSignedIn(second, stack, user.email, "/");

  // Round 2: idle again, then both load at the same moment with the same cookies.
  await first.waitForTimeout(IDLE_MS);
  await Promise.all([visit(first, stack, "/sign-out"), visit(second, stack, "/sign-out")]);
  for (const page of [first, second]) {
    expect(await page.getByRole("main").textContent()).toContain(user.email);
  }

  expect(problems).toEqual([]);
  // The browser clients did refresh while idle (the test idled until a refresh was due, for real).
  expect(refreshes.length).toBeGreaterThan(0);
  expect(refreshes.every((status) => status === 200)).toBe(true);
});

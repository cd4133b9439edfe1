// The harness's own promise: once `arrivedAt` (through `settled`) returns, the page on screen is
// the one navigated to. React renders a navigation in a transition after the URL and the router's
// state have changed, so on a slow or busy machine a test that reads the page as soon as the router
// is idle reads the page before, and fails by chance (a sign-up test once did in CI). The CPU is
// slowed here so that the window is wide on every run.
import { describe, expect } from "vitest";
import {
  arrivedAt,
  freshUser,
  NOTE_PAGE,
  signInWithPassword,
  submit,
  visit,
} from "./support/flows.ts";
import { main as stack } from "./support/stacks.ts";
import { test } from "./support/test.ts";

describe("a settled navigation", () => {
  test("shows the page navigated to, even on a slow CPU", async ({ browser }) => {
    const user = await freshUser(stack, "settled");
    const page = await browser.open();
    await signInWithPassword(page, stack, user);
    await visit(page, stack, "/notes/new");
    await page.fill("#field-title", "Read at once");
    await submit(page, "Create note");
    const notePath = await arrivedAt(page, stack, NOTE_PAGE);

    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Emulation.setCPUThrottlingRate", { rate: 6 });
    for (let round = 0; round < 3; round++) {
      await page
        .getByRole("navigation", { name: "Main" })
        .getByRole("link", { name: "Notes" })
        .click();
      await arrivedAt(page, stack, "/notes");
      // Read without waiting: what is on screen now.
      expect(await page.getByTestId("note-title").count(), `round ${round}: the list`).toBe(0);
      expect(await page.getByTestId("note-list").count(), `round ${round}: the list`).toBe(1);

      await page.getByTestId("note-card").getByRole("link", { name: "Read at once" }).click();
      await arrivedAt(page, stack, notePath);
      expect(await page.getByTestId("note-title").count(), `round ${round}: the note`).toBe(1);
    }
    await cdp.send("Emulation.setCPUThrottlingRate", { rate: 1 });
  });
});

// Live notes end to end: two people in two browsers, and one person in two tabs. The database
// broadcasts ids on private Realtime topics; each page re-reads through the data API. An edit
// reaches the open pages without a reload, what is being typed is never replaced, a save over a
// newer version is caught (JavaScript on or off), readers see each other, and an unshared reader's
// page stops updating: its next read is refused.
import type { Page, WebSocketRoute } from "playwright-core";
import { describe, expect } from "vitest";
import { expectAccessible } from "./support/accessibility.ts";
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

/** Ada writes a note on her open page and shares it with `email` (when given); its path. */
async function writeNote(page: Page, title: string, shareWith?: string) {
  await visit(page, stack, "/notes/new");
  await page.fill("#field-title", title);
  await page.fill("#field-body", "First draft.");
  await submit(page, "Create note");
  await arrivedAt(page, stack, NOTE_PAGE);
  await page.getByTestId("note-title").waitFor();
  if (shareWith) {
    await page.fill("#field-email", shareWith);
    await submit(page, "Share");
    await page.getByTestId("share-list").getByText(shareWith).waitFor();
  }
  return new URL(page.url()).pathname;
}

/** Signed in, as a person with a display name, in a browser of their own. */
async function person(browser: { open(): Promise<Page> }, name: string, displayName = name) {
  const user = await freshUser(stack, name.toLowerCase(), displayName);
  const page = await browser.open();
  await signInWithPassword(page, stack, user);
  return { ...user, page };
}

/** Waits until the page's live channel has joined (presence of someone else is the tell). */
async function viewers(page: Page): Promise<string> {
  const viewersText = page.getByTestId("viewers");
  await viewersText.waitFor();
  return (await viewersText.textContent()) ?? "";
}

describe("live notes", () => {
  test("the owner's edit reaches the reader's open page and the owner's other tab; presence comes and goes", async ({
    browser,
  }) => {
    // A display name is whatever its owner typed: it is shown as text, never as markup.
    const [ada, grace] = await Promise.all([
      person(browser, "Ada"),
      person(browser, "Grace", "Grace <b>Hopper</b>"),
    ]);
    const path = await writeNote(ada.page, "Engine notes", grace.email);
    // Where Ada's Edit button is while she is alone: someone arriving must not move it (a click
    // on its way to the button would land beside it).
    const edit = ada.page.getByRole("link", { name: "Edit", exact: true });
    const alone = await edit.boundingBox();

    await visit(grace.page, stack, path);
    // Each sees the other, by display name.
    expect(await viewers(ada.page)).toBe("Grace <b>Hopper</b> is also viewing");
    expect((await edit.boundingBox())?.y).toBe(alone?.y);
    expect(await ada.page.getByTestId("viewers").locator("b").count()).toBe(0);
    expect(await viewers(grace.page)).toBe("Ada is also viewing");
    await expectAccessible(grace.page, "/notes/:id with someone else viewing");

    // Ada edits in a second tab; the first tab and Grace's page follow without a reload.
    const tab = await ada.page.context().newPage();
    await visit(tab, stack, `${path}/edit`);
    await tab.fill("#field-title", "Engine notes, revised");
    await tab.fill("#field-body", "The **second** draft.");
    await submit(tab, "Save changes");
    await arrivedAt(tab, stack, path);
    for (const page of [grace.page, ada.page]) {
      await page.getByTestId("note-title").getByText("Engine notes, revised").waitFor();
      expect(await page.getByTestId("note-body").textContent()).toBe("The second draft.");
    }
    await tab.close();

    // Grace leaves: Ada's page stops naming her.
    await grace.page.close();
    await ada.page.getByTestId("viewers").waitFor({ state: "detached" });
  });

  test("a rename reaches every open page that shows the name, without a reload: the viewers line and the reader's shared list", async ({
    browser,
  }) => {
    const [ada, grace] = await Promise.all([person(browser, "Ada"), person(browser, "Grace")]);
    const path = await writeNote(ada.page, "Names", grace.email);
    await visit(grace.page, stack, path);
    expect(await viewers(grace.page)).toBe("Ada is also viewing");
    expect(await viewers(ada.page)).toBe("Grace is also viewing");
    // Grace's list of notes shared with her, in a second tab, says whose they are
    const graceList = await grace.page.context().newPage();
    await visit(graceList, stack, "/notes?view=shared");
    await graceList.getByTestId("note-owner").getByText("Shared by Ada ·").waitFor();
    // a mark in each open page: a reload would lose it
    for (const page of [ada.page, grace.page, graceList]) {
      await page.evaluate(() => Object.assign(window, { notReloaded: true }));
    }

    // Ada renames herself in another tab; her open note page learns of it and says so to Grace.
    const tab = await ada.page.context().newPage();
    await visit(tab, stack, "/account");
    await tab.fill('input[name="displayName"]', "Ada Lovelace");
    await submit(tab, "Save profile");
    await tab.getByText("Your profile was saved.").waitFor();
    await grace.page.getByTestId("viewers").getByText("Ada Lovelace is also viewing").waitFor();
    expect(await viewers(ada.page)).toBe("Grace is also viewing");
    await graceList.getByTestId("note-owner").getByText("Shared by Ada Lovelace ·").waitFor();
    for (const page of [ada.page, grace.page, graceList]) {
      expect(await page.evaluate(() => "notReloaded" in window)).toBe(true);
    }
  });

  test("a dropped connection reconnects and re-reads what it missed", async ({ browser }) => {
    const [ada, grace] = await Promise.all([person(browser, "Ada"), person(browser, "Grace")]);
    const path = await writeNote(ada.page, "Signal", grace.email);
    // Grace's Realtime socket goes through the test: it can cut it and refuse new ones.
    let online = true;
    const sockets: WebSocketRoute[] = [];
    await grace.page.routeWebSocket(/\/realtime\/v1\/websocket/, (socket) => {
      if (!online) return socket.close({ code: 1006, reason: "offline" });
      socket.connectToServer();
      sockets.push(socket);
    });
    await visit(grace.page, stack, path);
    expect(await viewers(grace.page)).toBe("Ada is also viewing");

    online = false;
    await Promise.all(sockets.map((socket) => socket.close({ code: 1006, reason: "dropped" })));
    // Ada's edit while Grace is cut off: its message never reaches her.
    await visit(ada.page, stack, `${path}/edit`);
    await ada.page.fill("#field-title", "Signal, restored");
    await submit(ada.page, "Save changes");
    await arrivedAt(ada.page, stack, path);
    await grace.page.waitForTimeout(300);
    expect(await grace.page.getByTestId("note-title").textContent()).toBe("Signal");

    // Back online: realtime-js reconnects, the channel rejoins, and the page re-reads.
    online = true;
    await grace.page
      .getByTestId("note-title")
      .getByText("Signal, restored")
      .waitFor({ timeout: 20_000 });
  });

  test("saving over a newer version shows a conflict notice; what is being typed stays", async ({
    browser,
  }) => {
    const ada = await person(browser, "Ada");
    const path = await writeNote(ada.page, "Shopping");
    const other = await ada.page.context().newPage();
    await visit(ada.page, stack, `${path}/edit`);
    await visit(other, stack, `${path}/edit`);

    // Ada is typing in the first tab when the second saves.
    await ada.page.fill("#field-body", "Mine: oat milk");
    await other.fill("#field-body", "Theirs: lemons");
    await submit(other, "Save changes");
    await arrivedAt(other, stack, path);

    // The first tab is told, and keeps her text.
    await ada.page.getByTestId("changed-elsewhere").waitFor();
    expect(await ada.page.inputValue("#field-body")).toBe("Mine: oat milk");

    // Saving it anyway: refused, with the saved version shown above hers.
    await submit(ada.page, "Save changes");
    await ada.page.getByTestId("conflict-notice").waitFor();
    await expectAccessible(ada.page, "/notes/:id/edit with a conflict");
    expect(await ada.page.getByTestId("conflict-notice").textContent()).toContain("Theirs: lemons");
    expect(await ada.page.inputValue("#field-body")).toBe("Mine: oat milk");
    await visit(other, stack, path);
    expect(await other.getByTestId("note-body").textContent()).toBe("Theirs: lemons");

    // A second save is a deliberate choice: hers replaces theirs.
    await submit(ada.page, "Save mine instead");
    await arrivedAt(ada.page, stack, path);
    expect(await ada.page.getByTestId("note-body").textContent()).toBe("Mine: oat milk");
  });

  test("with JavaScript off the conflict is caught too", async ({ browser }) => {
    const user = await freshUser(stack, "nojs");
    const page = await browser.open({ javaScriptEnabled: false });
    await signInWithPassword(page, stack, user);
    const path = await writeNote(page, "Plain");
    const other = await page.context().newPage();
    await visit(page, stack, `${path}/edit`);
    await visit(other, stack, `${path}/edit`);
    await other.fill("#field-body", "Saved first");
    await submit(other, "Save changes");
    await arrivedAt(other, stack, path);

    await page.fill("#field-body", "Saved second");
    await submit(page, "Save changes");
    await page.getByTestId("conflict-notice").waitFor();
    expect(await page.inputValue("#field-body")).toBe("Saved second");
    await visit(other, stack, path);
    expect(await other.getByTestId("note-body").textContent()).toBe("Saved first");
  });

  test("lists follow changes and shares; after an unshare the ex-reader's page stops updating and its next read is refused", async ({
    browser,
  }) => {
    const [ada, grace] = await Promise.all([person(browser, "Ada"), person(browser, "Grace")]);
    // Ada's list in another tab follows what she does in the first.
    const list = await ada.page.context().newPage();
    await visit(list, stack, "/notes");
    await list.getByTestId("empty-list").waitFor();
    const path = await writeNote(ada.page, "Ledger");
    await list.getByTestId("note-card").getByText("Ledger").waitFor();

    // Grace's "Shared with me" gains the note when Ada shares it.
    await visit(grace.page, stack, "/notes?view=shared");
    await grace.page.getByTestId("empty-list").waitFor();
    await ada.page.fill("#field-email", grace.email);
    await submit(ada.page, "Share");
    await grace.page.getByTestId("note-card").getByText("Ledger").waitFor();

    await visit(grace.page, stack, path);
    expect(await viewers(ada.page)).toBe("Grace is also viewing");

    // Ada stops sharing: Grace's open page re-reads, is refused, and says so.
    const refused = grace.page.waitForResponse(
      (response) => response.url().includes(".data") && response.status() === 404,
    );
    await ada.page.getByRole("button", { name: `Stop sharing with ${grace.email}` }).click();
    await ada.page.getByText("Not shared with anyone.").waitFor();
    await refused;
    await grace.page.getByTestId("note-gone").waitFor();
    await expectAccessible(grace.page, "/notes/:id no longer shared");
    expect(await grace.page.getByText("Ledger").count()).toBe(0);

    // Ada's later edit never reaches it.
    await visit(ada.page, stack, `${path}/edit`);
    await ada.page.fill("#field-title", "Ledger, private");
    await submit(ada.page, "Save changes");
    await arrivedAt(ada.page, stack, path);
    await grace.page.waitForTimeout(500);
    expect(await grace.page.getByText("Ledger, private").count()).toBe(0);
    const reload = await grace.page.goto(`${stack.appUrl}${path}`);
    expect(reload?.status()).toBe(404);

    // Edited and deleted: Ada's other tab follows.
    await list.getByTestId("note-card").getByText("Ledger, private").waitFor();
    await visit(ada.page, stack, `${path}/delete`);
    await submit(ada.page, "Delete note");
    await list.getByTestId("empty-list").waitFor();
  });

  // A re-read (React Router's data request) is cancelled when a newer navigation or submission
  // takes its place. React Router 8.4 can leave that cancellation as an unhandled rejection, which
  // the browser reports as an uncaught "signal is aborted without reason" (app/entry.client.tsx).
  // The race itself is a window of microseconds; here the page is handed the same rejection.
  test("a cancelled re-read is not an error of the page; other unhandled rejections still are", async ({
    browser,
  }) => {
    const ada = await person(browser, "ada");
    await visit(ada.page, stack, "/notes");
    const prevented = await ada.page.evaluate(async () => {
      const seen: Record<string, boolean> = {};
      // after the app's own listener: what it decided, then nothing more reaches the console
      addEventListener("unhandledrejection", (event) => {
        seen[(event.reason as Error).name] = event.defaultPrevented;
        event.preventDefault();
      });
      const controller = new AbortController();
      controller.abort();
      void Promise.reject(controller.signal.reason);
      void Promise.reject(new TypeError("not a cancellation"));
      await new Promise((resolve) => setTimeout(resolve, 100));
      return seen;
    });
    expect(prevented).toEqual({ AbortError: true, TypeError: false });
  });
});

// Notes end to end: write, find, change and share, as two people in two browsers.
import type { Page } from "playwright-core";
import { describe, expect } from "vitest";
import { expectAccessible } from "./support/accessibility.ts";
import {
  arrivedAt,
  beforeHydration,
  freshUser,
  NOTE_PAGE,
  settled,
  signInWithPassword,
  submit,
  visit,
} from "./support/flows.ts";
import { main as stack } from "./support/stacks.ts";
import { test } from "./support/test.ts";

async function createNote(page: Page, note: { title: string; body: string; tags: string }) {
  await visit(page, stack, "/notes");
  await page.getByRole("main").getByRole("link", { name: "New note" }).first().click();
  await arrivedAt(page, stack, "/notes/new");
  await page.fill("#field-title", note.title);
  await page.fill("#field-body", note.body);
  await page.fill("#field-tags", note.tags);
  await submit(page, "Create note");
  const path = await arrivedAt(page, stack, NOTE_PAGE);
  await page.getByTestId("note-title").waitFor();
  expect(await page.getByTestId("note-title").textContent()).toBe(note.title);
  return path;
}

/** Marks the page's document; sameDocument() tells whether it is still the one shown (no load). */
async function markDocument(page: Page) {
  await page.evaluate(() => Object.assign(window, { sameDocument: true }));
}

async function sameDocument(page: Page): Promise<boolean> {
  return page.evaluate(() => "sameDocument" in window);
}

/**
 * Waits until every toggle posted in the background has its answer: a card leaves the list (or
 * shows its new state) at once, before the server answers, so a test that loads another page
 * next waits for the write first.
 */
async function togglesAnswered(page: Page): Promise<void> {
  await page.waitForFunction(() => {
    const router = (
      window as unknown as {
        __reactRouterDataRouter?: { state: { fetchers: Map<string, { state: string }> } };
      }
    ).__reactRouterDataRouter;
    return [...(router?.state.fetchers.values() ?? [])].every((f) => f.state === "idle");
  });
}

async function noteTitles(page: Page): Promise<string[]> {
  const cards = page.getByTestId("note-card");
  const titles: string[] = [];
  for (const card of await cards.all()) {
    titles.push((await card.getByRole("heading").textContent())?.trim() ?? "");
  }
  return titles;
}

describe.each([
  { javaScriptEnabled: true, label: "JavaScript on" },
  { javaScriptEnabled: false, label: "JavaScript off" },
])("notes ($label)", ({ javaScriptEnabled }) => {
  test("create, search, edit, share read-only and stop sharing", async ({ browser }) => {
    const owner = await freshUser(stack, "owner");
    const friend = await freshUser(stack, "friend");
    const page = await browser.open({ javaScriptEnabled });
    await signInWithPassword(page, stack, owner);

    // A title is required: the form says so beside the field and keeps what was typed.
    await visit(page, stack, "/notes/new");
    await page.fill("#field-body", "no title yet");
    await submit(page, "Create note");
    await page.locator("#field-title-error").waitFor();
    expect(await page.inputValue("#field-body")).toBe("no title yet");
    await expectAccessible(page, "/notes/new with field errors");

    const word = `fennel${crypto.randomUUID().slice(0, 6)}`;
    const groceries = await createNote(page, {
      title: "Groceries",
      body: `oat milk\n${word}`,
      tags: "home, weekly",
    });
    await createNote(page, { title: "Trip plan", body: "passport, tickets", tags: "travel" });

    // The list has both (newest first); a search finds the one with the word in its body.
    await visit(page, stack, "/notes");
    expect(await noteTitles(page)).toEqual(["Trip plan", "Groceries"]);
    await expectAccessible(page, "/notes with a note card");
    // Each card's buttons name their note (the pin toggle's name stays; aria-pressed changes).
    for (const name of ["Pin “Groceries”", "Archive “Groceries”", "Pin “Trip plan”"]) {
      expect(await page.getByRole("button", { name, exact: true }).count(), name).toBe(1);
    }
    await page.fill("#notes-search", word);
    await page.getByRole("button", { name: "Search" }).click();
    await page.waitForURL((url) => url.searchParams.get("q") === word);
    await page.getByTestId("filter-summary").waitFor();
    expect(await page.getByTestId("filter-summary").textContent()).toContain("1 note matching");
    expect(await noteTitles(page)).toEqual(["Groceries"]);

    // Edit: the note shows the new title and text.
    await visit(page, stack, groceries);
    await page.getByRole("link", { name: "Edit", exact: true }).click();
    await arrivedAt(page, stack, `${groceries}/edit`);
    await page.fill("#field-title", "Groceries for Sunday");
    await page.fill("#field-body", `oat milk\n${word}\nlemons`);
    await submit(page, "Save changes");
    await arrivedAt(page, stack, groceries);
    expect(await page.getByTestId("note-title").textContent()).toBe("Groceries for Sunday");
    expect(await page.getByTestId("note-body").textContent()).toContain("lemons");

    // Share with the friend, who sees it read-only in their own browser.
    await page.fill("#field-email", friend.email);
    await submit(page, "Share");
    await page.getByTestId("share-list").waitFor();
    expect(await page.getByTestId("share-list").textContent()).toContain(friend.email);
    await expectAccessible(page, "/notes/:id shared with someone");

    const friendPage = await browser.open({ javaScriptEnabled });
    await signInWithPassword(friendPage, stack, friend);
    await visit(friendPage, stack, "/notes?view=shared");
    expect(await noteTitles(friendPage)).toEqual(["Groceries for Sunday"]);
    const leave = { name: "Remove from my list: “Groceries for Sunday”", exact: true };
    expect(await friendPage.getByRole("button", leave).count()).toBe(1);
    await visit(friendPage, stack, groceries);
    expect(await friendPage.getByTestId("note").textContent()).toContain("read-only");
    await expectAccessible(friendPage, "/notes/:id shared with me (read-only)");
    expect(await friendPage.getByRole("link", { name: "Edit", exact: true }).count()).toBe(0);
    expect(await friendPage.getByTestId("sharing").count()).toBe(0);
    // Their own list stays theirs.
    await visit(friendPage, stack, "/notes");
    expect(await noteTitles(friendPage)).toEqual([]);

    // Stop sharing: the friend can no longer open it.
    await visit(page, stack, groceries);
    await page.getByRole("button", { name: `Stop sharing with ${friend.email}` }).click();
    await page.getByText("Not shared with anyone.").waitFor();
    const response = await friendPage.goto(`${stack.appUrl}${groceries}`);
    expect(response?.status()).toBe(404);
  });

  test("a card's tag and title open their pages; with JavaScript in the same document", async ({
    browser,
  }) => {
    const owner = await freshUser(stack, "linker");
    const page = await browser.open({ javaScriptEnabled });
    await signInWithPassword(page, stack, owner);
    const linked = await createNote(page, { title: "Linked", body: "first", tags: "alpha" });
    await createNote(page, { title: "Other", body: "second", tags: "" });
    await visit(page, stack, "/notes");
    expect(await noteTitles(page)).toEqual(["Other", "Linked"]);
    if (javaScriptEnabled) await markDocument(page);

    const card = page.getByTestId("note-card").filter({ hasText: "Linked" });
    await card.getByRole("link", { name: "#alpha", exact: true }).click();
    await page.waitForURL((url) => url.searchParams.get("tag") === "alpha");
    await expect.poll(() => noteTitles(page)).toEqual(["Linked"]);
    await page.getByTestId("note-card").getByRole("link", { name: "Linked", exact: true }).click();
    await arrivedAt(page, stack, linked);
    expect(await page.getByTestId("note-title").textContent()).toBe("Linked");
    if (javaScriptEnabled) expect(await sameDocument(page)).toBe(true);
    await page.goBack();
    await page.waitForURL((url) => url.searchParams.get("tag") === "alpha");
    await expect.poll(() => noteTitles(page)).toEqual(["Linked"]);
    if (!javaScriptEnabled) return;
    expect(await sameDocument(page)).toBe(true);
    // A click with a modifier key is the browser's: Control opens the note in a new tab.
    const [tab] = await Promise.all([
      page.context().waitForEvent("page"),
      page
        .getByTestId("note-card")
        .getByRole("link", { name: "Linked", exact: true })
        .click({ modifiers: ["Control"] }),
    ]);
    await tab.waitForURL((url) => url.pathname === linked);
    expect(new URL(page.url()).searchParams.get("tag")).toBe("alpha");
  });

  test("pin, archive and unarchive from the list", async ({ browser }) => {
    const owner = await freshUser(stack, "toggler");
    const page = await browser.open({ javaScriptEnabled });
    await signInWithPassword(page, stack, owner);
    await createNote(page, { title: "Older", body: "first", tags: "" });
    await createNote(page, { title: "Newer", body: "second", tags: "" });
    await visit(page, stack, "/notes");
    expect(await noteTitles(page)).toEqual(["Newer", "Older"]);
    // With JavaScript the toggles post in the background: the page is never loaded again.
    if (javaScriptEnabled) await markDocument(page);

    // Pinned: pressed, badged and first in the list.
    const pin = page.getByRole("button", { name: "Pin “Older”", exact: true });
    expect(await pin.getAttribute("aria-pressed")).toBe("false");
    await pin.click();
    await expect.poll(() => pin.getAttribute("aria-pressed")).toBe("true");
    await expect.poll(() => noteTitles(page)).toEqual(["Older", "Newer"]);
    const older = page.getByTestId("note-card").filter({ hasText: "Older" });
    expect(await older.textContent()).toContain("Pinned");

    // Archived: the card leaves this list for the archived one.
    await page.getByRole("button", { name: "Archive “Newer”", exact: true }).click();
    await expect.poll(() => noteTitles(page)).toEqual(["Older"]);
    if (javaScriptEnabled) {
      expect(await sameDocument(page)).toBe(true);
      await togglesAnswered(page);
    }
    await visit(page, stack, "/notes?view=archived");
    expect(await noteTitles(page)).toEqual(["Newer"]);
    if (javaScriptEnabled) await markDocument(page);
    await page.getByRole("button", { name: "Unarchive “Newer”", exact: true }).click();
    await page.getByTestId("empty-list").waitFor();
    if (javaScriptEnabled) {
      expect(await sameDocument(page)).toBe(true);
      await togglesAnswered(page);
    }
    await visit(page, stack, "/notes");
    expect(await noteTitles(page)).toEqual(["Older", "Newer"]);
  });
});

test("what is typed into a note while its page's scripts still load is kept when it hydrates, and saved", async ({
  browser,
}) => {
  const owner = await freshUser(stack, "early");
  const page = await browser.open({ javaScriptEnabled: true });
  await signInWithPassword(page, stack, owner);
  const path = await createNote(page, { title: "Early", body: "The old body.", tags: "" });

  await beforeHydration(page, `${stack.appUrl}${path}/edit`, async () => {
    await page.fill("#field-title", "Early, typed early");
    await page.fill("#field-body", "Typed before the scripts ran.");
    // the caret moved back into the text, where typing goes on after the page hydrates
    for (let i = 0; i < 4; i++) await page.keyboard.press("ArrowLeft");
  });
  // React's hydration of the textarea set it back to the server's text, with the caret at its
  // end; the page puts both back
  expect(await page.inputValue("#field-body")).toBe("Typed before the scripts ran.");
  expect(await page.inputValue("#field-title")).toBe("Early, typed early");
  await page.keyboard.type("X");
  expect(await page.inputValue("#field-body")).toBe("Typed before the scripts Xran.");
  await page.fill("#field-body", "Typed before the scripts ran.");

  await submit(page, "Save changes");
  await arrivedAt(page, stack, NOTE_PAGE);
  await page.getByTestId("note-title").getByText("Early, typed early").waitFor();
  expect(await page.getByTestId("note-body").textContent()).toBe("Typed before the scripts ran.");
});

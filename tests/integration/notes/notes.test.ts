// The notes pages through the Worker, as a browser without JavaScript uses them: real forms,
// real cookies, real RLS behind the data API.
import { describe, expect, it } from "vitest";
import { backendCalls } from "../support/app";
import { expectNoStore, signedInBrowser } from "../support/auth-flows";
import { BrowserLess } from "../support/browser-less";
import {
  cardTitles,
  createNote,
  editVersion,
  noteIdOf,
  noteRow,
  seedNotes,
} from "../support/notes";

describe("signed out", () => {
  it.each(["/notes", "/notes/new", "/notes?view=shared", "/account"])(
    "%s sends to sign-in and back",
    async (path) => {
      const visit = await new BrowserLess().get(path, { follow: false });
      expect(visit.status).toBe(302);
      expect(visit.location).toBe(`/sign-in?${new URLSearchParams({ next: path })}`);
    },
  );
});

describe("create, read, edit", () => {
  it("a new note is created from the form and shown with its tags; the list has it", async () => {
    const { browser } = await signedInBrowser();
    const empty = await browser.get("/notes");
    expect(empty.status).toBe(200);
    expect(empty.body).toContain('data-testid="empty-list"');
    expectNoStore(empty.headers);

    const form = await browser.get("/notes/new");
    expect(form.body).toContain('data-testid="note-form"');
    const visit = await browser.post("/notes/new", {
      title: "Groceries",
      body: "Milk\r\nEggs",
      tags: "Home, Weekly Shop, home",
    });
    expect(visit.redirects[0]?.status).toBe(302);
    const id = noteIdOf(visit);
    expect(visit.status).toBe(200);
    expect(visit.body).toContain(">Groceries</h1>");
    expect(visit.body.replaceAll("<!-- -->", "")).toMatch(/Milk<br\/?>\s*Eggs/);
    expect(visit.body).toContain("#home");
    expect(visit.body).toContain("#weekly-shop");
    expect((await noteRow(id))?.body).toBe("Milk\nEggs");

    const list = await browser.get("/notes");
    expect(cardTitles(list.body)).toEqual(["Groceries"]);
  });

  it("edit saves title, body and tags (replacing them)", async () => {
    const { browser } = await signedInBrowser();
    const id = await createNote(browser, { title: "Draft", tags: "one, two" });
    const edit = await browser.get(`/notes/${id}/edit`);
    expect(edit.status).toBe(200);
    expect(edit.body).toContain('value="one, two"');
    const saved = await browser.post(`/notes/${id}/edit`, {
      title: "Final",
      body: "Done.",
      tags: "two, three",
      version: await editVersion(browser, id),
    });
    expect(new URL(saved.url).pathname).toBe(`/notes/${id}`);
    expect(saved.body).toContain(">Final</h1>");
    expect(saved.body).toContain("#three");
    expect(saved.body).not.toContain("#one");
    // the tag left on no note is gone from the filter
    const list = await browser.get("/notes");
    expect(list.body).toContain("#two");
    expect(list.body).not.toContain("#one");
  });
});

describe("pin, archive, delete", () => {
  it("pin and archive work as plain forms and come back to the page they were on", async () => {
    const { browser, user } = await signedInBrowser();
    const [older, newer] = await seedNotes(user.id, [
      { title: "Older", minutesAgo: 10 },
      { title: "Newer", minutesAgo: 1 },
    ]);
    expect(cardTitles((await browser.get("/notes")).body)).toEqual(["Newer", "Older"]);

    const pinned = await browser.post(`/notes/${older}`, { intent: "pin", returnTo: "/notes" });
    expect(pinned.redirects[0]?.location).toBe("/notes");
    expect(cardTitles(pinned.body)).toEqual(["Older", "Newer"]);
    expect(pinned.body).toContain("Pinned");

    const archived = await browser.post(`/notes/${newer}`, {
      intent: "archive",
      returnTo: "/notes?view=active",
    });
    expect(cardTitles(archived.body)).toEqual(["Older"]);
    const archive = await browser.get("/notes?view=archived");
    expect(cardTitles(archive.body)).toEqual(["Newer"]);
    await browser.post(`/notes/${newer}`, { intent: "unarchive", returnTo: "/notes" });
    expect((await noteRow(newer as string))?.archived).toBe(false);
    await browser.post(`/notes/${older}`, { intent: "unpin", returnTo: "/notes" });
    expect((await noteRow(older as string))?.pinned).toBe(false);
  });

  it("returnTo only goes back to a notes page", async () => {
    const { browser } = await signedInBrowser();
    const id = await createNote(browser, { title: "Bounce" });
    for (const returnTo of [
      "https://evil.example/notes",
      "//evil.example",
      "/sign-out",
      "/.//evil.example/notes",
      "/notes/../..//evil.example",
    ]) {
      const visit = await browser.post(
        `/notes/${id}`,
        { intent: "pin", returnTo },
        { follow: false },
      );
      expect([returnTo, visit.location]).toEqual([returnTo, `/notes/${id}`]);
    }
  });

  it("with JavaScript (fetcher=1) the action answers data, not a redirect", async () => {
    const { browser } = await signedInBrowser();
    const id = await createNote(browser, { title: "Quick pin" });
    const visit = await browser.post(
      `/notes/${id}`,
      { intent: "pin", returnTo: "/notes", fetcher: "1" },
      { follow: false },
    );
    expect(visit.status).toBe(200);
    expect((await noteRow(id))?.pinned).toBe(true);
  });

  it("delete asks first (GET deletes nothing), then deletes; the note is a 404 afterwards", async () => {
    const { browser } = await signedInBrowser();
    const id = await createNote(browser, { title: "Doomed", tags: "gone" });
    const confirm = await browser.get(`/notes/${id}/delete`);
    expect(confirm.status).toBe(200);
    expect(confirm.body).toContain("Delete “Doomed”?");
    expect(await noteRow(id)).not.toBeNull();
    const deleted = await browser.post(`/notes/${id}/delete`, {});
    expect(new URL(deleted.url).pathname + new URL(deleted.url).search).toBe("/notes?deleted=1");
    expect(deleted.body).toContain("The note was deleted.");
    expect(await noteRow(id)).toBeNull();
    expect((await browser.get(`/notes/${id}`)).status).toBe(404);
  });
});

describe("the list", () => {
  it("pinned first, then newest; 20 a page with stable ?page= links", async () => {
    const { browser, user } = await signedInBrowser();
    await seedNotes(user.id, [
      ...Array.from({ length: 23 }, (_, i) => ({ title: `Note ${i + 1}`, minutesAgo: 100 - i })),
      { title: "Pinned old", pinned: true, minutesAgo: 500 },
      { title: "Archived", archived: true, minutesAgo: 0 },
    ]);
    const first = await browser.get("/notes");
    const titles = cardTitles(first.body);
    expect(titles).toHaveLength(20);
    expect(titles.slice(0, 3)).toEqual(["Pinned old", "Note 23", "Note 22"]);
    expect(first.body).toContain("Page 1 of 2");
    expect(first.body).toContain('href="/notes?page=2"');
    const second = await browser.get("/notes?page=2");
    expect(cardTitles(second.body)).toEqual(["Note 4", "Note 3", "Note 2", "Note 1"]);
    expect(second.body).toContain('href="/notes"');
  });

  it("full-text search (?q=) with websearch syntax, combined with a tag filter (?tag=)", async () => {
    const { browser } = await signedInBrowser();
    await createNote(browser, { title: "Quarterly budget", body: "Forecasts", tags: "work" });
    await createNote(browser, { title: "Trip", body: "Budget for the holiday", tags: "home" });
    await createNote(browser, { title: "Recipes", body: "Soup", tags: "home" });
    const search = async (query: string) =>
      cardTitles((await browser.get(`/notes?${query}`)).body).sort();
    expect(await search("q=budget")).toEqual(["Quarterly budget", "Trip"]);
    expect(await search("q=budget+-holiday")).toEqual(["Quarterly budget"]);
    expect(await search("q=%22quarterly+budget%22")).toEqual(["Quarterly budget"]);
    expect(await search("tag=home")).toEqual(["Recipes", "Trip"]);
    expect(await search("tag=home&q=budget")).toEqual(["Trip"]);
    const page = await browser.get("/notes?tag=home&q=budget");
    expect(page.body).toContain("1 note matching “budget” tagged #home.");
  });
});

describe("round trips", () => {
  it("a warm list page is 1 data API call (the page, its total and the tags) and no auth call; a note page 3", async () => {
    const { browser, user } = await signedInBrowser();
    const [id] = await seedNotes(
      user.id,
      Array.from({ length: 30 }, (_, i) => ({ title: `N${i}`, minutesAgo: i })),
    );
    await browser.get("/notes");
    const started = performance.now();
    const list = await browser.get("/notes");
    const ms = performance.now() - started;
    expect(backendCalls(new Response(null, { headers: list.headers }))).toEqual({
      auth: 0,
      rest: 1,
    });
    expect(ms).toBeLessThan(2000);
    // the note, its shares and the viewer's name, side by side (one round trip's wait)
    const note = await browser.get(`/notes/${id}`);
    expect(backendCalls(new Response(null, { headers: note.headers }))).toEqual({
      auth: 0,
      rest: 3,
    });
  });
});

describe("home and header", () => {
  it("the signed-in home leads to the notes; the header links Notes and Profile", async () => {
    const { browser } = await signedInBrowser();
    const home = await browser.get("/");
    expect(home.body).toContain('data-testid="open-notes"');
    expect(home.body).toMatch(/<a[^>]*href="\/notes"[^>]*>Notes<\/a>/);
    expect(home.body).toMatch(/<a[^>]*href="\/account"[^>]*>Account<\/a>/);
    const signedOut = await new BrowserLess().get("/");
    expect(signedOut.body).not.toContain('href="/notes"');
  });
});

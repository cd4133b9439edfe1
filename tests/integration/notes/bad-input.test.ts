// Bad input on the notes pages: every answer a clear 4xx (never a 500 or a blank page), nothing
// typed is lost, and nothing tells whether someone else's note exists.
import { beforeAll, describe, expect, it } from "vitest";
import { fieldError, signedInBrowser } from "../support/auth-flows";
import { cardTitles, createNote, editVersion, noteRow, seedNotes } from "../support/notes";

/** The page without what differs per request (nonces, ids in the URL). */
function mainOf(body: string): string {
  return (/<main[^>]*>([\s\S]*)<\/main>/.exec(body)?.[1] ?? "").replace(/nonce="[^"]*"/g, "");
}

describe("note forms", () => {
  let writer: Awaited<ReturnType<typeof signedInBrowser>>;
  beforeAll(async () => {
    writer = await signedInBrowser();
  });

  it.each([
    ["an empty title", { title: "", body: "Kept text" }, "title", "Give the note a title."],
    ["a blank title", { title: "   ", body: "Kept text" }, "title", "Give the note a title."],
    [
      "a 201-character title",
      { title: "t".repeat(201), body: "Kept text" },
      "title",
      "at most 200",
    ],
    [
      "a 20 001-character body",
      { title: "Long", body: "b".repeat(20_001) },
      "body",
      "at most 20,000",
    ],
    [
      "lists nested 33 deep",
      { title: "Deep", body: `${"1. ".repeat(33)}x` },
      "body",
      "nested at most 32 deep",
    ],
    [
      "a bad tag",
      { title: "Tags", body: "Kept text", tags: "ok, no!pe" },
      "tags",
      "letters, digits",
    ],
    [
      "eleven tags",
      { title: "Tags", body: "Kept text", tags: "a,b,c,d,e,f,g,h,i,j,k" },
      "tags",
      "at most 10",
    ],
  ])(
    "new note with %s: 400, the message beside the field, the text kept",
    async (_name, form, field, message) => {
      const { browser } = await signedInBrowser();
      const visit = await browser.post("/notes/new", { tags: "", ...form });
      expect(visit.status).toBe(400);
      expect(visit.redirects).toEqual([]);
      expect(fieldError(visit.body, field)).toContain(message);
      // what was typed is back in the form (the whole body, even when too long)
      expect(visit.body).toContain(form.body);
      expect(cardTitles((await browser.get("/notes")).body)).toEqual([]);
    },
  );

  it("a 20 000-character body in multi-byte characters saves (CRLF counted as one)", async () => {
    const { browser } = await signedInBrowser();
    const body = "😀".repeat(9_000) + "\r\n".repeat(2_000);
    const visit = await browser.post("/notes/new", { title: "Big", body, tags: "" });
    expect(visit.status).toBe(200);
    const id = new URL(visit.url).pathname.split("/").pop() as string;
    expect((await noteRow(id))?.body).toBe("😀".repeat(9_000) + "\n".repeat(2_000));
  });

  it("the same rules on edit; the note is unchanged", async () => {
    const { browser } = await signedInBrowser();
    const id = await createNote(browser, { title: "Stable", body: "Original" });
    const visit = await browser.post(`/notes/${id}/edit`, {
      title: "",
      body: "New text",
      tags: "",
    });
    expect(visit.status).toBe(400);
    expect(fieldError(visit.body, "title")).toBe("Give the note a title.");
    expect(visit.body).toContain("New text");
    expect(await noteRow(id)).toMatchObject({ title: "Stable", body: "Original" });
  });

  it("a crafted owner_id (or other columns) in the form is ignored: the note stays the poster's", async () => {
    const { browser, user } = await signedInBrowser();
    const other = await signedInBrowser();
    const created = await browser.post("/notes/new", {
      title: "Mine",
      body: "",
      tags: "",
      owner_id: other.user.id,
      id: "00000000-0000-0000-0000-000000000000",
      pinned: "true",
    });
    const id = new URL(created.url).pathname.split("/").pop() as string;
    expect(await noteRow(id)).toMatchObject({ owner_id: user.id, pinned: false });
    await browser.post(`/notes/${id}/edit`, {
      title: "Still mine",
      body: "",
      tags: "",
      owner_id: other.user.id,
      version: await editVersion(browser, id),
    });
    expect(await noteRow(id)).toMatchObject({ owner_id: user.id, title: "Still mine" });
    expect(cardTitles((await other.browser.get("/notes")).body)).toEqual([]);
  });
});

describe("hostile bodies and parameters", () => {
  it("Markdown nested thousands deep (saved past the form) is shown as its text, to the owner and whoever it is shared with", async () => {
    const owner = await signedInBrowser();
    const reader = await signedInBrowser();
    const [id] = await seedNotes(owner.user.id, [
      { title: "Deep quotes", body: `${">".repeat(5000)} the end`, minutesAgo: 0 },
    ]);
    const shared = await owner.browser.post(`/notes/${id}`, {
      intent: "share",
      email: reader.email,
    });
    expect(shared.status).toBe(200);
    for (const browser of [owner.browser, reader.browser]) {
      const page = await browser.get(`/notes/${id}`);
      expect(page.status).toBe(200);
      expect(page.body).toContain("the end");
      expect(page.body).not.toContain("<blockquote>");
    }
    // a preview parses nothing that deep either
    const preview = await owner.browser.post("/notes/new", {
      intent: "preview",
      title: "Deep lists",
      body: `${"1. ".repeat(6000)}x`,
      tags: "",
    });
    expect(preview.status).toBe(200);
    // and as deep as the form allows still renders as Markdown
    const allowed = await createNote(owner.browser, {
      title: "Nested",
      body: `${"> ".repeat(32)}inside`,
    });
    const nested = await owner.browser.get(`/notes/${allowed}`);
    expect(nested.body.split("<blockquote>")).toHaveLength(33);
  });

  it("emphasis, strikethrough and brackets nested thousands deep render for the owner and whoever it is shared with", async () => {
    const owner = await signedInBrowser();
    const reader = await signedInBrowser();
    // each within the body's 20,000 characters and the form's nesting rule (no container opens)
    const bodies = {
      emphasis: `${"*a ".repeat(3300)}end${" a*".repeat(3300)}`,
      strikethrough: `${"~~a ".repeat(2400)}end${" a~~".repeat(2400)}`,
      "open stars": `${"*a".repeat(9990)}end`,
      links: `${"[".repeat(3900)}end${"](b)".repeat(3900)}`,
    };
    for (const [title, body] of Object.entries(bodies)) {
      const id = await createNote(owner.browser, { title, body });
      await owner.browser.post(`/notes/${id}`, { intent: "share", email: reader.email });
      for (const browser of [owner.browser, reader.browser]) {
        const page = await browser.get(`/notes/${id}`);
        expect(page.status, title).toBe(200);
        expect(page.body, title).toContain("end");
      }
      expect((await owner.browser.get(`/notes/${id}/edit`)).status, title).toBe(200);
    }
  });

  it("tables filled out to tens of thousands of cells, and one long link target used thousands of times, stay small for everyone who opens them", async () => {
    const owner = await signedInBrowser();
    const reader = await signedInBrowser();
    // 180 columns over 366 one-character rows: the parser fills every row to 65,880 cells
    const table = `${"a|".repeat(180)}\n${"-|".repeat(180)}\n${"x\n".repeat(366)}`;
    const form = await owner.browser.post("/notes/new", { title: "Cells", body: table, tags: "" });
    expect(form.status).toBe(400);
    expect(form.body).toContain("Tables can have at most 10,000 cells in all.");
    const preview = await owner.browser.post("/notes/new", {
      intent: "preview",
      title: "Cells",
      body: table,
      tags: "",
    });
    // a preview shows it as its text (it parsed to 5 MB of HTML)
    expect(preview.status).toBe(200);
    expect(preview.body.length).toBeLessThan(200_000);
    expect(preview.body).not.toContain("<table>");
    // saved past the form (the data API): shown as its text, never parsed
    const link = `[a]: http://x.y/${"a".repeat(10_000)}\n\n${"[a]".repeat(3_000)}`;
    const [tables, links] = await seedNotes(owner.user.id, [
      { title: "Cells", body: table, minutesAgo: 0 },
      { title: "Links", body: link, minutesAgo: 1 },
    ]);
    for (const id of [tables, links]) {
      await owner.browser.post(`/notes/${id}`, { intent: "share", email: reader.email });
    }
    for (const browser of [owner.browser, reader.browser]) {
      const cells = await browser.get(`/notes/${tables}`);
      expect(cells.status).toBe(200);
      expect(cells.body).not.toContain("<table>");
      const page = await browser.get(`/notes/${links}`);
      expect(page.status).toBe(200);
      // the text of 3,000 links, not 3,000 copies of their 10,000-character target
      expect(page.body.length).toBeLessThan(500_000);
      expect(page.body).toContain('<a href="http://x.y/aaaa');
    }
    // an ordinary table of 10 columns and 50 rows renders
    const ordinary = `${"h|".repeat(10)}\n${"-|".repeat(10)}\n${"c|".repeat(10).concat("\n").repeat(50)}`;
    const id = await createNote(owner.browser, { title: "Ordinary", body: ordinary });
    const page = await owner.browser.get(`/notes/${id}`);
    expect(page.body.split("<td>")).toHaveLength(501);
  });

  it("a note form far over its limits (over 1 MiB) says so: 413, nothing saved", async () => {
    const { browser } = await signedInBrowser();
    const visit = await browser.post("/notes/new", {
      title: "Huge",
      body: "b".repeat(1_100_000),
      tags: "",
    });
    expect(visit.status).toBe(413);
    expect(visit.body).toContain("The form was too large to read, so nothing was saved.");
    expect(visit.body).not.toContain("Give the note a title.");
    expect(cardTitles((await browser.get("/notes")).body)).toEqual([]);
  });

  it("NUL characters in a form are dropped, not a 503: the note saves", async () => {
    const { browser } = await signedInBrowser();
    const visit = await browser.post("/notes/new", {
      title: "a\u0000b",
      body: "x\u0000y",
      tags: "one\u0000",
    });
    expect(visit.status).toBe(200);
    const id = new URL(visit.url).pathname.split("/").pop() as string;
    expect(await noteRow(id)).toMatchObject({ title: "ab", body: "xy" });
  });

  it("an error code in the URL that names an object's own property is no error: 200, no alert", async () => {
    const { browser } = await signedInBrowser();
    const id = await createNote(browser, { title: "Codes" });
    for (const code of ["__proto__", "constructor", "toString"]) {
      const note = await browser.get(`/notes/${id}?attachment_error=${code}`);
      expect([code, note.status]).toEqual([code, 200]);
      expect(note.body).not.toContain('data-testid="attachment-error"');
      const account = await browser.get(`/account?avatar=${code}`);
      expect([code, account.status]).toEqual([code, 200]);
      expect(account.body).not.toContain('data-testid="avatar-error"');
    }
  });
});

describe("note ids", () => {
  it("unknown, malformed and someone else's ids are the same 404 on every page", async () => {
    const owner = await signedInBrowser();
    const stranger = await signedInBrowser();
    const theirs = await createNote(owner.browser, { title: "Owner only" });
    const unknown = crypto.randomUUID();
    for (const suffix of ["", "/edit", "/delete"]) {
      const pages = await Promise.all(
        [theirs, unknown, "not-a-uuid", "1%27%20or%201=1", "%00"].map((id) =>
          stranger.browser.get(`/notes/${id}${suffix}`),
        ),
      );
      for (const page of pages) {
        expect([page.url, page.status]).toEqual([page.url, 404]);
        expect(page.body).not.toContain("Owner only");
      }
      expect(mainOf(pages[0]?.body ?? "")).toBe(mainOf(pages[1]?.body ?? ""));
    }
    for (const id of [theirs, unknown, "nope"]) {
      const posts = await Promise.all([
        stranger.browser.post(`/notes/${id}`, { intent: "pin", returnTo: "/notes" }),
        stranger.browser.post(`/notes/${id}/delete`, {}),
        stranger.browser.post(`/notes/${id}/edit`, { title: "x", body: "", tags: "" }),
        stranger.browser.post(`/notes/${id}`, { intent: "share", email: stranger.email }),
      ]);
      expect(posts.map((p) => p.status)).toEqual([404, 404, 404, 404]);
    }
    expect(await noteRow(theirs)).toMatchObject({ title: "Owner only", pinned: false });
  });

  it("an unknown intent is a 400 with a message, not a 500", async () => {
    const { browser } = await signedInBrowser();
    const id = await createNote(browser, { title: "Intent" });
    const visit = await browser.post(`/notes/${id}`, { intent: "explode" });
    expect(visit.status).toBe(400);
  });
});

describe("list URLs", () => {
  it("search strings with SQL or PostgREST syntax answer 200: plain words, never syntax", async () => {
    const { browser, user } = await signedInBrowser();
    await seedNotes(user.id, [{ title: "Visible drop table", minutesAgo: 1 }]);
    for (const q of [
      "'; drop table notes; --",
      "a,b),or=(title.eq.x",
      "*",
      "title:*",
      '"unclosed',
      "& | ! <-> ()",
      "\\",
      "%",
      "\u0000",
      "x".repeat(5000),
    ]) {
      const visit = await browser.get(`/notes?${new URLSearchParams({ q })}`);
      expect([q.slice(0, 20), visit.status]).toEqual([q.slice(0, 20), 200]);
      expect(visit.body).toContain('role="search"');
    }
    const found = await browser.get(`/notes?${new URLSearchParams({ q: "'; drop table" })}`);
    expect(cardTitles(found.body)).toEqual(["Visible drop table"]);
  });

  it("page numbers: past the end is a 404 with the count; not a number is a 400; both say why", async () => {
    const { browser, user } = await signedInBrowser();
    await seedNotes(
      user.id,
      Array.from({ length: 21 }, (_, i) => ({ title: `N${i}`, minutesAgo: i })),
    );
    const past = await browser.get("/notes?page=3");
    expect(past.status).toBe(404);
    expect(past.body).toContain("There is no page 3: this list has 2 pages.");
    expect(past.body).toContain('href="/notes?page=2"');
    for (const page of ["0", "-1", "abc", "1.5", "99999999", "1e3", ""]) {
      const visit = await browser.get(`/notes?page=${encodeURIComponent(page)}`);
      expect([page, visit.status]).toEqual([page, 400]);
      expect(visit.body).toContain("is not a page number");
    }
    expect((await browser.get("/notes?page=2")).status).toBe(200);
  });

  it("a tag that cannot exist is a 400; an unknown view falls back to the list", async () => {
    const { browser } = await signedInBrowser();
    const badTag = await browser.get(`/notes?${new URLSearchParams({ tag: "a,b)" })}`);
    expect(badTag.status).toBe(400);
    expect(badTag.body).toContain("That is not a tag name");
    const unknownTag = await browser.get("/notes?tag=nothing-here");
    expect(unknownTag.status).toBe(200);
    expect(unknownTag.body).toContain('data-testid="empty-list"');
    const view = await browser.get("/notes?view=everyone");
    expect(view.status).toBe(200);
    expect(view.body).toContain(">Notes</h1>");
  });
});

// Note bodies are Markdown, rendered on the server into React elements through a sanitised tree:
// what reaches the page is checked here on the Worker's own HTML, as a browser would receive it.
import { describe, expect, it } from "vitest";
import { signedInBrowser } from "../support/auth-flows";
import { createNote } from "../support/notes";

/**
 * The rendered body: the note-body element's content (Markdown makes no <div>, so it ends at the
 * first </div>), without the comments React puts between adjacent text nodes.
 */
function bodyHtml(page: string): string {
  const start = page.indexOf('data-testid="note-body"');
  expect(start).toBeGreaterThan(-1);
  return page.slice(start, page.indexOf("</div>", start)).replaceAll("<!-- -->", "");
}

const HOSTILE = [
  "<script>alert('script')</script>",
  '<img src="x" onerror="alert(\'onerror\')">',
  "[click me](javascript:alert('link'))",
  "[as data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
  "![pixel](data:image/png;base64,iVBORw0KGgo=)",
  '<div style="position:fixed" onclick="alert(\'raw\')">raw html</div>',
  "<style>body{display:none}</style>",
  '<a href="https://example.com" onmouseover="alert(\'a\')">raw link</a>',
].join("\n\n");

describe("Markdown in note bodies", () => {
  it("renders bold, lists, links, headings and line breaks", async () => {
    const { browser } = await signedInBrowser();
    const id = await createNote(browser, {
      title: "Shopping",
      body: "# Today\n\nBuy **bread** and _milk_:\n\n- apples\n- pears\n\n1. first\n2. second\n\nSee [the shop](https://example.com/shop).\nNext line\n\n#### Skipped a level",
    });
    const html = bodyHtml((await browser.get(`/notes/${id}`)).body);
    expect(html).toContain("<h2>Today</h2>"); // the title is the page's h1
    expect(html).toContain("<h3>Skipped a level</h3>"); // the outline skips no level
    expect(html).toContain("<strong>bread</strong>");
    expect(html).toContain("<em>milk</em>");
    expect(html).toMatch(/<ul>\s*<li>apples<\/li>\s*<li>pears<\/li>\s*<\/ul>/);
    expect(html).toMatch(/<ol>\s*<li>first<\/li>\s*<li>second<\/li>\s*<\/ol>/);
    expect(html).toContain('<a href="https://example.com/shop">the shop</a>');
    expect(html).toMatch(/<br\/?>\s*Next line/);
    // The list and the home page show the excerpt's words, without the Markdown marks.
    for (const path of ["/notes", "/"]) {
      const page = (await browser.get(path)).body.replaceAll("<!-- -->", "");
      expect(page).toContain("Today Buy bread and milk: apples pears first second");
      expect(page).not.toContain("**bread**");
    }
  });

  it("renders GitHub's extensions: tables, task lists, strikethrough and bare links", async () => {
    const { browser } = await signedInBrowser();
    const id = await createNote(browser, {
      title: "GFM",
      body: "| item | qty |\n| --- | --: |\n| eggs | 6 |\n\n- [x] done\n- [ ] to do\n- [ ]\n\n~~old~~ new, see https://example.com/gfm, www.example.org/docs. or notes.md",
    });
    const html = bodyHtml((await browser.get(`/notes/${id}`)).body);
    expect(html).toMatch(/<table>[\s\S]*<th>item<\/th>[\s\S]*<td>eggs<\/td>[\s\S]*<\/table>/);
    expect(html).toMatch(/<input type="checkbox" disabled="" checked=""\/?>\s*done/);
    expect(html).toMatch(/<input type="checkbox" disabled=""\/?>\s*to do/);
    expect(html).toContain("<del>old</del>");
    expect(html).toContain('<a href="https://example.com/gfm">https://example.com/gfm</a>');
    // GitHub's bare links: with a scheme or `www.`, not any word with a dot in it
    expect(html).toContain('<a href="http://www.example.org/docs">www.example.org/docs</a>.');
    expect(html).toContain(" or notes.md");
    expect(html).toMatch(/<td align="right">6<\/td>/);
    // a checkbox with no task after it is no task
    expect(html).toContain("<li>[ ]</li>");
    // the list's excerpt has the tasks' words, not their checkboxes
    const list = (await browser.get("/notes")).body.replaceAll("<!-- -->", "");
    expect(list).toContain("item qty eggs 6 done to do [ ] old new");
  });

  it("renders scripts, event handlers, javascript: and data: URLs and raw HTML inert", async () => {
    const { browser } = await signedInBrowser();
    const id = await createNote(browser, { title: "Hostile", body: HOSTILE });
    const page = await browser.get(`/notes/${id}`);
    expect(page.status).toBe(200);
    const html = bodyHtml(page.body);
    for (const bad of [
      "<script",
      "<img",
      "<style",
      "<div",
      "onerror",
      "onclick",
      "onmouseover",
      "style=",
      "javascript:",
      "data:",
    ]) {
      expect(html).not.toContain(bad);
    }
    // The links' text stays, without a dangerous target.
    expect(html).toMatch(/<a>click me<\/a>/);
    expect(html).toMatch(/<a>as data<\/a>/);
    expect(html).toContain("Image: pixel");
    // Every script element on the page is one of the app's own, with the CSP nonce.
    const nonce = /'nonce-([^']+)'/.exec(page.headers.get("Content-Security-Policy") ?? "")?.[1];
    for (const [tag] of page.body.matchAll(/<script\b[^>]*>/g)) {
      expect(tag).toContain(`nonce="${nonce}"`);
    }
    const scriptSrc = /script-src ([^;]*)/.exec(page.headers.get("Content-Security-Policy") ?? "");
    expect(scriptSrc?.[1]).not.toContain("unsafe-inline");
  });

  it("Preview renders the draft on the server, keeps it in the form and saves nothing", async () => {
    const { browser } = await signedInBrowser();
    const draft = { title: "Draft", body: "Some **bold** words\n\n<script>alert(1)</script>" };
    const visit = await browser.post("/notes/new", { ...draft, tags: "ideas", intent: "preview" });
    expect(visit.status).toBe(200);
    expect(new URL(visit.url).pathname).toBe("/notes/new");
    const start = visit.body.indexOf('data-testid="note-preview"');
    expect(start).toBeGreaterThan(-1);
    const preview = visit.body.slice(start, visit.body.indexOf("</section>", start));
    expect(preview).toContain("<strong>bold</strong>");
    expect(preview).not.toContain("<script");
    expect(visit.body).toContain('value="Draft"');
    expect(visit.body).toContain("Some **bold** words");
    expect(visit.body).toContain('value="ideas"');
    const list = await browser.get("/notes");
    expect(list.body).toContain('data-testid="empty-list"');
  });

  it("Preview on the edit page keeps the changes unsaved", async () => {
    const { browser } = await signedInBrowser();
    const id = await createNote(browser, { title: "Kept", body: "old text" });
    const visit = await browser.post(`/notes/${id}/edit`, {
      title: "Kept",
      body: "new *text*",
      tags: "",
      intent: "preview",
    });
    expect(visit.status).toBe(200);
    expect(visit.body).toContain("<em>text</em>");
    expect(visit.body).toContain("new *text*");
    expect(bodyHtml((await browser.get(`/notes/${id}`)).body)).toContain("old text");
  });
});

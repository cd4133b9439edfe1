// Every signed-in page, warm: the session check makes no round trip and the page waits for at
// most one round trip of data (npm run bench holds the same budget with the backend 40 ms away).
// Pages that need several queries run them side by side. A note with private files takes one
// more, to sign their URLs: downloads in one batch call and each picture's thumbnail in a call of
// its own, all sent at once.
import { describe, expect, it } from "vitest";
import { backendTrips } from "./support/app";
import { signedInBrowser } from "./support/auth-flows";
import type { BrowserLess } from "./support/browser-less";
import { createNote } from "./support/notes";

describe("critical path of the signed-in pages", () => {
  it("no round trip for the session check, at most one sequential data round trip", async () => {
    const { browser } = await signedInBrowser();
    const id = await createNote(browser, { title: "Round trips", body: "Counted", tags: "work" });
    const pages = [
      "/",
      "/notes",
      `/notes/${id}`,
      `/notes/${id}/edit`,
      `/notes/${id}/delete`,
      "/notes/new",
      "/account",
      "/account/email",
      "/account/password",
      "/account/security",
      "/account/identities",
      "/account/sessions",
      "/account/activity",
    ];
    const seen: Record<string, string> = {};
    for (const path of pages) {
      await browser.get(path); // warm: the JWKS cached, the backend probe answered
      const visit = await browser.get(path);
      const { check, seq } = backendTrips({ headers: visit.headers });
      seen[path] = `${visit.status}, check=${check}, seq${seq <= 1 ? "<=1" : `=${seq}`}`;
    }
    expect(seen).toEqual(Object.fromEntries(pages.map((path) => [path, "200, check=0, seq<=1"])));
  });
});

/** A valid 2×2 PNG. */
const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAACXBIWXMAAAPoAAAD6AG1e1JrAAAAEklEQVQImWM4YSNywkaEAUIBACF+BGFPob/gAAAAAElFTkSuQmCC",
  ),
  (c) => c.charCodeAt(0),
);

function attach(browser: BrowserLess, id: string, file: File) {
  const form = new FormData();
  form.set("intent", "attach");
  form.set("file", file);
  return browser.postMultipart(`/notes/${id}/attachments`, form);
}

describe("critical path of a note with private files", () => {
  it("signing its files' URLs is one more round trip, however many pictures", async () => {
    const { browser } = await signedInBrowser();
    const id = await createNote(browser, { title: "Pictures" });
    for (const name of ["a.png", "b.png", "c.png"])
      await attach(browser, id, new File([PNG], name, { type: "image/png" }));
    await attach(browser, id, new File(["text"], "d.txt", { type: "text/plain" }));
    await browser.get(`/notes/${id}`);
    const visit = await browser.get(`/notes/${id}`);
    expect(visit.status).toBe(200);
    // the batch of download URLs and three thumbnails, side by side
    expect(/\bstorage=(\d+)/.exec(visit.headers.get("Server-Timing") ?? "")?.[1]).toBe("4");
    expect(backendTrips({ headers: visit.headers })).toEqual({ check: 0, seq: 2 });
  });
});

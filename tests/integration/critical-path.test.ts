// Every signed-in page, warm: the session check makes no round trip and the page waits for at
// most one round trip of data (npm run bench holds the same budget with the backend 40 ms away).
// Pages that need several queries run them side by side.
import { describe, expect, it } from "vitest";
import { backendTrips } from "./support/app";
import { signedInBrowser } from "./support/auth-flows";
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

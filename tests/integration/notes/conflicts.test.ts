// Two saves of one note: the edit form carries the version it was opened on, and the database
// updates only that version. A save over a newer one changes nothing and says so (409), with both
// versions on the page, as a browser without JavaScript sees it.
import { describe, expect, it } from "vitest";
import { fieldError, signedInBrowser, testId } from "../support/auth-flows";
import { createNote, editVersion, noteRow } from "../support/notes";

describe("saving over a newer version", () => {
  it("is refused with both versions shown; saving again is a deliberate replace", async () => {
    const { browser } = await signedInBrowser();
    const id = await createNote(browser, { title: "Plan", body: "first" });
    const opened = await editVersion(browser, id);

    // Another tab saves first.
    const first = await browser.post(`/notes/${id}/edit`, {
      title: "Plan",
      body: "theirs",
      tags: "",
      version: await editVersion(browser, id),
    });
    expect(new URL(first.url).pathname).toBe(`/notes/${id}`);

    const late = await browser.post(`/notes/${id}/edit`, {
      title: "Plan B",
      body: "mine",
      tags: "late",
      version: opened,
    });
    expect(late.status).toBe(409);
    expect(new URL(late.url).pathname).toBe(`/notes/${id}/edit`);
    expect(late.body).toContain('data-testid="conflict-notice"');
    expect(testId(late.body, "saved-title")).toBe("Plan");
    expect(late.body).toContain("theirs");
    // what was typed is back in the form, nothing of it saved
    expect(late.body).toContain('value="Plan B"');
    expect(late.body).toContain(">mine</textarea>");
    expect(await noteRow(id)).toMatchObject({ title: "Plan", body: "theirs" });

    // The form now carries the saved version: "Save mine instead" replaces it.
    const newest = /<input[^>]*name="version"[^>]*value="([^"]*)"/.exec(late.body)?.[1];
    expect(newest).toBe(await editVersion(browser, id));
    const replaced = await browser.post(`/notes/${id}/edit`, {
      title: "Plan B",
      body: "mine",
      tags: "late",
      version: newest ?? "",
    });
    expect(new URL(replaced.url).pathname).toBe(`/notes/${id}`);
    expect(await noteRow(id)).toMatchObject({ title: "Plan B", body: "mine" });
  });

  it("a pin or an archive in between is no conflict", async () => {
    const { browser } = await signedInBrowser();
    const id = await createNote(browser, { title: "Pinned later" });
    const opened = await editVersion(browser, id);
    await browser.post(`/notes/${id}`, { intent: "pin", returnTo: `/notes/${id}` });
    const saved = await browser.post(`/notes/${id}/edit`, {
      title: "Edited",
      body: "",
      tags: "",
      version: opened,
    });
    expect(new URL(saved.url).pathname).toBe(`/notes/${id}`);
    expect(await noteRow(id)).toMatchObject({ title: "Edited", pinned: true });
  });

  it("a form without a version, or with a made-up one, saves nothing; someone else's note is still a 404", async () => {
    const { browser } = await signedInBrowser();
    const stranger = await signedInBrowser();
    const id = await createNote(browser, { title: "Steady" });
    for (const version of [undefined, "", "yesterday", "2026-01-01T00:00:00", "1' or '1'='1"]) {
      const visit = await browser.post(`/notes/${id}/edit`, {
        title: "Changed",
        body: "",
        tags: "",
        ...(version === undefined ? {} : { version }),
      });
      expect([version, visit.status]).toEqual([version, 400]);
      expect(visit.body).toContain("This form is out of date");
      expect(fieldError(visit.body, "title")).toBeNull();
      const theirs = await stranger.browser.post(`/notes/${id}/edit`, {
        title: "Changed",
        body: "",
        tags: "",
        ...(version === undefined ? {} : { version }),
      });
      expect([version, theirs.status]).toEqual([version, 404]);
    }
    // A well-formed version of another time: a conflict, not a save.
    const old = await browser.post(`/notes/${id}/edit`, {
      title: "Changed",
      body: "",
      tags: "",
      version: "2020-01-01T00:00:00+00:00",
    });
    expect(old.status).toBe(409);
    expect(await noteRow(id)).toMatchObject({ title: "Steady" });
  });
});

// Read-only sharing through the Worker: the owner shares by email on the note page, the other
// person reads it under "Shared with me" and can change nothing; revoking takes it away, and so
// does the recipient's "Remove from my list". The owner sees the address typed and the person's
// name, never their user id.

import { describe, expect, it } from "vitest";
import { adminClient, fieldError, randomEmail, signedInBrowser } from "../support/auth-flows";
import { cardTitles, createNote, noteRow } from "../support/notes";

describe("sharing a note", () => {
  it("shared read-only: listed under Shared with me, readable, every write a 404; revoke ends it", async () => {
    const owner = await signedInBrowser();
    const reader = await signedInBrowser();
    const id = await createNote(owner.browser, {
      title: "Team plan",
      body: "Ship it",
      tags: "secret-tag",
    });
    const shared = await owner.browser.post(`/notes/${id}`, {
      intent: "share",
      email: reader.email.toUpperCase(),
    });
    expect(shared.status).toBe(200);
    expect(shared.body).toContain(`Shared with ${reader.email}.`);
    expect(shared.body).toContain('data-testid="share-list"');

    const list = await reader.browser.get("/notes?view=shared");
    expect(cardTitles(list.body)).toEqual(["Team plan"]);
    expect(list.body).toContain("Shared by Someone ·");
    expect(cardTitles((await reader.browser.get("/notes")).body)).toEqual([]);

    const page = await reader.browser.get(`/notes/${id}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain("Ship it");
    expect(page.body).toContain("read-only");
    expect(page.body).not.toContain(`/notes/${id}/edit`);
    expect(page.body).not.toContain('data-testid="sharing"');
    expect(page.body).not.toContain("secret-tag");

    for (const [path, form] of [
      [`/notes/${id}/edit`, { title: "Mine now", body: "", tags: "" }],
      [`/notes/${id}/delete`, {}],
      [`/notes/${id}`, { intent: "pin", returnTo: "/notes" }],
      [`/notes/${id}`, { intent: "archive", returnTo: "/notes" }],
      [`/notes/${id}`, { intent: "share", email: randomEmail() }],
      [`/notes/${id}`, { intent: "unshare", email: reader.email }],
      [`/notes/${id}`, { intent: "unshare", email: owner.email }],
    ] as const) {
      const visit = await reader.browser.post(path, form);
      expect([path, JSON.stringify(form), visit.status]).toEqual([path, JSON.stringify(form), 404]);
    }
    expect((await reader.browser.get(`/notes/${id}/edit`)).status).toBe(404);
    expect((await reader.browser.get(`/notes/${id}/delete`)).status).toBe(404);
    expect(await noteRow(id)).toMatchObject({ title: "Team plan", pinned: false, archived: false });

    const revoked = await owner.browser.post(`/notes/${id}`, {
      intent: "unshare",
      email: reader.email,
    });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toContain("Not shared with anyone.");
    expect((await reader.browser.get(`/notes/${id}`)).status).toBe(404);
    expect(cardTitles((await reader.browser.get("/notes?view=shared")).body)).toEqual([]);
  });

  it("the reader sees the owner's display name once the owner has one", async () => {
    const owner = await signedInBrowser();
    const reader = await signedInBrowser();
    await owner.browser.post("/account?index", { username: "", displayName: "Ada Owner" });
    const id = await createNote(owner.browser, { title: "Named" });
    await owner.browser.post(`/notes/${id}`, { intent: "share", email: reader.email });
    const page = await reader.browser.get(`/notes/${id}`);
    expect(page.body).toContain("Shared by Ada Owner · read-only");
  });

  it.each([
    ["", 400, "Enter the email address of the person to share with."],
    ["not-an-email", 400, "Enter an email address like name@example.com."],
    [randomEmail(), 400, "There is no Edge Notes account with that email."],
  ])("share with %j: %i and a message beside the field", async (email, status, message) => {
    const { browser } = await signedInBrowser();
    const id = await createNote(browser, { title: "Private" });
    const visit = await browser.post(`/notes/${id}`, { intent: "share", email });
    expect(visit.status).toBe(status);
    expect(fieldError(visit.body, "email")).toContain(message);
    expect(visit.body).toContain(`value="${email}"`);
  });

  it("own address and an address already shared with get their own messages", async () => {
    const owner = await signedInBrowser();
    const reader = await signedInBrowser();
    const id = await createNote(owner.browser, { title: "Twice" });
    const own = await owner.browser.post(`/notes/${id}`, { intent: "share", email: owner.email });
    expect(own.status).toBe(400);
    expect(fieldError(own.body, "email")).toContain("your own email address");
    await owner.browser.post(`/notes/${id}`, { intent: "share", email: reader.email });
    const again = await owner.browser.post(`/notes/${id}`, {
      intent: "share",
      email: reader.email,
    });
    expect(again.status).toBe(409);
    expect(fieldError(again.body, "email")).toContain("already shared");
  });

  it("the owner's page lists the address typed and the person's name, never their user id", async () => {
    const owner = await signedInBrowser();
    const reader = await signedInBrowser();
    await reader.browser.post("/account?index", { username: "", displayName: "Rita Reader" });
    const id = await createNote(owner.browser, { title: "Who reads this" });
    await owner.browser.post(`/notes/${id}`, { intent: "share", email: reader.email });
    const page = await owner.browser.get(`/notes/${id}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain(reader.email);
    expect(page.body).toContain("Rita Reader");
    expect(page.body).not.toContain(reader.user.id);
    expect(page.body).toContain(`name="email" value="${reader.email}"`);
  });

  it("the recipient removes a note from their list with a plain form (list and note page)", async () => {
    const owner = await signedInBrowser();
    const reader = await signedInBrowser();
    const ids = [
      await createNote(owner.browser, { title: "Unwanted one" }),
      await createNote(owner.browser, { title: "Unwanted two" }),
    ];
    for (const id of ids) {
      await owner.browser.post(`/notes/${id}`, { intent: "share", email: reader.email });
    }
    const list = await reader.browser.get("/notes?view=shared");
    expect(cardTitles(list.body).sort()).toEqual(["Unwanted one", "Unwanted two"]);
    expect(list.body).toContain(">Remove from my list<");
    // A real form: it posts to the note's action without JavaScript.
    expect(list.body).toMatch(
      new RegExp(
        `<form data-testid="leave-shared-note"[^>]*action="/notes/${ids[0]}" method="post">`,
      ),
    );
    // From the list (JavaScript off): back to the list, without that note.
    const fromList = await reader.browser.post(
      `/notes/${ids[0]}`,
      { intent: "leave", returnTo: "/notes?view=shared" },
      { follow: false },
    );
    expect(fromList.status).toBe(302);
    expect(fromList.location).toBe("/notes?view=shared");
    expect(cardTitles((await reader.browser.get("/notes?view=shared")).body)).toEqual([
      "Unwanted two",
    ]);
    expect((await reader.browser.get(`/notes/${ids[0]}`)).status).toBe(404);
    // From the note page, whose returnTo would now be a 404: to the list instead.
    const notePage = await reader.browser.get(`/notes/${ids[1]}`);
    expect(notePage.body).toContain(">Remove from my list<");
    const fromPage = await reader.browser.post(`/notes/${ids[1]}`, {
      intent: "leave",
      returnTo: `/notes/${ids[1]}`,
    });
    expect(new URL(fromPage.url).pathname + new URL(fromPage.url).search).toBe(
      "/notes?view=shared",
    );
    expect(cardTitles(fromPage.body)).toEqual([]);
    // The owner's list of shares follows; the notes themselves are untouched.
    expect((await owner.browser.get(`/notes/${ids[0]}`)).body).toContain("Not shared with anyone.");
    expect(await noteRow(ids[0] as string)).toMatchObject({ title: "Unwanted one" });
    // Leaving again, or "leaving" one's own note, finds nothing: 404, and no share goes.
    expect((await reader.browser.post(`/notes/${ids[0]}`, { intent: "leave" })).status).toBe(404);
    const kept = await createNote(owner.browser, { title: "Still shared" });
    await owner.browser.post(`/notes/${kept}`, { intent: "share", email: reader.email });
    expect((await owner.browser.post(`/notes/${kept}`, { intent: "leave" })).status).toBe(404);
    const { count } = await adminClient()
      .from("note_shares")
      .select("note_id", { count: "exact", head: true })
      .eq("note_id", kept);
    expect(count).toBe(1);
  });
});

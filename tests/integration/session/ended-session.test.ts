import { describe, expect, it } from "vitest";
import { PASSWORD } from "../../support/backend.ts";
import { adminClient, expectNoStore, signedInBrowser } from "../support/auth-flows";
import { BrowserLess, type Visit } from "../support/browser-less";
import { cardTitles, createNote, noteRow } from "../support/notes";

// A session ended anywhere (this device, another device, a password change) is signed out at the
// Worker's next data request, not when its access token expires: ordinary pages verify the token
// locally, so it is the database that notices (db_pre_request: 401 PT401), and the Worker clears
// the cookies and sends the visitor to sign in with a message, for page loads and form posts alike.

/** The same user signed in on a second browser through the app's own form. */
async function secondBrowser(email: string): Promise<BrowserLess> {
  const browser = new BrowserLess();
  await browser.post("/sign-in", { intent: "password", email, password: PASSWORD });
  if (!browser.hasSession()) throw new Error("sign-in failed");
  return browser;
}

/** A copy of a browser's cookies, as an attacker who took them would hold them. */
function copyOf(browser: BrowserLess): BrowserLess {
  const copy = new BrowserLess();
  for (const [name, value] of browser.cookies) copy.cookies.set(name, value);
  return copy;
}

/** The first hop went to /sign-in with the message, cleared the cookies and was not cached. */
function expectSentToSignIn(visit: Visit, next: string) {
  const [hop] = visit.redirects;
  expect(hop?.status).toBeGreaterThanOrEqual(302);
  expect(hop?.status).toBeLessThan(304);
  // (home, the default target, is not named)
  const query = new URLSearchParams(next === "/" ? { ended: "1" } : { next, ended: "1" });
  expect(hop?.location).toBe(`/sign-in?${query}`);
  if (hop) expectNoStore(hop.headers);
  expect(hop?.headers.getSetCookie().join("\n")).toMatch(/sb-[^=]+-auth-token[^=]*=;.*Max-Age=0/i);
  expect(new URL(visit.url).pathname).toBe("/sign-in");
  expect(visit.body).toContain('data-testid="session-ended"');
  expect(visit.body).toContain("Your session was ended. Sign in again.");
}

describe("an ended session through the Worker", () => {
  it("'Sign out other devices': the other browser's next page sends it to sign in", async () => {
    const { browser, email } = await signedInBrowser();
    await createNote(browser, { title: "Written before" });
    const other = await secondBrowser(email);
    expect(cardTitles((await other.get("/notes")).body)).toEqual(["Written before"]);

    const done = await browser.post("/account/sessions", { intent: "others" });
    expect(done.status).toBe(200);

    const visit = await other.get("/notes");
    expectSentToSignIn(visit, "/notes");
    expect(visit.body).not.toContain("Written before");
    expect(other.hasSession()).toBe(false);
    // The browser that did it carries on.
    expect(cardTitles((await browser.get("/notes")).body)).toEqual(["Written before"]);
  });

  it("cookies copied before 'Sign out' read nothing and write nothing", async () => {
    const { browser } = await signedInBrowser();
    const noteId = await createNote(browser, { title: "Private" });
    const stolen = copyOf(browser);
    const stolenToo = copyOf(browser);
    await browser.post("/sign-out", { scope: "local" });
    expect(browser.hasSession()).toBe(false);

    const read = await stolen.get(`/notes/${noteId}`);
    expectSentToSignIn(read, `/notes/${noteId}`);
    expect(read.body).not.toContain("Private");
    const write = await stolenToo.post(`/notes/${noteId}/edit`, {
      title: "Defaced",
      body: "",
      tags: "",
    });
    expectSentToSignIn(write, `/notes/${noteId}/edit`);
    expect((await noteRow(noteId))?.title).toBe("Private");
  });

  it("form posts of the ended session are sent to sign in too, and write nothing", async () => {
    const { browser, email, user } = await signedInBrowser();
    await createNote(browser, { title: "Keep me" });
    const other = await secondBrowser(email);
    await browser.post("/account/sessions", { intent: "others" });

    const add = await other.post("/notes/new", { title: "Added after", body: "", tags: "" });
    expectSentToSignIn(add, "/notes/new");
    const { data } = await adminClient().from("notes").select("title").eq("owner_id", user.id);
    expect(data).toEqual([{ title: "Keep me" }]);
  });

  it("a password change signs the other browser out at its next page", async () => {
    const { browser, email } = await signedInBrowser();
    const other = await secondBrowser(email);
    const changed = await browser.post("/account/password", {
      intent: "change",
      currentPassword: PASSWORD,
      password: "a-new-long-secret",
    });
    expect(changed.status).toBe(200);

    expectSentToSignIn(await other.get("/"), "/");
    expect(other.hasSession()).toBe(false);
    expect((await browser.get("/notes")).status).toBe(200);
  });

  it("a single-fetch data request (client navigation) is redirected the same way", async () => {
    const { browser, email } = await signedInBrowser();
    const other = await secondBrowser(email);
    await browser.post("/account/sessions", { intent: "others" });

    const visit = await other.get("/notes.data", { follow: false });
    // React Router's single-fetch redirect: 202 with the target in the turbo-stream body.
    expect(visit.status).toBe(202);
    expect(visit.body).toContain("/sign-in?next=%2Fnotes&ended=1");
    expectNoStore(visit.headers);
    expect(visit.headers.getSetCookie().join("\n")).toMatch(/auth-token[^=]*=;.*Max-Age=0/i);
  });
});

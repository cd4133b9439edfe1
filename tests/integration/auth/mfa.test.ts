import { describe, expect, it } from "vitest";
import { adminClient, anonClient } from "../../support/backend";
import { STORAGE_KEY } from "../support/app";
import { followEmailLink, signedInBrowser, waitForMessage } from "../support/auth-flows";
import { BrowserLess } from "../support/browser-less";
import { createNote, noteRow } from "../support/notes";
import { decodeSession, encodeSession } from "../support/session";
import { authenticator, enrollTotp, hiddenValue, startEnrollment } from "../support/totp";

/** What the database answers a function call from an aal1 session of a user with a factor. */
const AAL_REFUSAL = "This account has a second factor: an aal2 session is required";

/** The user's factors as the auth server has them (the admin view of the user). */
async function factorsOf(userId: string) {
  const { data, error } = await adminClient().auth.admin.getUserById(userId);
  if (error) throw error;
  return data.user.factors ?? [];
}

/** The aal claim of the browser's current access token. */
function aalOf(browser: BrowserLess): string | undefined {
  const session = decodeSession(browser.cookies.get(STORAGE_KEY) ?? "");
  const token = String(session.access_token ?? "");
  return JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString()).aal;
}

/** A second browser that signed in with the password only (aal1). */
async function passwordOnly(email: string, password: string) {
  const browser = new BrowserLess();
  const visit = await browser.post("/sign-in", { intent: "password", email, password });
  return { browser, visit };
}

describe("enrolling an authenticator app (TOTP)", () => {
  it("shows the QR code and the secret; the factor counts only after a correct first code", async () => {
    const { browser, user } = await signedInBrowser();
    const started = await startEnrollment(browser, "Work phone");
    expect(started.visit.body).toMatch(/<img[^>]*src="data:image\/svg\+xml,%3Csvg/);
    expect(started.visit.body).toContain('data-testid="totp-secret"');
    expect((await factorsOf(user.id)).map((f) => f.status)).toEqual(["unverified"]);

    // A wrong code: said so, the QR code and secret stay, nothing counts yet.
    const app = authenticator(started.secret);
    const wrongCode = app.code() === "000000" ? "111111" : "000000";
    const wrong = await browser.post("/account/security", {
      intent: "verify",
      ...started.form,
      code: wrongCode,
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body).toContain("That code is wrong.");
    expect(wrong.body).toContain('data-testid="totp-qr"');
    expect(hiddenValue(wrong.body, "factorId")).toBe(started.factorId);
    expect((await factorsOf(user.id)).map((f) => f.status)).toEqual(["unverified"]);
    expect(aalOf(browser)).toBe("aal1");

    const right = await browser.post("/account/security", {
      intent: "verify",
      ...started.form,
      code: app.code(),
    });
    expect(right.status).toBe(200);
    expect(right.body).toContain("“Work phone” is on.");
    expect(aalOf(browser)).toBe("aal2");
    expect((await factorsOf(user.id)).map((f) => f.status)).toEqual(["verified"]);
    const page = await browser.get("/account/security");
    expect(page.body).toContain('data-testid="factors"');
    expect(page.body).toContain("Work phone");
    const activity = await browser.get("/account/activity");
    expect(activity.body).toContain('data-kind="mfa_factor_added"');
  });

  it("bad input: no name, a malformed code, a taken name", async () => {
    const { browser, user } = await signedInBrowser();
    const noName = await browser.post("/account/security", { intent: "enroll", name: "  " });
    expect(noName.status).toBe(400);
    expect(noName.body).toContain("Give this authenticator a name");

    const started = await startEnrollment(browser, "Phone");
    const malformed = await browser.post("/account/security", {
      intent: "verify",
      ...started.form,
      code: "12ab",
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toContain("Codes from authenticator apps have 6 digits.");
    await browser.post("/account/security", {
      intent: "verify",
      ...started.form,
      code: authenticator(started.secret).code(),
    });

    const taken = await browser.post("/account/security", { intent: "enroll", name: "phone" });
    expect(taken.status).toBe(409);
    expect(taken.body).toContain("You already have an authenticator with this name.");
    expect(await factorsOf(user.id)).toHaveLength(1);
  });
});

describe("the data needs aal2 once there is a second factor (restrictive RLS)", () => {
  it("an aal1 session reads none of the user's rows; the aal2 session does", async () => {
    const { browser, email, password, user } = await signedInBrowser();
    await enrollTotp(browser);
    const aal1 = anonClient();
    const signedIn = await aal1.auth.signInWithPassword({ email, password });
    expect(signedIn.error).toBeNull();
    for (const table of ["security_events", "profiles"]) {
      const { data, error } = await aal1.from(table).select("*");
      expect(error).toBeNull();
      expect(data).toEqual([]);
    }
    const profile = await adminClient().from("profiles").select("id").eq("id", user.id);
    expect(profile.data).toHaveLength(1);
    const page = await browser.get("/account/activity");
    expect(page.body).toContain('data-kind="mfa_factor_added"');
  });
});

describe("the functions need aal2 too (a password alone is not enough)", () => {
  it("share_note from an aal1 session: 403 42501, no share, the attacker still reads nothing", async () => {
    const { browser, email, password, user } = await signedInBrowser();
    await enrollTotp(browser);
    const id = await createNote(browser, { title: "Behind the second factor", body: "secret" });
    const attacker = await signedInBrowser();
    // Someone who knows only the password: a password sign-in gives an aal1 session.
    const aal1 = anonClient();
    expect((await aal1.auth.signInWithPassword({ email, password })).error).toBeNull();

    const shared = await aal1.rpc("share_note", { note_id: id, email: attacker.email });
    expect(shared.status).toBe(403);
    expect(shared.error).toMatchObject({ code: "42501", message: AAL_REFUSAL });
    expect(shared.data).toBeNull();
    const shares = await adminClient().from("note_shares").select("note_id").eq("note_id", id);
    expect(shares.data).toEqual([]);
    expect((await attacker.browser.get(`/notes/${id}`)).status).toBe(404);
    expect((await attacker.browser.get("/notes?view=shared")).body).not.toContain(
      "Behind the second factor",
    );

    // The activity log has no function to call at all (the database writes it from Auth's tables).
    const event = await aal1.rpc("record_security_event", {
      event_kind: "password_changed",
      event_detail: { via: "attacker" },
    });
    expect(event.status).toBe(404);
    expect(event.error?.code).toBe("PGRST202");
    const listed = await aal1.rpc("list_note_shares", { note_id: id });
    expect(listed.error).toMatchObject({ code: "42501", message: AAL_REFUSAL });
    const tagged = await aal1.rpc("set_note_tags", { note_id: id, tag_names: ["pwned"] });
    expect(tagged.error).toMatchObject({ code: "42501", message: AAL_REFUSAL });
    const events = await adminClient()
      .from("security_events")
      .select("kind, detail")
      .eq("user_id", user.id);
    expect(events.data?.map((e) => e.kind)).not.toContain("password_changed");
    expect(JSON.stringify(events.data)).not.toContain("attacker");
    expect(await noteRow(id)).toMatchObject({ title: "Behind the second factor", body: "secret" });
    const tags = await adminClient().from("note_tags").select("tag_id").eq("note_id", id);
    expect(tags.data).toEqual([]);

    // The same user with the second factor (aal2) still shares.
    const page = await browser.post(`/notes/${id}`, { intent: "share", email: attacker.email });
    expect(page.status).toBe(200);
    expect((await attacker.browser.get(`/notes/${id}`)).status).toBe(200);
  });
});

describe("signing in with a second factor", () => {
  it("password sign-in lands on /mfa; every protected page sends there; a correct code goes to next", async () => {
    const { browser, email, password } = await signedInBrowser();
    const { app } = await enrollTotp(browser);
    const { browser: other, visit } = await passwordOnly(email, password);
    expect(new URL(visit.url).pathname).toBe("/mfa");
    expect(aalOf(other)).toBe("aal1");

    const guarded = await other.get("/account/sessions", { follow: false });
    expect(guarded.status).toBe(302);
    expect(guarded.location).toBe("/mfa?next=%2Faccount%2Fsessions");
    // The challenge page itself is exempt: no loop.
    const challenge = await other.get("/mfa?next=%2Faccount%2Fsessions");
    expect(challenge.status).toBe(200);
    expect(challenge.body).toContain("Enter your code");

    const wrong = await other.post("/mfa?next=%2Faccount%2Fsessions", {
      next: "/account/sessions",
      code: app.code() === "000000" ? "111111" : "000000",
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body).toContain("That code is wrong.");
    expect(aalOf(other)).toBe("aal1");

    const right = await other.post("/mfa?next=%2Faccount%2Fsessions", {
      next: "/account/sessions",
      code: app.code(1),
    });
    expect(new URL(right.url).pathname).toBe("/account/sessions");
    expect(right.status).toBe(200);
    expect(aalOf(other)).toBe("aal2");
    // aal2 and nothing owed: /mfa sends straight on.
    const again = await other.get("/mfa?next=%2Faccount", { follow: false });
    expect(again.location).toBe("/account");
  });

  it("a code already used is refused, and next is same-origin only", async () => {
    const { browser, email, password } = await signedInBrowser();
    const { app, usedCode: used } = await enrollTotp(browser);
    const { browser: other } = await passwordOnly(email, password);
    const reused = await other.post("/mfa", { code: used });
    expect(reused.status).toBe(422);
    expect(aalOf(other)).toBe("aal1");
    const expired = await other.post("/mfa", { code: app.code(-4) });
    expect(expired.status).toBe(422);
    expect(expired.body).toContain("That code is wrong.");
    expect(aalOf(other)).toBe("aal1");
    const right = await other.post("/mfa", { code: app.code(1), next: "https://evil.example/x" });
    expect(new URL(right.url).origin).toBe(new URL(other.base).origin);
    expect(new URL(right.url).pathname).toBe("/notes");
  });

  it("an aal1 session POSTing an aal2 action directly is refused (403) and nothing changes", async () => {
    const { browser, email, password, user } = await signedInBrowser();
    const { factorId } = await enrollTotp(browser);
    const { browser: other } = await passwordOnly(email, password);
    const remove = await other.post("/account/security", { intent: "remove", factorId });
    expect(remove.status).toBe(403);
    expect(remove.body).toContain('data-testid="aal-required"');
    expect(remove.body).toContain('href="/mfa?next=%2Faccount%2Fsecurity"');
    const changeEmail = await other.post("/account/email", {
      intent: "change",
      email: `stolen-${email}`,
    });
    expect(changeEmail.status).toBe(403);
    expect(await factorsOf(user.id)).toHaveLength(1);

    // A cookie whose user object is edited to hide the factor gets past the app's hint, but not
    // past the account pages' fresh user, the auth server (removing a verified factor needs
    // aal2) or the data's aal2 policy; and each says so, never a 503.
    const session = decodeSession(other.cookies.get(STORAGE_KEY) ?? "");
    const user2 = { ...(session.user as Record<string, unknown>), factors: [] };
    other.cookies.set(STORAGE_KEY, encodeSession({ ...session, user: user2 }));
    const forged = await other.post("/account/security", { intent: "remove", factorId });
    expect(new URL(forged.url).pathname).toBe("/mfa");
    expect(forged.body).toContain("Enter your code");
    const activity = await other.get("/account/activity", { follow: false });
    expect(activity.status).toBe(302);
    expect(activity.location).toBe("/mfa?next=%2Faccount%2Factivity");
    const notes = await other.get("/notes");
    expect(notes.status).toBe(403);
    expect(notes.body).toContain('data-testid="aal-required"');
    const written = await other.post("/notes/new", { title: "Planted", body: "", tags: "" });
    expect(written.status).toBe(403);
    expect(await factorsOf(user.id)).toHaveLength(1);
  });

  it("removing a factor (aal2): gone from the list; someone else's or unknown ids are 404", async () => {
    const { browser, user } = await signedInBrowser();
    const { factorId } = await enrollTotp(browser);
    const stranger = await signedInBrowser();
    const { factorId: theirs } = await enrollTotp(stranger.browser, "Theirs");

    const notMine = await browser.post("/account/security", { intent: "remove", factorId: theirs });
    expect(notMine.status).toBe(404);
    const unknown = await browser.post("/account/security", {
      intent: "remove",
      factorId: crypto.randomUUID(),
    });
    expect(unknown.status).toBe(404);
    const garbage = await browser.post("/account/security", { intent: "remove", factorId: "1;--" });
    expect(garbage.status).toBe(404);
    expect(await factorsOf(stranger.user.id)).toHaveLength(1);

    const removed = await browser.post("/account/security", { intent: "remove", factorId });
    expect(removed.status).toBe(200);
    expect(removed.body).toContain("was removed");
    expect(await factorsOf(user.id)).toHaveLength(0);
    expect(removed.body).not.toContain('data-testid="factors"');
    const activity = await browser.get("/account/activity");
    expect(activity.body).toContain('data-kind="mfa_factor_removed"');
  });

  it("a recovery link of a user with a second factor goes through /mfa before a new password", async () => {
    const { browser, email } = await signedInBrowser();
    const { app } = await enrollTotp(browser);
    const other = new BrowserLess();
    await other.post("/forgot-password", { email });
    const landed = await followEmailLink(other, await waitForMessage(email, "recovery"));
    expect(new URL(landed.url).pathname).toBe("/mfa");
    expect(new URL(landed.url).searchParams.get("next")).toBe("/reset-password");
    const early = await other.post(
      "/reset-password",
      { password: "sneaky-new-one" },
      { follow: false },
    );
    expect(early.status).toBe(303);
    expect(early.location).toBe("/mfa?next=%2Freset-password");
    const passed = await other.post("/mfa", { next: "/reset-password", code: app.code(1) });
    expect(new URL(passed.url).pathname).toBe("/reset-password");
    const set = await other.post("/reset-password", { password: "a-brand-new-secret" });
    expect(set.redirects[0]?.location).toBe("/notes");
  });
});

import { describe, expect, it } from "vitest";
import { activityKinds } from "../support/account";
import { freshUser, signedInBrowser } from "../support/auth-flows";
import { BrowserLess, type Visit } from "../support/browser-less";
import { expireAccessToken } from "../support/session";
import { enrollTotp } from "../support/totp";

const MAC_CHROME =
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const WINDOWS_FIREFOX =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0";

/** A browser signed in through /sign-in, announcing itself with `agent`. */
async function signIn(email: string, password: string, agent: string) {
  const browser = new BrowserLess();
  await browser.post(
    "/sign-in",
    { intent: "password", email, password },
    { headers: { "User-Agent": agent } },
  );
  if (!browser.hasSession()) throw new Error("sign-in failed");
  return browser;
}

interface Row {
  id: string;
  current: boolean;
  text: string;
}

/** The rows of /account/sessions: session id, whether it is this device, and its text. */
function sessionRows(visit: Visit): Row[] {
  return [...visit.body.matchAll(/<li data-session-id="([^"]+)"([^>]*)>([\s\S]*?)<\/li>/g)].map(
    (m) => ({
      id: m[1] ?? "",
      current: /data-current="true"/.test(m[2] ?? ""),
      text: (m[3] ?? "").replace(/<[^>]+>/g, " ").replace(/\s+/g, " "),
    }),
  );
}

describe("/account/sessions", () => {
  it("lists every device signed in, this one marked, with device, IP, times and assurance", async () => {
    const { email, password } = await freshUser();
    const laptop = await signIn(email, password, MAC_CHROME);
    await signIn(email, password, WINDOWS_FIREFOX);

    const page = await laptop.get("/account/sessions");
    expect(page.status).toBe(200);
    const rows = sessionRows(page);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({ current: true });
    expect(rows[0]?.text).toContain("Chrome on macOS");
    expect(rows[0]?.text).toContain("This device");
    expect(rows[1]).toMatchObject({ current: false });
    expect(rows[1]?.text).toContain("Firefox on Windows");
    for (const row of rows) {
      expect(row.text).toContain("127.0.0.1");
      expect(row.text).toMatch(/Signed in \w+ \d+, \d{4}, .* UTC/);
      expect(row.text).toMatch(/Last active \w+ \d+, \d{4}, .* UTC/);
      expect(row.text).toContain("One factor (aal1)");
      expect(row.text).toContain("Sign out this device");
    }
  });

  it("a session owing its second factor names its device once it has it, and keeps it through a refresh", async () => {
    // The Worker's sign-in and refresh calls carry no browser User-Agent (they carry the secret
    // key, decision 022): the device is the one each session stated (public.session_devices).
    const { browser, email, password } = await signedInBrowser();
    const { app } = await enrollTotp(browser);
    const phone = await signIn(email, password, WINDOWS_FIREFOX);
    const verified = await phone.post(
      "/mfa",
      { code: app.code(1) },
      { headers: { "User-Agent": WINDOWS_FIREFOX } },
    );
    expect(verified.status).toBe(200);
    expireAccessToken(phone);
    const rows = sessionRows(await phone.get("/account/sessions"));
    expect(rows.find((row) => row.current)?.text).toContain("Firefox on Windows");
    expect(rows.find((row) => !row.current)?.text).not.toContain("Firefox on Windows");
  });

  it("'Sign out this device' ends that one session: refused there at once, logged here", async () => {
    const { email, password } = await freshUser();
    const laptop = await signIn(email, password, MAC_CHROME);
    const desktop = await signIn(email, password, WINDOWS_FIREFOX);
    const other = sessionRows(await laptop.get("/account/sessions")).find((r) => !r.current);

    const done = await laptop.post("/account/sessions", {
      intent: "end",
      sessionId: other?.id ?? "",
    });
    expect(done.status).toBe(200);
    expect(done.body).toContain("Firefox on Windows is signed out.");
    expect(sessionRows(done).map((r) => r.current)).toEqual([true]);

    const refused = await desktop.get("/account/sessions", { follow: false });
    expect(refused.status).toBe(302);
    expect(refused.location).toBe("/sign-in?next=%2Faccount%2Fsessions&ended=1");
    expect(desktop.hasSession()).toBe(false);
    const activity = await laptop.get("/account/activity");
    expect(activityKinds(activity.body)[0]).toBe("session_ended");
    expect(activity.body).toContain("Signed out a device");
  });

  it("'Sign out this device' on this browser's own row signs it out", async () => {
    const { browser } = await signedInBrowser();
    const mine = sessionRows(await browser.get("/account/sessions")).find((r) => r.current);
    const visit = await browser.post("/account/sessions", {
      intent: "end",
      sessionId: mine?.id ?? "",
    });
    expect(new URL(visit.url).pathname).toBe("/");
    expect(browser.hasSession()).toBe(false);
  });

  it("bad input: someone else's session is a 404 and stays signed in", async () => {
    const me = await signedInBrowser();
    const victim = await signedInBrowser();
    const theirs = sessionRows(await victim.browser.get("/account/sessions"))[0];

    const visit = await me.browser.post("/account/sessions", {
      intent: "end",
      sessionId: theirs?.id ?? "",
    });
    expect(visit.status).toBe(404);
    expect(visit.body).toContain("That session has already ended, or it isn&#x27;t one of yours.");
    expect(visit.body).toContain("session_not_found");
    expect(sessionRows(await victim.browser.get("/account/sessions"))).toHaveLength(1);
    expect(victim.browser.hasSession()).toBe(true);
  });

  it("bad input: a malformed, missing or unknown id is a 4xx and nothing is signed out", async () => {
    const { browser } = await signedInBrowser();
    for (const [sessionId, status] of [
      ["not-a-uuid", 400],
      ["", 400],
      ["'; delete from auth.sessions; --", 400],
      [crypto.randomUUID(), 404],
    ] as const) {
      const visit = await browser.post("/account/sessions", { intent: "end", sessionId });
      expect(visit.status, sessionId).toBe(status);
    }
    expect(browser.hasSession()).toBe(true);
    expect(sessionRows(await browser.get("/account/sessions"))).toHaveLength(1);
  });

  it("an aal1 session of a user with a second factor can't end sessions (403, nothing changes)", async () => {
    const { browser, email, password } = await signedInBrowser();
    await enrollTotp(browser);
    const strong = sessionRows(await browser.get("/account/sessions")).find((r) => r.current);
    const passwordOnly = await signIn(email, password, WINDOWS_FIREFOX);

    const page = await passwordOnly.get("/account/sessions", { follow: false });
    expect(page.status).toBe(302);
    expect(page.location).toBe("/mfa?next=%2Faccount%2Fsessions");
    const visit = await passwordOnly.post("/account/sessions", {
      intent: "end",
      sessionId: strong?.id ?? "",
    });
    expect(visit.status).toBe(403);
    const after = sessionRows(await browser.get("/account/sessions"));
    expect(after.map((r) => r.id)).toContain(strong?.id);
    expect(after).toHaveLength(2);
  });

  it("a form post from another site is refused before it runs", async () => {
    const { browser } = await signedInBrowser();
    const mine = sessionRows(await browser.get("/account/sessions"))[0];
    const visit = await browser.post(
      "/account/sessions",
      { intent: "end", sessionId: mine?.id ?? "" },
      { origin: "https://evil.example" },
    );
    expect(visit.status).toBe(403);
    expect(browser.hasSession()).toBe(true);
  });

  it("'Sign out other devices' ends the other browser's session at its next server check", async () => {
    const { browser, email, password } = await signedInBrowser();
    const other = new BrowserLess();
    await other.post("/sign-in", { intent: "password", email, password });
    const third = new BrowserLess();
    await third.post("/sign-in", { intent: "password", email, password });
    expect((await other.get("/account/sessions")).status).toBe(200);

    const done = await browser.post("/account/sessions", { intent: "others" });
    expect(done.status).toBe(200);
    expect(done.body).toContain("Your other devices and browsers are signed out.");

    // An account page asks the auth server: refused at once, cookies cleared.
    const refused = await other.get("/account/sessions", { follow: false });
    expect(refused.status).toBe(302);
    expect(refused.location).toBe("/sign-in?next=%2Faccount%2Fsessions&ended=1");
    expect(other.hasSession()).toBe(false);
    // Ordinary pages verify the token locally: the next refresh is refused.
    expireAccessToken(third);
    const home = await third.get("/");
    expect(home.body).toContain('data-testid="signed-out"');
    expect(third.hasSession()).toBe(false);
    // This browser carries on.
    expect((await browser.get("/account/sessions")).status).toBe(200);
    expect(activityKinds((await browser.get("/account/activity")).body)[0]).toBe(
      "signed_out_others",
    );
  });

  it("'Sign out everywhere' ends this session too", async () => {
    const { browser } = await signedInBrowser();
    const visit = await browser.post("/account/sessions", { intent: "global" });
    expect(new URL(visit.url).pathname).toBe("/sign-in");
    expect(visit.body).toContain('data-testid="session-ended"');
    expect(browser.hasSession()).toBe(false);
  });

  it("bad input: an unknown intent is a 400 and nobody is signed out", async () => {
    const { browser } = await signedInBrowser();
    const visit = await browser.post("/account/sessions", { intent: "everyone-else" });
    expect(visit.status).toBe(400);
    expect(browser.hasSession()).toBe(true);
    expect((await browser.get("/account/sessions")).status).toBe(200);
  });
});

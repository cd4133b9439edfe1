import { describe, expect, it } from "vitest";
import { anonClient } from "../../support/backend";
import { STORAGE_KEY } from "../support/app";
import { signedInBrowser, testId } from "../support/auth-flows";
import { BrowserLess } from "../support/browser-less";
import { decodeSession, encodeSession } from "../support/session";

// Session upkeep: the Worker refreshes an expired access token once per request (middleware),
// the browser client refreshes on its own timer, and both share one cookie. They must never
// "fight": whoever refreshes second with the same refresh token gets the same new token back
// (auth server rule: a revoked token whose child is the active one returns that child), so no
// request ends in refresh_token_already_used.

/** A browser whose session cookie says the access token has expired. */
async function expiredSession() {
  const { browser, email } = await signedInBrowser();
  const value = browser.cookies.get(STORAGE_KEY);
  if (!value) throw new Error("expected a single-chunk session cookie");
  const session = decodeSession(value) as { refresh_token: string };
  const cookie = encodeSession({ ...session, expires_at: 1 });
  return { email, refreshToken: session.refresh_token, cookie };
}

function refreshTokenSet(response: { headers: Headers }): string | undefined {
  const line = response.headers.getSetCookie().find((c) => c.startsWith(`${STORAGE_KEY}=base64-`));
  if (!line) return undefined;
  const value = line.slice(STORAGE_KEY.length + 1).split(";")[0] ?? "";
  return (decodeSession(value) as { refresh_token: string }).refresh_token;
}

function browserWith(cookie: string) {
  const browser = new BrowserLess();
  browser.cookies.set(STORAGE_KEY, cookie);
  return browser;
}

describe("session upkeep: server and browser never fight over the refresh token", () => {
  it("parallel requests with one expired session all stay signed in and agree on the new token", async () => {
    const { email, refreshToken, cookie } = await expiredSession();
    const visits = await Promise.all(Array.from({ length: 6 }, () => browserWith(cookie).get("/")));
    for (const visit of visits) expect(testId(visit.body, "session-email")).toBe(email);
    const issued = new Set(visits.map(refreshTokenSet));
    expect(issued.size).toBe(1);
    expect([...issued][0]).not.toBe(refreshToken);
  });

  it("the browser client and the Worker refreshing the same token at once both keep the session", async () => {
    const { email, refreshToken, cookie } = await expiredSession();
    const browserClient = anonClient();
    const [fromBrowser, fromWorker] = await Promise.all([
      browserClient.auth.refreshSession({ refresh_token: refreshToken }),
      browserWith(cookie).get("/"),
    ]);
    expect(fromBrowser.error).toBeNull();
    expect(testId(fromWorker.body, "session-email")).toBe(email);
    expect(fromBrowser.data.session?.refresh_token).toBe(refreshTokenSet(fromWorker));
  });

  it("a refresh whose response was lost: the old cookie still works and gets the current token", async () => {
    const { email, cookie } = await expiredSession();
    const first = await browserWith(cookie).get("/");
    const current = refreshTokenSet(first);
    expect(current).toBeTruthy();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const replay = await browserWith(cookie).get("/");
    expect(testId(replay.body, "session-email")).toBe(email);
    expect(refreshTokenSet(replay)).toBe(current);
  });

  it("a warm request with a valid access token does not refresh at all", async () => {
    const { browser } = await signedInBrowser();
    await browser.get("/");
    const visit = await browser.get("/");
    expect(visit.headers.getSetCookie()).toEqual([]);
  });
});

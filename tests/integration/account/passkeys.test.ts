// Passkeys through the app: adding one on /account/security (the JSON steps at /account/passkeys),
// renaming and removing it (plain forms), and signing in with it (/sign-in/passkey). A software
// authenticator (tests/support/authenticator.ts) plays the browser's part with real ES256 keys;
// the bad-input cases forge, replay or bend its answers, and nothing may change.
import { describe, expect, it } from "vitest";
import { SoftAuthenticator, type Tamper } from "../../support/authenticator.ts";
import { activityKinds } from "../support/account";
import { APP_URL } from "../support/app";
import { signedInBrowser } from "../support/auth-flows";
import { BrowserLess } from "../support/browser-less";
import { enrollTotp } from "../support/totp";

const MAC_CHROME =
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

function json(body: string): Record<string, unknown> {
  return JSON.parse(body);
}

/** Adds a passkey through the app, as the security page's script does; its id and name. */
async function addPasskey(browser: BrowserLess, authenticator: SoftAuthenticator) {
  const options = await browser.post("/account/passkeys", { intent: "options" });
  expect(options.status).toBe(200);
  const { challengeId, options: creation } = json(options.body) as {
    challengeId: string;
    options: Record<string, unknown> & { challenge: string };
  };
  const credential = authenticator.create(creation);
  const verified = await browser.post(
    "/account/passkeys",
    { intent: "verify", challengeId, credential: JSON.stringify(credential) },
    { headers: { "User-Agent": MAC_CHROME } },
  );
  expect(verified.status, verified.body).toBe(200);
  return json(verified.body) as { id: string; name: string };
}

/** The sign-in page's passkey steps with `authenticator`; the verify answer. */
async function passkeySignIn(
  browser: BrowserLess,
  authenticator: SoftAuthenticator,
  tamper: Tamper = {},
  next = "",
) {
  const options = await browser.post("/sign-in/passkey", { intent: "options" });
  expect(options.status).toBe(200);
  const { challengeId, options: request } = json(options.body) as {
    challengeId: string;
    options: Record<string, unknown> & { challenge: string };
  };
  const credential = authenticator.get(request, tamper);
  const fields = { intent: "verify", challengeId, credential: JSON.stringify(credential), next };
  const visit = await browser.post("/sign-in/passkey", fields);
  return { visit, fields };
}

function passkeyIds(body: string): string[] {
  return [...body.matchAll(/data-passkey-id="([^"]+)"/g)].map((m) => m[1] ?? "");
}

describe("passkeys", () => {
  it("add one (named after the device), sign in with it, see both in the activity", async () => {
    const { browser, email } = await signedInBrowser();
    const authenticator = new SoftAuthenticator(APP_URL);
    const added = await addPasskey(browser, authenticator);
    expect(added.name).toBe("Chrome on macOS");
    const page = await browser.get("/account/security");
    expect(passkeyIds(page.body)).toEqual([added.id]);
    expect(page.body).toContain("Chrome on macOS");

    const phone = new BrowserLess();
    const { visit } = await passkeySignIn(phone, authenticator, {}, "/notes");
    expect(visit.status).toBe(200);
    expect(json(visit.body)).toEqual({ redirectTo: "/notes" });
    expect(visit.headers.get("Cache-Control")).toContain("no-store");
    expect(phone.hasSession()).toBe(true);
    const home = await phone.get("/");
    expect(home.body).toContain(email);
    const kinds = activityKinds((await phone.get("/account/activity")).body);
    expect(kinds.slice(0, 1)).toEqual(["signed_in"]);
    expect(kinds).toContain("passkey_added");
  });

  it("a user with an authenticator app is sent to /mfa after a passkey sign-in", async () => {
    const { browser } = await signedInBrowser();
    await enrollTotp(browser);
    const authenticator = new SoftAuthenticator(APP_URL);
    await addPasskey(browser, authenticator);
    const laptop = new BrowserLess();
    const { visit } = await passkeySignIn(laptop, authenticator, {}, "/account/sessions");
    expect(json(visit.body)).toEqual({ redirectTo: "/mfa?next=%2Faccount%2Fsessions" });
    const page = await laptop.get("/account/security", { follow: false });
    expect(page.location).toBe("/mfa?next=%2Faccount%2Fsecurity");
  });

  it("bad input: a forged, replayed, wrong-origin or wrong-RP assertion signs nobody in", async () => {
    const { browser } = await signedInBrowser();
    const authenticator = new SoftAuthenticator(APP_URL);
    await addPasskey(browser, authenticator);
    for (const tamper of [
      { forgeSignature: true },
      { origin: "https://evil.example" },
      { rpId: "evil.example" },
      { challenge: "AAAAAAAAAAAAAAAAAAAAAA" },
    ] satisfies Tamper[]) {
      const visitor = new BrowserLess();
      const { visit } = await passkeySignIn(visitor, authenticator, tamper);
      expect(visit.status, JSON.stringify(tamper)).toBeGreaterThanOrEqual(400);
      expect(visit.status, JSON.stringify(tamper)).toBeLessThan(500);
      expect(json(visit.body).code).toBe("webauthn_verification_failed");
      expect(visitor.hasSession()).toBe(false);
    }
    // The same answer twice: the challenge is used up.
    const first = new BrowserLess();
    const { visit, fields } = await passkeySignIn(first, authenticator);
    expect(visit.status).toBe(200);
    const replay = new BrowserLess();
    const again = await replay.post("/sign-in/passkey", fields);
    expect(again.status).toBeGreaterThanOrEqual(400);
    expect(again.status).toBeLessThan(500);
    expect(replay.hasSession()).toBe(false);
  });

  it("bad input: malformed steps are 400s", async () => {
    const visitor = new BrowserLess();
    const steps: Record<string, string>[] = [
      { intent: "verify", challengeId: "nope", credential: "{}" },
      { intent: "verify", challengeId: crypto.randomUUID(), credential: "not json" },
      { intent: "verify", challengeId: crypto.randomUUID(), credential: '{"id":"x"}' },
      { intent: "something" },
    ];
    for (const fields of steps) {
      const visit = await visitor.post("/sign-in/passkey", fields);
      expect(visit.status, JSON.stringify(fields)).toBe(400);
    }
    const cross = await visitor.post(
      "/sign-in/passkey",
      { intent: "options" },
      { origin: "https://evil.example" },
    );
    expect(cross.status).toBe(403);
    expect(visitor.hasSession()).toBe(false);
  });

  it("rename and remove; someone else's or a malformed id is refused and nothing changes", async () => {
    const me = await signedInBrowser();
    const mine = await addPasskey(me.browser, new SoftAuthenticator(APP_URL));
    const victim = await signedInBrowser();
    const theirs = await addPasskey(victim.browser, new SoftAuthenticator(APP_URL));

    const renamed = await me.browser.post("/account/security", {
      intent: "rename-passkey",
      passkeyId: mine.id,
      name: "Work laptop",
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toContain("Work laptop");

    for (const [intent, passkeyId, status] of [
      ["rename-passkey", theirs.id, 404],
      ["remove-passkey", theirs.id, 404],
      ["rename-passkey", "not-a-uuid", 400],
      ["remove-passkey", "", 400],
    ] as const) {
      const visit = await me.browser.post("/account/security", {
        intent,
        passkeyId,
        name: "Stolen",
      });
      expect(visit.status, `${intent} ${passkeyId}`).toBe(status);
    }
    const empty = await me.browser.post("/account/security", {
      intent: "rename-passkey",
      passkeyId: mine.id,
      name: "  ",
    });
    expect(empty.status).toBe(400);
    const victimPage = await victim.browser.get("/account/security");
    expect(passkeyIds(victimPage.body)).toEqual([theirs.id]);
    expect(victimPage.body).toContain("Chrome on macOS");
    expect(victimPage.body).not.toContain("Stolen");

    const removed = await me.browser.post("/account/security", {
      intent: "remove-passkey",
      passkeyId: mine.id,
    });
    expect(removed.status).toBe(200);
    expect(passkeyIds(removed.body)).toEqual([]);
    const kinds = activityKinds((await me.browser.get("/account/activity")).body);
    // Auth's audit log gives them all (decision 025): adding through the app is added, then
    // renamed after the device.
    expect(kinds.slice(0, 4)).toEqual([
      "passkey_removed",
      "passkey_renamed",
      "passkey_renamed",
      "passkey_added",
    ]);
  });

  it("an aal1 session of a user with a second factor can't add or remove passkeys (403)", async () => {
    const { browser, email, password } = await signedInBrowser();
    await enrollTotp(browser);
    const mine = await addPasskey(browser, new SoftAuthenticator(APP_URL));
    const passwordOnly = new BrowserLess();
    await passwordOnly.post("/sign-in", { intent: "password", email, password });
    expect(passwordOnly.hasSession()).toBe(true);

    const remove = await passwordOnly.post("/account/security", {
      intent: "remove-passkey",
      passkeyId: mine.id,
    });
    expect(remove.status).toBe(403);
    const options = await passwordOnly.post("/account/passkeys", { intent: "options" });
    expect(options.status).toBe(403);
    expect(passkeyIds((await browser.get("/account/security")).body)).toEqual([mine.id]);
  });

  it("with JavaScript off, /sign-in offers no passkey and the security page says why", async () => {
    const signedOut = await new BrowserLess().get("/sign-in");
    expect(signedOut.body).not.toContain("Sign in with a passkey");
    expect(signedOut.body).toMatch(/<input id="field-email"[^>]*autocomplete="username webauthn"/i);
    const { browser } = await signedInBrowser();
    const page = await browser.get("/account/security");
    expect(page.body).toContain('data-testid="passkey-needs-javascript"');
  });
});

// MFA recovery codes through the app: made on /account/security (shown once), used at /mfa
// instead of the authenticator app (once each, case and dashes ignored), counted, replaced; the
// profile page warns when few are left.
import { describe, expect, it } from "vitest";
import { activityKinds } from "../support/account";
import { signedInBrowser } from "../support/auth-flows";
import { BrowserLess } from "../support/browser-less";
import { enrollTotp } from "../support/totp";

function codesOn(body: string): string[] {
  return [...body.matchAll(/data-code="([a-z0-9]+)"/g)].map((m) => m[1] ?? "");
}

/** A password-only (aal1) sign-in of the user, in a new browser: it lands on /mfa. */
async function aal1Browser(email: string, password: string) {
  const browser = new BrowserLess();
  const visit = await browser.post("/sign-in", { intent: "password", email, password });
  expect(new URL(visit.url).pathname).toBe("/mfa");
  return browser;
}

/** "Use a recovery code" on /mfa. */
function useCode(browser: BrowserLess, recoveryCode: string, next = "/account/security") {
  return browser.post(`/mfa?next=${encodeURIComponent(next)}`, {
    intent: "recovery",
    recoveryCode,
    next,
  });
}

/** "N of M" from the page's "N of M codes left". */
function left(body: string): string | undefined {
  const text = body.replace(/<!-- -->/g, "").replace(/<[^>]+>/g, "");
  return /(\d+ of \d+) codes left/.exec(text)?.[1];
}

/** What a refused form said: the page's text around its error (empty when there is none). */
function alertOf(body: string): string {
  const text = body
    .replace(/<!-- -->/g, "")
    .replace(/<[^>]+>/g, " ")
    .replace(/\s+/g, " ");
  const at = text.search(/Error code|wrong or was used|not available|Too many|can't be reached/);
  return at < 0 ? "" : text.slice(Math.max(0, at - 160), at + 80);
}

/** As a person might type it: upper case, in groups of four. */
function typed(code: string) {
  return code.toUpperCase().replace(/(.{4})(?!$)/g, "$1-");
}

describe("recovery codes", () => {
  it("need an authenticator app first (an aal2 session)", async () => {
    const { browser } = await signedInBrowser();
    const page = await browser.get("/account/security");
    expect(page.body).not.toContain("Generate recovery codes");
    const visit = await browser.post("/account/security", { intent: "generate-recovery-codes" });
    // Without a second factor the session is aal1, and the server wants aal2 first.
    expect(visit.status).toBe(403);
    expect(visit.body).toContain("insufficient_aal");
    expect(codesOn(visit.body)).toEqual([]);
  });

  it("are shown once, sign in at /mfa once each, and are counted", async () => {
    const { browser, email, password } = await signedInBrowser();
    await enrollTotp(browser);
    const made = await browser.post("/account/security", { intent: "generate-recovery-codes" });
    expect(made.status).toBe(200);
    const codes = codesOn(made.body);
    expect(codes).toHaveLength(10);
    expect(made.body).toContain("Download");
    expect(made.body).toContain('download="edge-notes-recovery-codes.txt"');
    // Shown once: the page afterwards has only the count.
    const later = await browser.get("/account/security");
    expect(codesOn(later.body)).toEqual([]);
    expect(left(later.body)).toBe("10 of 10");

    const lost = await aal1Browser(email, password);
    const first = codes[0] ?? "";
    const used = await useCode(lost, typed(first));
    expect(new URL(used.url).pathname, `${used.status} ${alertOf(used.body)}`).toBe(
      "/account/security",
    );
    expect(used.status).toBe(200);
    expect(left(used.body)).toBe("9 of 10");

    // Used already: refused beside the field, the session stays aal1.
    const again = await aal1Browser(email, password);
    const refused = await useCode(again, first);
    expect(refused.status).toBe(422);
    expect(refused.body).toContain("That recovery code is wrong or was used already.");
    expect(refused.body).not.toContain(first);
    const page = await again.get("/account/security", { follow: false });
    expect(page.location).toBe("/mfa?next=%2Faccount%2Fsecurity");

    const kinds = activityKinds((await browser.get("/account/activity")).body);
    expect(kinds).toContain("recovery_code_used");
    expect(kinds).toContain("recovery_codes_generated");
  });

  it("a new set replaces the old one", async () => {
    const { browser, email, password } = await signedInBrowser();
    await enrollTotp(browser);
    const old = codesOn(
      (await browser.post("/account/security", { intent: "generate-recovery-codes" })).body,
    );
    const fresh = codesOn(
      (await browser.post("/account/security", { intent: "regenerate-recovery-codes" })).body,
    );
    expect(fresh).toHaveLength(10);
    expect(fresh).not.toEqual(old);
    const lost = await aal1Browser(email, password);
    expect((await useCode(lost, old[1] ?? "")).status).toBe(422);
    const ok = await useCode(lost, fresh[1] ?? "");
    expect(new URL(ok.url).pathname, `${ok.status} ${alertOf(ok.body)}`).toBe("/account/security");
  });

  it("bad input: malformed codes are 400s; aal1 sessions can't make codes (403)", async () => {
    const { browser, email, password } = await signedInBrowser();
    await enrollTotp(browser);
    await browser.post("/account/security", { intent: "generate-recovery-codes" });
    const lost = await aal1Browser(email, password);
    for (const code of ["", "'; drop table auth.users; --", "x".repeat(65)]) {
      expect((await useCode(lost, code)).status, code).toBe(400);
    }
    const generate = await lost.post("/account/security", { intent: "regenerate-recovery-codes" });
    expect(generate.status).toBe(403);
    expect(codesOn(generate.body)).toEqual([]);
  });

  it("the profile page says so when few are left", async () => {
    const { browser, email, password } = await signedInBrowser();
    await enrollTotp(browser);
    const codes = codesOn(
      (await browser.post("/account/security", { intent: "generate-recovery-codes" })).body,
    );
    expect((await browser.get("/account")).body).not.toContain('data-testid="few-recovery-codes"');
    for (const code of codes.slice(0, 7)) {
      const lost = await aal1Browser(email, password);
      const used = await useCode(lost, code);
      expect(new URL(used.url).pathname, `${used.status} ${alertOf(used.body)}`).toBe(
        "/account/security",
      );
    }
    const profile = await browser.get("/account");
    expect(profile.body).toContain('data-testid="few-recovery-codes"');
    expect(profile.body).toContain("Only 3 recovery codes are left.");
  });
});

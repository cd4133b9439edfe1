import { Secret, TOTP } from "otpauth";
import type { BrowserLess, Visit } from "./browser-less.ts";

/** Codes an authenticator app would show for this secret (RFC 6238: SHA1, 6 digits, 30 s). */
export function authenticator(secret: string) {
  const totp = new TOTP({
    algorithm: "SHA1",
    digits: 6,
    period: 30,
    secret: Secret.fromBase32(secret),
  });
  return {
    /** The code for now, or `windows` periods later (a fresh one the server has not seen). */
    code: (windows = 0) => totp.generate({ timestamp: Date.now() + windows * 30_000 }),
  };
}

/** A hidden input's value on a page (`<input type="hidden" name="…" value="…">`). */
export function hiddenValue(body: string, name: string): string | null {
  const match = new RegExp(`<input[^>]*name="${name}"[^>]*value="([^"]*)"`).exec(body);
  return match ? (match[1] ?? "").replace(/&amp;/g, "&") : null;
}

/** Starts enrolling an authenticator on /account/security: the factor id and secret shown. */
export async function startEnrollment(browser: BrowserLess, name = "My phone") {
  const visit = await browser.post("/account/security", { intent: "enroll", name });
  const factorId = hiddenValue(visit.body, "factorId");
  const secret = /data-secret="([A-Z2-7=]+)"/.exec(visit.body)?.[1];
  if (visit.status !== 200 || !factorId || !secret) {
    throw new Error(`enrollment did not start: ${visit.status} ${visit.body.slice(0, 400)}`);
  }
  return { visit, factorId, secret, form: enrollmentForm(visit) };
}

/** The hidden fields of the "verify" step, to post back with a code. */
export function enrollmentForm(visit: Visit): Record<string, string> {
  const form: Record<string, string> = {};
  for (const name of ["factorId", "name", "secret", "uri", "qr"]) {
    form[name] = hiddenValue(visit.body, name) ?? "";
  }
  return form;
}

/** Enrolls and verifies an authenticator; returns its secret (the session is now aal2). */
export async function enrollTotp(browser: BrowserLess, name = "My phone") {
  const started = await startEnrollment(browser, name);
  const app = authenticator(started.secret);
  // the code the enrollment used (a test computing app.code() later may be in the next step)
  const usedCode = app.code();
  const verified = await browser.post("/account/security", {
    intent: "verify",
    ...started.form,
    code: usedCode,
  });
  if (verified.status !== 200) {
    throw new Error(`verification failed: ${verified.status} ${verified.body.slice(0, 400)}`);
  }
  return { factorId: started.factorId, secret: started.secret, app, usedCode };
}

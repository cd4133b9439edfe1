import { adminClient, freshUser, randomEmail } from "../../support/backend.ts";
import { latestMessage } from "../../support/inbox.ts";
import { BrowserLess, type Visit } from "./browser-less.ts";

export { adminClient, freshUser, randomEmail };

/** A confirmed user signed in through the app's own /sign-in form (JavaScript off). */
export async function signedInBrowser(options: { next?: string } = {}) {
  const user = await freshUser();
  const browser = new BrowserLess();
  const visit = await browser.post("/sign-in", {
    intent: "password",
    email: user.email,
    password: user.password,
    next: options.next ?? "",
  });
  if (!browser.hasSession()) throw new Error(`sign-in failed: ${visit.status} ${visit.url}`);
  return { ...user, browser, visit };
}

/** The newest email of a type, waiting briefly for it (mail is written when the request ends). */
export async function waitForMessage(to: string, type: string) {
  for (let i = 0; ; i++) {
    try {
      return await latestMessage(to, type);
    } catch (error) {
      if (i > 20) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** The text of an element with `data-testid` (first match), or null. */
export function testId(body: string, id: string): string | null {
  const match = new RegExp(`data-testid="${id}"[^>]*>([^<]*)<`).exec(body);
  return match ? (match[1] ?? "") : null;
}

/** The `data-problem` of a link-problem page. */
export function linkProblemOf(visit: Visit): string | null {
  return /data-problem="([^"]+)"/.exec(visit.body)?.[1] ?? null;
}

export function expectNoStore(headers: Headers) {
  const value = headers.get("Cache-Control") ?? "";
  if (!/\bprivate\b/.test(value) || !/\bno-store\b/.test(value)) {
    throw new Error(`expected Cache-Control private, no-store; got "${value}"`);
  }
}

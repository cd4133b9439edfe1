import { adminClient, freshUser, randomEmail } from "../../support/backend.ts";
import { confirmLink, type InboxMessage, latestMessage } from "../../support/inbox.ts";
import { BrowserLess, type RequestOptions, type Visit } from "./browser-less.ts";

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
/** The message shown under a form field (FormField's `field-<name>-error`), or null. */
export function fieldError(body: string, name: string): string | null {
  return new RegExp(`id="field-${name}-error"[^>]*>([^<]*)<`).exec(body)?.[1] ?? null;
}

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

/** The confirm page's one form (/auth/confirm): its method, target, hidden fields and button. */
export interface ConfirmForm {
  method: string;
  action: string;
  fields: Record<string, string>;
  button: string;
}

const ENTITIES: Record<string, string> = {
  "&amp;": "&",
  "&quot;": '"',
  "&#x27;": "'",
  "&#39;": "'",
  "&lt;": "<",
  "&gt;": ">",
};
const decode = (text: string) =>
  text.replace(/&(amp|quot|#x27|#39|lt|gt);/g, (e) => ENTITIES[e] ?? e);

/** Reads the confirm form out of the page's HTML, as a browser without JavaScript would. */
export function confirmForm(visit: Visit): ConfirmForm | null {
  const match = /<form\b([^>]*data-testid="confirm-form"[^>]*)>([\s\S]*?)<\/form>/.exec(visit.body);
  if (!match) return null;
  const [, tag = "", inner = ""] = match;
  const attribute = (html: string, name: string) =>
    decode(new RegExp(`\\b${name}="([^"]*)"`).exec(html)?.[1] ?? "");
  const fields: Record<string, string> = {};
  for (const [input] of inner.matchAll(/<input\b[^>]*>/g)) {
    if (attribute(input, "type") === "hidden")
      fields[attribute(input, "name")] = attribute(input, "value");
  }
  const button = /<button\b[^>]*>([\s\S]*?)<\/button>/.exec(inner)?.[1] ?? "";
  return {
    method: attribute(tag, "method").toLowerCase(),
    action: attribute(tag, "action") || new URL(visit.url).pathname + new URL(visit.url).search,
    fields,
    button: decode(button.replace(/<[^>]*>/g, "")).trim(),
  };
}

/**
 * Opens an emailed /auth/confirm link in `browser` and presses the page's button (the form
 * posts natively, redirects followed): what a person does with JavaScript off.
 */
export async function pressConfirm(
  browser: BrowserLess,
  path: string,
  options: RequestOptions = {},
): Promise<Visit> {
  const page = await browser.get(path);
  const form = confirmForm(page);
  if (!form || form.method !== "post") {
    throw new Error(`no confirm form at ${path}: ${page.status} ${linkProblemOf(page) ?? ""}`);
  }
  return browser.post(form.action, form.fields, options);
}

/**
 * The path of an email's /auth/confirm link. The link's origin is the test backend's site_url
 * (config.toml's, `npm run dev`'s port); the app under test serves the same path.
 */
export function confirmPathIn(message: InboxMessage): string {
  const link = confirmLink(message);
  return link.pathname + link.search;
}

/**
 * Follows an email's link as a person with JavaScript off does: opens it (/auth/confirm, where
 * nothing happens yet) and presses the page's one button.
 */
export function followEmailLink(
  browser: BrowserLess,
  message: InboxMessage,
  options: RequestOptions = {},
): Promise<Visit> {
  return pressConfirm(browser, confirmPathIn(message), options);
}

// The accessibility check of the end-to-end run: axe-core (WCAG 2.0/2.1 A and AA rules plus its
// best practices) on what a page shows right now, in the light and the dark colour scheme.
//
// axe cannot run inside the app's own pages: its rule messages are compiled with `new Function`,
// which the app's Content-Security-Policy (no 'unsafe-eval') refuses, as it should. Loosening that
// policy, or letting the test browsers bypass it, would hide the very CSP breakages the flows are
// there to catch. So the audit copies the page instead: the DOM as it is now (after hydration,
// form errors and all), scripts removed, is served at the same URL to a browser context of its own
// that exists only for the audit, with `bypassCSP: true` and the colour scheme to check. The app's
// stylesheets load there from the app as usual, so colours, layout and visibility are the page's.
import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { NodeResult, Result, RunOptions } from "axe-core";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { RESULTS_DIR } from "./results.ts";

export const COLOR_SCHEMES = ["light", "dark"] as const;
export type ColorScheme = (typeof COLOR_SCHEMES)[number];

const AXE_SOURCE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

/** What "accessible" means here: the audit the issue asked for, no rule switched off. */
const AXE_OPTIONS: RunOptions = {
  runOnly: {
    type: "tag",
    values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"],
  },
  resultTypes: ["violations"],
};

/** Where each audited page state leaves a line (label, URL, schemes), for the run's record. */
const AUDITED_DIR = join(RESULTS_DIR, "accessibility");

export interface AccessibleOptions {
  /**
   * false: audit even if this label was audited before in this run. By default a label is audited
   * once per run (across test files), so flows can call this after every navigation cheaply.
   */
  once?: boolean;
  /** The colour schemes to audit (default: both). */
  schemes?: readonly ColorScheme[];
}

/**
 * Fails when axe finds any violation on the page as it is now, naming each rule with the elements
 * (selector and HTML) that break it. `label` names the page state ("sign-in with field errors");
 * each label is audited once per run unless `once: false`.
 */
export async function expectAccessible(
  page: Page,
  label: string,
  options: AccessibleOptions = {},
): Promise<void> {
  const schemes = options.schemes ?? COLOR_SCHEMES;
  if (options.once !== false && !claim(label)) return;
  const url = page.url();
  const html = await snapshot(page);
  const viewport = page.viewportSize() ?? { width: 1024, height: 800 };
  const browser = page.context().browser();
  if (!browser) throw new Error("expectAccessible needs a page of a launched browser");
  const failures = await exclusive(browser, () =>
    audit(browser, schemes, url, html, viewport, label),
  );
  record(label, url, schemes, failures.length === 0);
  if (failures.length > 0) {
    throw new Error(
      `Accessibility violations on "${label}" (${url}) ${failures.join("\n")}\n` +
        `(screenshots of the audited copy in ${AUDITED_DIR})`,
    );
  }
}

async function audit(
  browser: Browser,
  schemes: readonly ColorScheme[],
  url: string,
  html: string,
  viewport: { width: number; height: number },
  label: string,
): Promise<string[]> {
  const failures: string[] = [];
  const started = performance.now();
  const auditor = await auditPage(browser);
  await auditor.setViewportSize(viewport);
  await load(auditor, url, html);
  const timings = [`load ${Math.round(performance.now() - started)} ms`];
  for (const scheme of schemes) {
    const ran = performance.now();
    // Transitions are off in the audit context (reduced motion), so the new colours apply at once.
    await auditor.emulateMedia({ colorScheme: scheme });
    const results = await auditor.evaluate(
      (options) =>
        (window as unknown as { axe: { run: typeof import("axe-core").run } }).axe.run(
          document,
          options,
        ),
      AXE_OPTIONS,
    );
    timings.push(`${scheme} ${Math.round(performance.now() - ran)} ms`);
    const found = describeViolations(results.violations);
    if (found) {
      failures.push(`in the ${scheme} colour scheme:\n${found}`);
      await saveScreenshot(auditor, `${label} ${scheme}`);
    }
  }
  if (process.env.E2E_TIMING) console.log(`[a11y] ${label}: ${timings.join(", ")}`);
  return failures;
}

/** One audit at a time per browser: concurrent tests of a file share its audit page. */
const queues = new WeakMap<Browser, Promise<unknown>>();

function exclusive<T>(browser: Browser, task: () => Promise<T>): Promise<T> {
  const previous = queues.get(browser) ?? Promise.resolve();
  const next = previous.catch(() => {}).then(task);
  queues.set(browser, next);
  return next;
}

/** The page's DOM as HTML, without its scripts (nothing of the app runs in the audit). */
async function snapshot(page: Page): Promise<string> {
  return page.evaluate(() => {
    const root = document.documentElement.cloneNode(true) as HTMLElement;
    for (const element of root.querySelectorAll("script, link[rel='modulepreload']")) {
      element.remove();
    }
    return `<!DOCTYPE html>\n${root.outerHTML}`;
  });
}

/**
 * One audit page per browser (test file), in a context of its own: CSP bypassed so axe can run,
 * motion reduced so no transition is caught half-way, axe loaded into every document before
 * anything else. Its requests never reach the app's documents: the snapshot is served for the
 * page's URL, stylesheets come from the app (fetched once per file), the rest is refused.
 */
const auditors = new WeakMap<Browser, Promise<Page>>();
const pending = new WeakMap<Page, { url: string; html: string; served?: boolean }>();
const stylesheets = new Map<string, Promise<{ body: Buffer; contentType: string }>>();

function auditPage(browser: Browser): Promise<Page> {
  let page = auditors.get(browser);
  if (!page) {
    page = openAuditPage(browser);
    auditors.set(browser, page);
  }
  return page;
}

async function openAuditPage(browser: Browser): Promise<Page> {
  const context: BrowserContext = await browser.newContext({
    bypassCSP: true,
    reducedMotion: "reduce",
  });
  await context.addInitScript({ path: AXE_SOURCE });
  const page = await context.newPage();
  await page.route("**/*", async (route) => {
    const request = route.request();
    const snapshot = pending.get(page);
    if (request.isNavigationRequest() && snapshot && request.url() === snapshot.url) {
      snapshot.served = true;
      await route.fulfill({
        status: 200,
        contentType: "text/html; charset=utf-8",
        // As strict as it gets for the copy: no script of the page's may run (axe is injected by
        // the browser, which is what bypassCSP allows).
        headers: { "Content-Security-Policy": "script-src 'none'" },
        body: snapshot.html,
      });
      return;
    }
    if (request.resourceType() === "stylesheet") {
      let sheet = stylesheets.get(request.url());
      if (!sheet) {
        sheet = route.fetch().then(async (response) => {
          if (!response.ok()) throw new Error(`${request.url()}: ${response.status()}`);
          return {
            body: await response.body(),
            contentType: response.headers()["content-type"] ?? "text/css",
          };
        });
        stylesheets.set(request.url(), sheet);
      }
      const { body, contentType } = await sheet;
      await route.fulfill({ status: 200, contentType, body });
      return;
    }
    await route.abort();
  });
  return page;
}

async function load(auditor: Page, pageUrl: string, html: string) {
  // Without its fragment: going to "/x#main" from "/x" would only scroll the old copy.
  const url = pageUrl.replace(/#.*$/, "");
  const snapshot: { url: string; html: string; served?: boolean } = { url, html };
  pending.set(auditor, snapshot);
  try {
    await auditor.goto(url, { waitUntil: "load" });
  } finally {
    pending.delete(auditor);
  }
  if (!snapshot.served) throw new Error(`the audit page did not load the copy of ${url}`);
}

/** "color-contrast (serious): Elements must meet minimum color contrast ratio thresholds …" */
function describeViolations(violations: Result[]): string {
  return violations
    .map((violation) => {
      const nodes = violation.nodes.map(describeNode).join("\n");
      return `  ${violation.id} (${violation.impact}): ${violation.help}\n    ${violation.helpUrl}\n${nodes}`;
    })
    .join("\n");
}

function describeNode(node: NodeResult): string {
  const summary = (node.failureSummary ?? "")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !/^Fix (any|all)/.test(line))
    .join(" ");
  return `    - ${node.target.join(" ")}\n      ${node.html}\n      ${summary}`;
}

/** Cross-file bookkeeping: a label is claimed by creating its file (atomic across workers). */
function claim(label: string): boolean {
  mkdirSync(AUDITED_DIR, { recursive: true });
  try {
    writeFileSync(join(AUDITED_DIR, `${fileName(label)}.txt`), "", { flag: "wx" });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

function record(label: string, url: string, schemes: readonly ColorScheme[], passed: boolean) {
  mkdirSync(AUDITED_DIR, { recursive: true });
  const line = `${passed ? "passed" : "FAILED"}: ${label} (${url}) in ${schemes.join(" and ")}\n`;
  writeFileSync(join(AUDITED_DIR, `${fileName(label)}.txt`), line);
}

async function saveScreenshot(auditor: Page, name: string) {
  mkdirSync(AUDITED_DIR, { recursive: true });
  await auditor
    .screenshot({ path: join(AUDITED_DIR, `${fileName(name)}.png`), fullPage: true })
    .catch(() => {});
}

/** A readable file name that stays unique per label ("/notes?q" and "/notes-q" differ). */
function fileName(label: string): string {
  const slug = label
    .replace(/[^a-zA-Z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
    .slice(0, 100);
  return `${slug}-${createHash("sha256").update(label).digest("hex").slice(0, 8)}`;
}

// The `test` every end-to-end file uses: one headless Chromium per file, and per test a `browser`
// helper that opens fresh contexts (own cookies, JavaScript on or off). When a test fails, every
// page it opened is saved as a PNG under test-results/e2e/ with a .log of its console messages and
// page errors (CI keeps that folder as an artifact); E2E_SCREENSHOTS=all saves them for passing
// tests too. An uncaught error in a page fails the test.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { test as base, type TestContext } from "vitest";
import { launchChromium } from "./chromium.ts";
import { RESULTS_DIR } from "./results.ts";

export interface OpenOptions {
  /** false: a browser with JavaScript disabled (forms post natively, redirects are followed). */
  javaScriptEnabled?: boolean;
  /** The `prefers-color-scheme` the pages see (default: light). */
  colorScheme?: "light" | "dark";
  /** The `prefers-reduced-motion` the pages see (default: no-preference). */
  reducedMotion?: "reduce" | "no-preference";
  /** The window size (default: 1024×800). */
  viewport?: { width: number; height: number };
  /** A phone: the meta viewport is honoured and touch events are on (default: off). */
  isMobile?: boolean;
  hasTouch?: boolean;
}

export interface Browsers {
  /** A new context (a separate browser profile: its own cookies) with one page open. */
  open(options?: OpenOptions): Promise<Page>;
}

const javaScript = new WeakMap<BrowserContext, boolean>();

/** Whether the page's context runs scripts (set by `open`). */
export function runsJavaScript(page: Page): boolean {
  return javaScript.get(page.context()) ?? true;
}

export const test = base.extend<{ browser: Browsers; chromium: Browser }>({
  chromium: [
    // Vitest reads which fixtures a fixture needs from its first parameter: none here.
    async ({}, use) => {
      const browser = await launchChromium();
      await use(browser);
      await browser.close();
    },
    { scope: "file" },
  ],
  browser: async ({ chromium, task }, use) => {
    const contexts: BrowserContext[] = [];
    const logs = new Map<Page, string[]>();
    const pageErrors: string[] = [];
    const watch = (page: Page) => {
      const log: string[] = [];
      logs.set(page, log);
      page.on("console", (message) => log.push(`console.${message.type()}: ${message.text()}`));
      page.on("pageerror", (error) => {
        log.push(`pageerror: ${error.stack ?? error.message}`);
        pageErrors.push(`${page.url()}: ${error.message}`);
      });
      const started = Date.now();
      const at = () => `+${((Date.now() - started) / 1000).toFixed(1)}s`;
      page.on("request", (request) => {
        if (request.resourceType() === "fetch" || request.isNavigationRequest()) {
          log.push(`${at()} request: ${request.method()} ${request.url()}`);
        }
      });
      page.on("response", (response) => {
        const request = response.request();
        if (
          response.status() >= 400 ||
          request.resourceType() === "fetch" ||
          request.isNavigationRequest()
        ) {
          log.push(`${at()} response: ${response.status()} ${request.method()} ${response.url()}`);
        }
      });
      page.on("requestfailed", (request) =>
        log.push(
          `requestfailed: ${request.method()} ${request.url()} ${request.failure()?.errorText}`,
        ),
      );
    };
    await use({
      async open(options = {}) {
        const context = await chromium.newContext({
          javaScriptEnabled: options.javaScriptEnabled ?? true,
          viewport: options.viewport ?? { width: 1024, height: 800 },
          isMobile: options.isMobile ?? false,
          hasTouch: options.hasTouch ?? false,
          colorScheme: options.colorScheme ?? "light",
          reducedMotion: options.reducedMotion ?? "no-preference",
        });
        context.setDefaultTimeout(15_000);
        javaScript.set(context, options.javaScriptEnabled ?? true);
        context.on("page", watch);
        contexts.push(context);
        return context.newPage();
      },
    });
    const failed = task.result?.state === "fail";
    // An uncaught page error fails the test below: its evidence (with the error's stack) is kept.
    if (failed || pageErrors.length > 0 || process.env.E2E_SCREENSHOTS === "all") {
      await saveEvidence(fullName(task), contexts, logs);
    }
    await Promise.all(contexts.map((context) => context.close()));
    if (pageErrors.length > 0 && !failed) {
      throw new Error(`Uncaught errors in the page:\n${pageErrors.join("\n")}`);
    }
  },
});

/** "sign-in > sign-in (JavaScript off) > with a code from the email" (file, suites, test) */
function fullName(task: TestContext["task"]): string {
  const names: string[] = [];
  for (let t: { name: string; suite?: unknown } | undefined = task; t; t = t.suite as typeof t) {
    if (t.name && t !== task.file) names.unshift(t.name);
  }
  return [task.file.name.replace(/^.*\//, "").replace(/\.test\.ts$/, ""), ...names].join(" > ");
}

async function saveEvidence(
  testName: string,
  contexts: BrowserContext[],
  logs: Map<Page, string[]>,
) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const stem = testName
    .replace(/[^a-zA-Z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
    .slice(0, 140);
  let n = 0;
  for (const [c, context] of contexts.entries()) {
    for (const [p, page] of context.pages().entries()) {
      const name = `${stem}-context${c + 1}-page${p + 1}`;
      n++;
      try {
        await page.screenshot({ path: join(RESULTS_DIR, `${name}.png`), fullPage: true });
      } catch (error) {
        console.warn(`[e2e] no screenshot of ${page.url()}: ${(error as Error).message}`);
      }
      const log = [`url: ${page.url()}`, ...(logs.get(page) ?? [])];
      writeFileSync(join(RESULTS_DIR, `${name}.log`), `${log.join("\n")}\n`);
    }
  }
  if (n > 0 && process.env.E2E_SCREENSHOTS !== "all") {
    console.warn(`[e2e] ${n} screenshot(s) of "${testName}" in ${RESULTS_DIR}`);
  }
}

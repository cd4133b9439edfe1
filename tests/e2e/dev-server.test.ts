// `npm run dev` serves the app with `react-router dev` (Vite with the Cloudflare plugin, the Worker
// in workerd, React's development build). Every other test, here and in `npm test`, runs the
// production build, so this one checks that the development server works too: a sign-in through
// it, with JavaScript on (hydration, the client router) against the main stack's backend. It
// starts with `--force` (its dependencies optimised anew, as after an install), so that the first
// visit is the one that used to be reloaded.
import { type ChildProcess, spawn } from "node:child_process";
import { afterAll, beforeAll, expect } from "vitest";
import { ROOT, stopProcessGroup, TOOL_ENV } from "../support/preview.ts";
import { beforeHydration, freshUser, NOTE_PAGE, signInWithPassword } from "./support/flows.ts";
import { main, type Stack } from "./support/stacks.ts";
import { test } from "./support/test.ts";

const DEV_PORT = Number(process.env.E2E_APP_PORT ?? 8793) + 20;
const dev: Stack = {
  ...main,
  name: "dev",
  appPort: DEV_PORT,
  appUrl: `http://localhost:${DEV_PORT}`,
};

let server: ChildProcess;
let output = "";

beforeAll(async () => {
  server = spawn("react-router", ["dev", "--port", String(DEV_PORT), "--strictPort", "--force"], {
    cwd: ROOT,
    env: {
      ...TOOL_ENV,
      BROWSER: "none",
      NODE_ENV: "development",
      // the dev server gives the Worker its process environment: this stack's backend
      CLOUDFLARE_INCLUDE_PROCESS_ENV: "true",
      SUPABASE_URL: main.backendUrl,
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  server.stdout?.on("data", (chunk) => (output += chunk));
  server.stderr?.on("data", (chunk) => (output += chunk));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && server.exitCode === null) {
    try {
      // the first request also compiles the route modules
      const response = await fetch(`${dev.appUrl}/sign-in`, {
        signal: AbortSignal.timeout(30_000),
      });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`react-router dev did not serve ${dev.appUrl}:\n${output}`);
});
afterAll(() => stopProcessGroup(server));

// The browser's Supabase client loads once the page is idle. Vite met its library only then, and
// optimising it on that first visit made the dev server reload the page, losing what had been
// typed into it (react-router.config.ts: every route's libraries are pre-bundled at the start).
test("the first visit is not reloaded once the Supabase client loads", async ({ browser }) => {
  const page = await browser.open();
  let loads = 0;
  page.on("load", () => {
    loads++;
  });
  const client = page.waitForResponse((response) => response.url().includes("@supabase_ssr"), {
    timeout: 30_000,
  });
  await page.goto(`${dev.appUrl}/`);
  expect((await client).ok()).toBe(true);
  // a reload Vite forces comes as soon as the library is optimised, well within this
  await page.waitForTimeout(3000);
  expect(loads).toBe(1);
});

test("the development server signs a user in", async ({ browser }) => {
  const user = await freshUser(main);
  const page = await browser.open();
  await signInWithPassword(page, dev, user);
});

// React's development build hydrates in more than one task: the textarea's reset to the server's
// text (and the selectionchange it fires) can come before its ref puts the typed text back, which
// the production build, in one task, never showed.
test("the development server keeps what was typed into a note before it hydrated, caret and all", async ({
  browser,
}) => {
  const user = await freshUser(main, "early-dev");
  const page = await browser.open();
  await signInWithPassword(page, dev, user);
  await page.goto(`${dev.appUrl}/notes/new`);
  await page.fill("#field-title", "Typed early");
  await page.fill("#field-body", "The old body.");
  await page.getByRole("button", { name: "Create note", exact: true }).click();
  await page.waitForURL((url) => NOTE_PAGE.test(url.pathname));
  const path = new URL(page.url()).pathname;
  await beforeHydration(page, `${dev.appUrl}${path}/edit`, async () => {
    await page.fill("#field-body", "Typed before the scripts ran.");
    for (let i = 0; i < 4; i++) await page.keyboard.press("ArrowLeft");
  });
  await page.keyboard.type("X");
  expect(await page.inputValue("#field-body")).toBe("Typed before the scripts Xran.");
});

// Global setup of `npm run test:e2e`: builds the app once, starts one in-memory local backend per
// stack (tests/e2e/support/stacks.ts) and serves the built Worker with `wrangler dev` for each,
// exactly as `npm run preview` does, pointed at its backend with `--var SUPABASE_URL:…`.
// E2E_SKIP_BUILD=1 reuses an existing build/ (for quick reruns while writing tests).
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { loadConfig } from "../../../local/config.ts";
import { ROOT } from "../../../local/paths.ts";
import { createLocalBackend, type LocalBackend } from "../../../local/server.ts";
import { assertChromium } from "../support/chromium.ts";
import { STACKS, type Stack } from "../support/stacks.ts";

const STARTUP_TIMEOUT_MS = 60_000;
const ENV = {
  ...process.env,
  PATH: `${ROOT}node_modules/.bin:${process.env.PATH}`,
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
};

export default async function setup() {
  assertChromium();
  await Promise.all(STACKS.map((stack) => assertPortFree(stack.appUrl)));
  const started = performance.now();
  const backends: LocalBackend[] = [];
  const apps: ChildProcess[] = [];
  const teardown = async () => {
    for (const app of apps) stop(app);
    await Promise.all(backends.map((backend) => backend.close()));
  };
  try {
    await Promise.all([
      build(),
      ...STACKS.map(async (stack) => backends.push(await startBackend(stack))),
    ]);
    await Promise.all(STACKS.map((stack) => startApp(stack, apps)));
  } catch (error) {
    await teardown();
    throw error;
  }
  if (process.env.E2E_TIMING) {
    console.log(`[e2e] servers up in ${Math.round(performance.now() - started)} ms`);
  }
  return teardown;
}

async function build() {
  if (process.env.E2E_SKIP_BUILD && existsSync(`${ROOT}build/server/wrangler.json`)) return;
  // Vitest sets NODE_ENV=test, which would make Vite bundle React's development build.
  const { code, output } = await run("react-router", ["build"], { NODE_ENV: "production" });
  if (code !== 0) throw new Error(`npm run build failed (exit ${code}):\n${output}`);
}

/** config.toml with the app's origin allowed as a redirect target (email links come back to it). */
function startBackend(stack: Stack): Promise<LocalBackend> {
  const listed = loadConfig(`${ROOT}supabase/config.toml`).auth.additionalRedirectUrls;
  const origins = [stack.appUrl, `http://127.0.0.1:${stack.appPort}`];
  return createLocalBackend({
    port: stack.backendPort,
    host: "127.0.0.1",
    config: {
      auth: {
        siteUrl: stack.appUrl,
        additionalRedirectUrls: [...listed, ...origins.map((origin) => `${origin}/**`)],
        ...(stack.jwtExpiry ? { jwtExpiry: stack.jwtExpiry } : {}),
      },
    },
  });
}

async function startApp(stack: Stack, apps: ChildProcess[]) {
  const child = spawn(
    "wrangler",
    [
      "dev",
      "--port",
      String(stack.appPort),
      // Two `wrangler dev`s (and anyone's `npm run preview`) must not share the default 9229.
      "--inspector-port",
      String(stack.appPort + 1000),
      "--var",
      `SUPABASE_URL:${stack.backendUrl}`,
      "--show-interactive-dev-session=false",
    ],
    { cwd: ROOT, env: ENV, stdio: ["ignore", "pipe", "pipe"], detached: true },
  );
  apps.push(child);
  let output = "";
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    try {
      const response = await fetch(`${stack.appUrl}/`, { signal: AbortSignal.timeout(10_000) });
      const body = await response.text();
      if (response.ok && body.includes(stack.backendUrl)) return;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  throw new Error(`wrangler dev did not serve ${stack.appUrl} (${stack.name}):\n${output}`);
}

function run(
  command: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: ROOT,
      env: { ...ENV, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

async function assertPortFree(url: string) {
  try {
    await fetch(url, { signal: AbortSignal.timeout(1000) });
  } catch {
    return;
  }
  throw new Error(`${url} already answers; stop whatever runs there or set E2E_APP_PORT.`);
}

function stop(child: ChildProcess) {
  if (child.pid === undefined || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {
    child.kill("SIGTERM");
  }
}

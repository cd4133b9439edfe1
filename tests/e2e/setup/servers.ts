// Global setup of `npm run test:e2e`: builds the app once, starts one in-memory local backend per
// stack (tests/e2e/support/stacks.ts) and serves the built Worker with `wrangler dev` for each,
// exactly as `npm run preview` does, pointed at its backend with `--var SUPABASE_URL:…`.
// E2E_SKIP_BUILD=1 reuses an existing build/ (for quick reruns while writing tests).
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { loadConfig } from "../../../local/config.ts";
import { ROOT } from "../../../local/paths.ts";
import type { LocalBackendOptions } from "../../../local/server.ts";
import { PASSWORD, SECRET_KEY } from "../../support/backend.ts";
import { assertChromium } from "../support/chromium.ts";
import { RESULTS_DIR } from "../support/results.ts";
import { STACKS, type Stack } from "../support/stacks.ts";

const STARTUP_TIMEOUT_MS = 60_000;
const INVITE_TEMPLATE = fileURLToPath(new URL("../support/templates/invite.html", import.meta.url));
const ENV = {
  ...process.env,
  PATH: `${ROOT}node_modules/.bin:${process.env.PATH}`,
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
};

export default async function setup() {
  assertChromium();
  // Screenshots and logs are this run's only.
  rmSync(RESULTS_DIR, { recursive: true, force: true });
  // (A stack without a backend needs its backend port free too: nothing may answer there.)
  await Promise.all(
    STACKS.flatMap((stack) => [assertPortFree(stack.appUrl), assertPortFree(stack.backendUrl)]),
  );
  const started = performance.now();
  const backends: Worker[] = [];
  const apps: ChildProcess[] = [];
  const teardown = async () => {
    shuttingDown = true;
    await Promise.all([...apps.map(stop), ...backends.map(closeBackend)]);
  };
  try {
    const withBackend = STACKS.filter((stack) => stack.backend);
    await Promise.all([build(), ...withBackend.map((stack) => startBackend(stack, backends))]);
    await Promise.all(STACKS.map((stack) => startApp(stack, apps)));
    await Promise.all(withBackend.map(warmUp));
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

/**
 * config.toml with the app's origin allowed as a redirect target (email links come back to it).
 * The invite email uses a custom template whose link goes to the app's /auth/confirm with a token
 * hash (as the Supabase docs suggest for server-side verification); the other emails keep the
 * default links through the auth server's /verify.
 */
function startBackend(stack: Stack, backends: Worker[]): Promise<void> {
  const listed = loadConfig(`${ROOT}supabase/config.toml`).auth.additionalRedirectUrls;
  const origins = [stack.appUrl, `http://127.0.0.1:${stack.appPort}`];
  const options: LocalBackendOptions = {
    port: stack.backendPort,
    host: "127.0.0.1",
    config: {
      auth: {
        siteUrl: stack.appUrl,
        additionalRedirectUrls: [...listed, ...origins.map((origin) => `${origin}/**`)],
        // Generous like config.toml's [auth.rate_limit] (the real MFA limit is 15 a minute per IP).
        rateLimit: { mfaChallengeAndVerify: 1000 },
        ...(stack.jwtExpiry ? { jwtExpiry: stack.jwtExpiry } : {}),
        email: { templates: { invite: { contentPath: INVITE_TEMPLATE } } },
      },
    },
  };
  const thread = new Worker(new URL("./backend-thread.ts", import.meta.url), {
    workerData: options,
  });
  backends.push(thread);
  return new Promise((resolve, reject) => {
    thread.once("error", reject);
    thread.once("message", (message: { url?: string; error?: string }) => {
      if (message.url) resolve();
      else reject(new Error(`The ${stack.name} backend did not start: ${message.error}`));
    });
  });
}

async function closeBackend(thread: Worker) {
  const closed = new Promise((resolve) => thread.once("message", resolve));
  thread.postMessage("close");
  await Promise.race([closed, sleep(5000)]);
  await thread.terminate();
}

/**
 * `wrangler dev` for one stack, with local state of its own (`--persist-to`): two workerd
 * processes on the project's shared `.wrangler/state` fail at start or mid-run with
 * "SQLITE_BUSY: database is locked". Should it still exit while tests run, it is started again
 * (and said so loudly), so one dev-server crash does not fail the rest of the run.
 */
async function startApp(stack: Stack, apps: ChildProcess[], restarts = 0) {
  const registry = mkdtempSync(join(tmpdir(), `e2e-${stack.name}-registry-`));
  const state = mkdtempSync(join(tmpdir(), `e2e-${stack.name}-state-`));
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
      "--persist-to",
      state,
      "--show-interactive-dev-session=false",
    ],
    {
      cwd: ROOT,
      // A dev registry of its own: in wrangler's shared one (~/.config/.wrangler/registry) every
      // local `edge-notes` Worker on the machine announces itself under the same name.
      env: { ...ENV, WRANGLER_REGISTRY_PATH: registry },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    },
  );
  apps.push(child);
  // Its output goes to test-results/e2e/<stack>-server.log (kept by CI with the screenshots).
  mkdirSync(RESULTS_DIR, { recursive: true });
  const log = createWriteStream(`${RESULTS_DIR}/${stack.name}-server.log`, {
    flags: restarts ? "a" : "w",
  });
  let output = "";
  const record = (chunk: Buffer) => {
    output += chunk;
    log.write(chunk);
  };
  child.stdout?.on("data", record);
  child.stderr?.on("data", record);
  child.on("exit", (code, signal) => {
    rmSync(registry, { recursive: true, force: true });
    rmSync(state, { recursive: true, force: true });
    const line = `wrangler dev for ${stack.appUrl} exited (code ${code}, signal ${signal})`;
    log.end(`\n${line}\n`);
    if (stopping.has(child) || shuttingDown || restarts >= 5) return;
    console.error(`[e2e] ${line} while tests were running; starting it again`);
    startApp(stack, apps, restarts + 1).catch((error) => console.error(`[e2e] ${error}`));
  });
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    // Only this child's own server counts (not one still shutting down from an earlier run).
    if (!output.includes(`Ready on`)) {
      await sleep(100);
      continue;
    }
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

/**
 * Signs a throwaway user in through the app's form a few times, so the first test is not the one
 * that pays for cold code paths (Worker modules, PGlite's first queries, bcrypt, token signing)
 * against the app's 1.5 s backend deadline.
 */
async function warmUp(stack: Stack) {
  const email = `warm-up-${crypto.randomUUID()}@example.com`;
  const created = await fetch(`${stack.backendUrl}/auth/v1/admin/users`, {
    method: "POST",
    headers: { apikey: SECRET_KEY, "content-type": "application/json" },
    body: JSON.stringify({ email, password: PASSWORD, email_confirm: true }),
  });
  if (!created.ok) throw new Error(`warm-up user: ${created.status} ${await created.text()}`);
  for (let i = 0; i < 3; i++) {
    const response = await fetch(`${stack.appUrl}/sign-in`, {
      method: "POST",
      headers: { origin: stack.appUrl, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ intent: "password", email, password: PASSWORD }),
      redirect: "manual",
    });
    await response.arrayBuffer();
    if (response.status !== 303) throw new Error(`warm-up sign-in: ${response.status}`);
  }
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
  throw new Error(
    `${url} already answers; stop whatever runs there or set E2E_APP_PORT and E2E_BACKEND_PORT.`,
  );
}

/**
 * SIGTERM to the whole process group (wrangler and its workerd), SIGKILL for whatever is left after
 * 5 s; resolves once no process of the group remains, so the ports are free for the next run.
 */
const stopping = new WeakSet<ChildProcess>();
let shuttingDown = false;

async function stop(child: ChildProcess): Promise<void> {
  stopping.add(child);
  const group = child.pid;
  if (group === undefined) return;
  const signal = (name: NodeJS.Signals | 0) => {
    try {
      process.kill(-group, name);
      return true;
    } catch {
      return false; // ESRCH: the group is gone
    }
  };
  if (!signal("SIGTERM")) return;
  const started = Date.now();
  // (A zombie left for an init that does not reap would answer forever: stop looking after 8 s.)
  while (signal(0) && Date.now() - started < 8000) {
    if (Date.now() - started > 5000) signal("SIGKILL");
    await sleep(50);
  }
}

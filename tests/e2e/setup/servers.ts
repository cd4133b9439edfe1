// Global setup of `npm run test:e2e`: builds the app once, starts one in-memory local backend per
// stack (tests/e2e/support/stacks.ts) and serves the built Worker with `vite preview` for each,
// exactly as `npm run preview` does, pointed at its backend through its SUPABASE_URL variable.
// The build is made again only when the app's sources changed (buildAppIfChanged).
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { finished } from "node:stream/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { Worker } from "node:worker_threads";
import { type LocalBackendOptions, loadConfig } from "@edge-notes/supabase-local";
import {
  PASSWORD,
  QUICK_PASSWORD_HASH_COST,
  SECRET_KEY,
  TEST_RATE_LIMITS,
  TEST_RECOVERY_CODES,
} from "../../support/backend.ts";
import {
  assertPortFree,
  buildAppIfChanged,
  type Preview,
  ROOT,
  startPreview,
  waitForPreview,
} from "../../support/preview.ts";
import { assertChromium } from "../support/chromium.ts";
import { RESULTS_DIR } from "../support/results.ts";
import { STACKS, type Stack } from "../support/stacks.ts";

export default async function setup() {
  assertChromium();
  // Screenshots and logs are this run's only.
  rmSync(RESULTS_DIR, { recursive: true, force: true });
  // (A stack without a backend needs its backend port free too: nothing may answer there.)
  const hint = "set E2E_APP_PORT and E2E_BACKEND_PORT";
  await Promise.all(
    STACKS.flatMap((stack) => [
      assertPortFree(stack.appUrl, hint),
      assertPortFree(stack.backendUrl, hint),
    ]),
  );
  const started = performance.now();
  const backends: Worker[] = [];
  const apps: Preview[] = [];
  const teardown = async () => {
    shuttingDown = true;
    await Promise.all([...apps.map((app) => app.stop()), ...backends.map(closeBackend)]);
    await Promise.race([Promise.allSettled(logsWritten), sleep(2000, undefined, { ref: false })]);
    reportServerLogs();
  };
  try {
    const withBackend = STACKS.filter((stack) => stack.backend);
    await Promise.all([
      buildAppIfChanged(),
      ...withBackend.map((stack) => startBackend(stack, backends)),
    ]);
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

/** Every log file of the run, written out once its server has stopped (then reported). */
const logsWritten: Promise<void>[] = [];

function logFile(path: string, flags: "a" | "w") {
  const log = createWriteStream(path, { flags });
  logsWritten.push(finished(log));
  return log;
}

/** A request's log line (`GET /notes 200 OK (41ms)`), and vite preview's own start-up lines. */
const ROUTINE =
  /^(?:[A-Z]+ \S+ [1-4]\d\d |Using secrets|\s+➜|✨ Parsed|vite preview for .* \(code 143)/;

/**
 * What the Workers said beyond routine request lines (errors, warnings, 5xx answers), and what
 * the backends printed, at the end of the run: CI's output then shows why a page failed, not only
 * that it did. (Not for the stack without a backend, whose every backend call fails by design.)
 */
function reportServerLogs() {
  const logs = STACKS.filter((stack) => stack.backend).flatMap((stack) => [
    { name: `${stack.name} Worker`, file: `${RESULTS_DIR}/${stack.name}-server.log` },
    { name: `${stack.name} backend`, file: `${RESULTS_DIR}/${stack.name}-backend.log` },
  ]);
  for (const { name, file } of logs) {
    if (!existsSync(file)) continue;
    const lines = readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line.trim() && !ROUTINE.test(line));
    if (lines.length === 0) continue;
    const shown = lines.slice(-40);
    console.log(
      `[e2e] the ${name} logged (${lines.length} line${lines.length === 1 ? "" : "s"}` +
        `${lines.length > shown.length ? `, the last ${shown.length}` : ""}; all in ${file}):\n` +
        shown.map((line) => `  ${line}`).join("\n"),
    );
  }
}

/**
 * config.toml with the app as site_url and an allowed redirect target: the emails' links
 * (supabase/templates: the app's /auth/confirm with a token hash) and OAuth come back to it.
 */
function startBackend(stack: Stack, backends: Worker[]): Promise<void> {
  const { additionalRedirectUrls: listed, webauthn } = loadConfig({ projectDir: ROOT }).auth;
  const origins = [stack.appUrl, `http://127.0.0.1:${stack.appPort}`];
  const options: LocalBackendOptions = {
    projectDir: ROOT,
    port: stack.backendPort,
    host: "127.0.0.1",
    config: {
      auth: {
        siteUrl: stack.appUrl,
        additionalRedirectUrls: [...listed, ...origins.map((origin) => `${origin}/**`)],
        // Passkeys made on the app's page carry its origin (the RP ID stays config.toml's).
        webauthn: { rpOrigins: [...webauthn.rpOrigins, ...origins] },
        // Every browser of the run is 127.0.0.1 (config.toml has the hosted limits).
        rateLimit: TEST_RATE_LIMITS,
        // Quick password hashes, as the other test backends: at the real cost, sign-ins on a busy
        // machine could pass the app's 1.5 s backend deadline ("can't be reached right now").
        passwordHashCost: QUICK_PASSWORD_HASH_COST,
        // Recovery codes, a preview hosted Supabase lacks (off in local-backend.toml).
        mfa: { recoveryCodes: TEST_RECOVERY_CODES },
        ...(stack.jwtExpiry ? { jwtExpiry: stack.jwtExpiry } : {}),
      },
    },
  };
  // What the backend prints (its unexpected errors) goes to test-results/e2e/<stack>-backend.log.
  const thread = new Worker(new URL("../../support/backend-thread.ts", import.meta.url), {
    workerData: options,
    stdout: true,
    stderr: true,
  });
  mkdirSync(RESULTS_DIR, { recursive: true });
  const log = logFile(`${RESULTS_DIR}/${stack.name}-backend.log`, "w");
  thread.stdout.pipe(log, { end: false });
  thread.stderr.pipe(log, { end: false });
  thread.once("exit", () => log.end());
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
 * `vite preview` for one stack (tests/support/preview.ts: its own dev registry). Should it still
 * exit while tests run, it is started again (and said so loudly), so one server crash does not
 * fail the rest of the run.
 */
async function startApp(stack: Stack, apps: Preview[], restarts = 0) {
  // Its output goes to test-results/e2e/<stack>-server.log (kept by CI with the screenshots).
  mkdirSync(RESULTS_DIR, { recursive: true });
  const log = logFile(`${RESULTS_DIR}/${stack.name}-server.log`, restarts ? "a" : "w");
  const app = startPreview({
    port: stack.appPort,
    // (the local backend's well-known secret key, for the Worker's rate-limited Auth calls; and a
    // longer wait for each backend call than the deployed 1.5 s: with two browsers per test on two
    // cores, a backend answer here once took 1.6 s and the page was a 503. The stack without a
    // backend keeps the default: a refused connection fails at once either way.)
    vars: {
      SUPABASE_URL: stack.backendUrl,
      ...(stack.backend ? { SUPABASE_SECRET_KEY: SECRET_KEY, SUPABASE_TIMEOUT_MS: "10000" } : {}),
    },
    onOutput: (chunk) => log.write(chunk),
  });
  apps.push(app);
  app.child.on("exit", (code, signal) => {
    const line = `vite preview for ${stack.appUrl} exited (code ${code}, signal ${signal})`;
    log.end(`\n${line}\n`);
    if (app.stopping || shuttingDown || restarts >= 5) return;
    console.error(`[e2e] ${line} while tests were running; starting it again`);
    startApp(stack, apps, restarts + 1).catch((error) => console.error(`[e2e] ${error}`));
  });
  try {
    await waitForPreview(app, (response, body) => response.ok && body.includes(stack.backendUrl));
  } catch (error) {
    throw new Error(`${(error as Error).message} (${stack.name})`);
  }
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

let shuttingDown = false;

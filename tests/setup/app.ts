// Starts the app for the integration tests: the real Worker in workerd (Vite dev server with the
// Cloudflare plugin) on port 5179, using wrangler.toml's [env.test] so it talks to the test
// backend on 54329 that the root globalSetup (tests/setup/local-backend.ts) runs.
// TEST_APP_PORT and TEST_BACKEND_PORT move both, so two checkouts can run their suites at once.
import { type ChildProcess, spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";

export const APP_PORT = Number(process.env.TEST_APP_PORT ?? 5179);
const BACKEND_PORT = Number(process.env.TEST_BACKEND_PORT ?? 54329);
export const APP_URL = `http://localhost:${APP_PORT}`;
const STARTUP_TIMEOUT_MS = 60_000;

export default async function setup() {
  await assertPortFree();
  const child = spawn("react-router", ["dev", "--port", String(APP_PORT), "--strictPort"], {
    env: {
      ...process.env,
      PATH: `${process.cwd()}/node_modules/.bin:${process.env.PATH}`,
      CLOUDFLARE_ENV: "test",
      // Wrangler lets process variables override [env.test.vars]: the backend this run started.
      CLOUDFLARE_INCLUDE_PROCESS_ENV: "true",
      SUPABASE_URL: `http://127.0.0.1:${BACKEND_PORT}`,
      WRANGLER_SEND_METRICS: "false",
      CLOUDFLARE_CF_FETCH_ENABLED: "false",
      BROWSER: "none",
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));

  try {
    await waitUntilServing(child);
  } catch (error) {
    stop(child);
    throw new Error(`The app did not start on ${APP_URL}: ${(error as Error).message}\n${output}`);
  }
  return () => stop(child);
}

async function waitUntilServing(child: ChildProcess) {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`exited with code ${child.exitCode}`);
    try {
      // The first document request also compiles the route modules; warm it before tests time.
      const response = await fetch(`${APP_URL}/`, { signal: AbortSignal.timeout(20_000) });
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  throw new Error("timed out");
}

async function assertPortFree() {
  try {
    await fetch(APP_URL, { signal: AbortSignal.timeout(1000) });
  } catch {
    return;
  }
  throw new Error(`Port ${APP_PORT} is already in use; stop whatever runs there first.`);
}

function stop(child: ChildProcess) {
  if (child.pid === undefined || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {
    child.kill("SIGTERM");
  }
}

// Starts the app for the integration tests: `react-router build`, then the built Worker in workerd
// (tests/support/workerd.ts) on port 5179, the way it is deployed, talking to the test backend on
// 5178 that the root globalSetup (tests/setup/local-backend.ts) runs.
// TEST_APP_PORT and TEST_BACKEND_PORT move both, so two checkouts can run their suites at once.
//
// The build takes seconds of both cores, so it is not awaited here: the other projects' tests run
// meanwhile, and each integration test file waits for the app first (tests/integration/support/
// app-ready.ts), through a state file this setup names in the environment of the test workers.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SECRET_KEY } from "../support/backend.ts";
import type { WorkerServer } from "../support/workerd.ts";

export const APP_PORT = Number(process.env.TEST_APP_PORT ?? 5179);
const BACKEND_PORT = Number(process.env.TEST_BACKEND_PORT ?? 5178);
export const APP_URL = `http://localhost:${APP_PORT}`;

/** The file that says "ready", or why the app did not start. */
export const APP_STATE_VARIABLE = "TEST_APP_STATE_FILE";

export default async function setup() {
  // (imported here: the test files import this module for the constants above, and the build
  // tools and Miniflare would cost every test worker a second of loading)
  const { assertPortFree, buildAppIfChanged } = await import("../support/preview.ts");
  const { serveBuild } = await import("../support/workerd.ts");
  await assertPortFree(APP_URL, "set TEST_APP_PORT");
  const stateDir = mkdtempSync(join(tmpdir(), "test-app-"));
  const stateFile = join(stateDir, "state");
  process.env[APP_STATE_VARIABLE] = stateFile;
  const starting: Promise<WorkerServer | undefined> = (async () => {
    await buildAppIfChanged();
    return serveBuild({
      port: APP_PORT,
      // The local backend's well-known secret key, as `npm run dev` hands it (wrangler.toml
      // [secrets]): the Worker's rate-limited Auth calls carry it with the visitor's address.
      vars: { SUPABASE_URL: `http://127.0.0.1:${BACKEND_PORT}`, SUPABASE_SECRET_KEY: SECRET_KEY },
    });
  })().then(
    (server) => {
      writeFileSync(stateFile, "ready");
      return server;
    },
    (error: Error) => {
      writeFileSync(stateFile, `The app did not start on ${APP_URL}: ${error.message}`);
      return undefined;
    },
  );
  return async () => {
    await (await starting)?.stop();
    rmSync(stateDir, { recursive: true, force: true });
  };
}

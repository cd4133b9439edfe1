// Starts the app for the integration tests: `react-router build`, then the built Worker in workerd
// (tests/support/workerd.ts) on port 5179, the way it is deployed, talking to the test backend on
// 54329 that the root globalSetup (tests/setup/local-backend.ts) runs.
// TEST_APP_PORT and TEST_BACKEND_PORT move both, so two checkouts can run their suites at once.
import { assertPortFree, buildApp } from "../support/preview.ts";
import { serveBuild } from "../support/workerd.ts";

export const APP_PORT = Number(process.env.TEST_APP_PORT ?? 5179);
const BACKEND_PORT = Number(process.env.TEST_BACKEND_PORT ?? 54329);
export const APP_URL = `http://localhost:${APP_PORT}`;

export default async function setup() {
  await assertPortFree(APP_URL, "set TEST_APP_PORT");
  await buildApp();
  const server = await serveBuild({
    port: APP_PORT,
    vars: { SUPABASE_URL: `http://127.0.0.1:${BACKEND_PORT}` },
  });
  return () => server.stop();
}

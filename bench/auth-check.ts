// `npm run bench`: the product's speed promise about sessions, measured side by side in one run
// and printed as ratios (absolute times depend on the machine; the ratios are the claim):
//
//   1. supabase-js in Node: getClaims() (verified locally against the cached JWKS) vs getUser()
//      (a round trip to the auth server) on the same session.
//   2. The Worker (workerd, via the dev server) serving `/`: signed out, signed in (warm: claims
//      verified locally, no auth round trip) and signed in with an expired access token (one
//      refresh round trip, new cookies on the response).
//
// Rounds are interleaved (one sample of each kind per round) so that load on the machine hits
// every kind alike; each line reports the median.
export {};

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 60);
const BACKEND_PORT = 55690;
const APP_PORT = 55691;
process.env.TEST_BACKEND_PORT = String(BACKEND_PORT);
process.env.TEST_APP_PORT = String(APP_PORT);

// Imported after the ports are set: these modules read them when they load.
const { createLocalBackend } = await import("@edge-notes/supabase-local");
const { default: startApp, APP_URL } = await import("../tests/setup/app.ts");
const { signedInClient } = await import("../tests/support/backend.ts");
const { signedInUser, decodeSession, encodeSession } = await import(
  "../tests/integration/support/session.ts"
);
const { STORAGE_KEY } = await import("../tests/integration/support/app.ts");

const backend = await createLocalBackend({ port: BACKEND_PORT, host: "127.0.0.1" });
const stopApp = await startApp();

try {
  console.log(`\nSession checks, median of ${ROUNDS} interleaved rounds\n`);
  await clientChecks();
  await workerChecks();
} finally {
  await stopApp();
  await backend.close();
}

async function clientChecks() {
  const { client } = await signedInClient();
  await client.auth.getClaims(); // fetches and caches the JWKS once
  const local: number[] = [];
  const remote: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    local.push(await timed(async () => assertOk(await client.auth.getClaims())));
    remote.push(await timed(async () => assertOk(await client.auth.getUser())));
  }
  report("supabase-js getClaims() (local JWKS check)", local);
  report("supabase-js getUser() (auth round trip)", remote);
  console.log("");
  ratio("getUser / getClaims", remote, local);
  console.log("");
}

async function workerChecks() {
  const user = await signedInUser();
  let session = decodeSession(user.jar.get(STORAGE_KEY) ?? "");
  await page("/", user.cookie); // warm the isolate and its JWKS cache
  const signedOut: number[] = [];
  const warm: number[] = [];
  const refresh: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    signedOut.push((await page("/")).ms);

    const warmRequest = await page("/", user.cookie);
    if (authCalls(warmRequest.response) !== 0)
      throw new Error("warm request called the auth server");
    warm.push(warmRequest.ms);

    // The stored session says its access token has expired: the middleware refreshes it once.
    const expired = { ...session, expires_at: Math.floor(Date.now() / 1000) - 60 };
    const refreshed = await page("/", `${STORAGE_KEY}=${encodeSession(expired)}`);
    if (authCalls(refreshed.response) !== 1) throw new Error("expired session was not refreshed");
    refresh.push(refreshed.ms);
    session = decodeSession(newSessionCookie(refreshed.response));
  }
  report("Worker GET / signed out", signedOut);
  report("Worker GET / signed in, warm", warm);
  report("Worker GET / signed in, token refresh", refresh);
  console.log("");
  ratio("signed in warm / signed out", warm, signedOut);
  ratio("refresh / signed in warm", refresh, warm);
}

async function page(path: string, cookie?: string) {
  const started = performance.now();
  const response = await fetch(`${APP_URL}${path}`, { headers: cookie ? { Cookie: cookie } : {} });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`${path}: ${response.status}`);
  return { response, ms: performance.now() - started };
}

function authCalls(response: Response): number {
  const match = /auth=(\d+)/.exec(response.headers.get("Server-Timing") ?? "");
  return Number(match?.[1] ?? Number.NaN);
}

function newSessionCookie(response: Response): string {
  const cookie = response.headers.getSetCookie().find((line) => line.startsWith(`${STORAGE_KEY}=`));
  if (!cookie) throw new Error("the refresh set no session cookie");
  return cookie.slice(STORAGE_KEY.length + 1).split(";")[0] ?? "";
}

function assertOk(result: { error: unknown }) {
  if (result.error) throw result.error;
}

async function timed(run: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

function report(label: string, samples: number[]) {
  console.log(`  ${label.padEnd(44)} ${median(samples).toFixed(2).padStart(8)} ms`);
}

function ratio(label: string, slower: number[], faster: number[]) {
  console.log(`  ratio ${label.padEnd(38)} ${(median(slower) / median(faster)).toFixed(1)}x`);
}

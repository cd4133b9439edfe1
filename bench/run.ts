// `npm run bench`: how the shipped Worker behaves under load, and what it costs to ship, in one
// run, on this machine. It builds the app as `npm run preview` does (plus a bench-only variant,
// bench/get-user), serves both with `vite preview` (workerd) against an in-memory local backend,
// drives each arm with autocannon, then prints one report: the arms, their ratios, the session
// checks in Node, and the budgets with the figure measured beside each. It exits non-zero when an
// arm saw an error, a check failed or a budget was exceeded (BENCH_ALLOW=name,… downgrades named
// budgets to warnings; see budgets.ts).
//
//   BENCH_SECONDS      seconds per arm (default 10)
//   BENCH_CONNECTIONS  concurrent connections per arm (default 10)
//   BENCH_ROUNDS       rounds of the Node getClaims/getUser comparison (default 60)
//   BENCH_SKIP_BUILD=1 reuse build/ and bench/get-user/build/ from an earlier run
//   BENCH_ALLOW        budgets reported as warnings instead of failures (e.g. backend-start)
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import {
  assertPortFree,
  buildApp,
  type Preview,
  ROOT,
  run,
  startPreview,
  waitForPreview,
} from "../tests/support/preview.ts";
import {
  START_SETTINGS,
  startBackendThread,
  WASM_TIERING_BUDGET,
  WITHOUT_SESSION_CHECK,
} from "./backend.ts";
import { type Budget, judge, parseAllowed, type Verdict } from "./budgets.ts";
import {
  leftOutSupabaseClients,
  listFiles,
  measureFirstLoad,
  measureWorkerUpload,
} from "./bundle.ts";
import { clientChecks, median } from "./client-checks.ts";
import type { CookieJar } from "./cookies.ts";
import { BENCH_ONLY_MARKER } from "./get-user/marker.ts";
import { type ArmResult, authCalls, every, oneRefreshPerVisitor, runArm } from "./load.ts";
import { NEWEST_NOTE, NOTE_COUNT, userWithNotes, withExpiredAccessToken } from "./sessions.ts";
import { BURST, type BurstResult, burstLine, measureSignInBurst } from "./sign-in-burst.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 60);
const ALLOWED = parseAllowed(process.env.BENCH_ALLOW);

// Everything this bench starts listens on 29790-29799: below the ephemeral range (32768-60999 on
// Linux), from which outgoing connections (the bench's own among them) take their local ports, so
// that no socket can hold one of them at the moment a server needs it.
const BACKEND_PORT = 29790;
const APP_PORT = 29791; // the production build
const GET_USER_PORT = 29793; // the bench-only getUser() build
const START_PORT = 29795; // the backend-start measurements (and 29796, their Postgres port)
/** How many starts each backend-start budget takes the median of. */
const STARTS = 5;
const BACKEND_URL = `http://127.0.0.1:${BACKEND_PORT}`;
/** @supabase/ssr's cookie name for a project at 127.0.0.1 ("sb-<first host label>-auth-token"). */
const STORAGE_KEY = "sb-127-auth-token";

const GET_USER_PROJECT = "bench/get-user";

const BUDGETS = {
  workerUploadGzipKib: 250,
  firstLoadGzipKib: 100,
  backendFreshMs: 1000,
  backendWarmMs: 500,
};

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
/** The machine's 1-minute load average when the arms start and end: other work skews the figures. */
const load: number[] = [];

const checks: { label: string; ok: boolean; detail?: string }[] = [];
const budgets: Budget[] = [];

await assertPortFree(`http://localhost:${APP_PORT}`, "stop the earlier bench");
await assertPortFree(`http://localhost:${GET_USER_PORT}`, "stop the earlier bench");

// 1. What ships -------------------------------------------------------------------------------
if (process.env.BENCH_SKIP_BUILD && existsSync(`${ROOT}build/server/wrangler.json`)) {
  log("BENCH_SKIP_BUILD: reusing build/ and bench/get-user/build/");
} else {
  log("building the app (react-router build)…");
  await buildApp();
  log("building the bench-only getUser() variant (react-router build bench/get-user)…");
  await buildApp(GET_USER_PROJECT);
}
log("measuring the Worker upload (wrangler deploy --dry-run)…");
const upload = await measureWorkerUpload();
budgets.push({
  name: "worker-upload",
  label: "Worker upload, gzip (wrangler deploy --dry-run)",
  limit: BUDGETS.workerUploadGzipKib,
  actual: upload.gzipKib,
  unit: "KiB",
});
const shipped = [
  ...upload.files,
  ...listFiles(`${ROOT}build/client`).map((path) => ({ path, text: readFileSync(path, "utf8") })),
];
const benchBuild = listFiles(`${ROOT}${GET_USER_PROJECT}/build/server`).map((path) =>
  readFileSync(path, "utf8"),
);
checks.push(
  {
    label: "the getUser() arm runs a bench-only build (marker in bench/get-user/build)",
    ok: benchBuild.some((text) => text.includes(BENCH_ONLY_MARKER)),
  },
  {
    label: "no bench-only code in the production build (upload + build/client)",
    ok: !shipped.some((file) => file.text.includes(BENCH_ONLY_MARKER)),
  },
  {
    label: "no source maps in the Worker upload",
    ok: !upload.files.some((f) => f.path.endsWith(".map") || f.text.includes("sourceMappingURL")),
  },
  {
    label: "no local backend (PGlite) in the Worker upload",
    ok: !upload.files.some((file) => /pglite/i.test(file.text)),
  },
  {
    label: "no Realtime, Storage or Edge Functions client in the Worker upload (stand-ins instead)",
    ok: upload.files.every((file) => leftOutSupabaseClients(file.text).length === 0),
  },
);

// 2. The local backend's start ----------------------------------------------------------------
log(`timing local backend starts (${STARTS} fresh data directories, then ${STARTS} warm starts)…`);
// Each start is a new Node process, and a start's time varies by a fifth from one to the next on
// a shared machine: the budgets hold the median of several. A start counts as `npm run local`
// reports it ("started in … ms"): from loading the backend's modules to serving.
const freshStarts: StartTime[] = [];
const warmStarts: StartTime[] = [];
const pgliteStarts: number[] = [];
const dataDirs: string[] = [];
try {
  for (let i = 0; i < STARTS; i++) {
    const dataDir = mkdtempSync(join(tmpdir(), "bench-backend-"));
    dataDirs.push(dataDir);
    freshStarts.push(await timeBackendStart(dataDir));
  }
  // Each warm start beside PGlite alone opening the same directory (bench/pglite-start.js): the
  // floor under it, measured in the same minutes.
  for (let i = 0; i < STARTS; i++) {
    warmStarts.push(await timeBackendStart(dataDirs[0] as string));
    pgliteStarts.push(await timePgliteStart(dataDirs[0] as string));
  }
} finally {
  for (const dataDir of dataDirs) rmSync(dataDir, { recursive: true, force: true });
}
const fresh = medianStart(freshStarts);
const warm = medianStart(warmStarts);
const pgliteAlone = median(pgliteStarts);
budgets.push(
  {
    name: "backend-start",
    label: `local backend started, fresh data directory (median of ${STARTS})`,
    limit: BUDGETS.backendFreshMs,
    actual: fresh.totalMs,
    unit: "ms",
  },
  {
    name: "backend-start",
    label: `local backend started, warm (median of ${STARTS})`,
    limit: BUDGETS.backendWarmMs,
    actual: warm.totalMs,
    unit: "ms",
  },
);

// 3. Under load -------------------------------------------------------------------------------
log("starting the local backend and both builds in vite preview…");
const backend = await startBackendThread({ port: BACKEND_PORT, host: "127.0.0.1" });
const previews: Preview[] = [];
// The previews run in process groups of their own: Ctrl-C must stop them too.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, async () => {
    log(`${signal}: stopping the servers…`);
    await Promise.allSettled([...previews.map((preview) => preview.stop()), backend.close()]);
    process.exit(130);
  });
}
const arms: ArmResult[] = [];
const byKey: Record<string, ArmResult> = {};
let firstLoads: Awaited<ReturnType<typeof measureFirstLoad>>[] = [];
let node: Awaited<ReturnType<typeof clientChecks>> | undefined;
let burst: BurstResult | undefined;
try {
  const vars = { SUPABASE_URL: BACKEND_URL };
  const app = startPreview({ port: APP_PORT, vars });
  const getUserApp = startPreview({ port: GET_USER_PORT, vars, projectDir: GET_USER_PROJECT });
  previews.push(app, getUserApp);
  const servesBackend = (response: Response, body: string) =>
    response.ok && body.includes(BACKEND_URL);
  await Promise.all([
    waitForPreview(app, servesBackend),
    waitForPreview(getUserApp, servesBackend),
  ]);

  log("first-load JavaScript of / and /sign-in…");
  firstLoads = [await measureFirstLoad(app.url, "/"), await measureFirstLoad(app.url, "/sign-in")];
  for (const load of firstLoads) {
    budgets.push({
      name: "first-load-js",
      label: `first-load JS, GET ${load.page} (gzip)`,
      limit: BUDGETS.firstLoadGzipKib,
      actual: load.gzipKib,
      unit: "KiB",
    });
  }
  checks.push({
    label: "each page's first load has the framework chunk (vite.config.ts: FRAMEWORK_CHUNK)",
    ok: firstLoads.every((load) => load.frameworkGzipKib > 0),
  });
  budgets.push({
    name: "lazy-supabase",
    label: "Supabase client chunks loaded before idle (/ and /sign-in)",
    limit: 0,
    actual: firstLoads.flatMap((load) => load.scripts).filter((s) => s.supabase).length,
    unit: "",
  });

  log(`a user with ${NOTE_COUNT} notes and ${CONNECTIONS + 1} sessions…`);
  const user = await userWithNotes(BACKEND_URL);
  const signedIn = await user.signIn();
  const expired: CookieJar[] = [];
  for (let i = 0; i < CONNECTIONS; i++) {
    expired.push(withExpiredAccessToken(await user.signIn(), STORAGE_KEY));
  }

  log(`supabase-js in Node: getClaims() vs getUser(), ${ROUNDS} rounds…`);
  node = await clientChecks(BACKEND_URL, user.email, user.password, ROUNDS);

  log("warming both Workers up and checking what each arm will measure…");
  await warmUp([app.url, getUserApp.url], signedIn);
  await expectPage(app.url, "/", signedIn, { auth: "0", text: "Welcome back" });
  await expectPage(app.url, "/notes", signedIn, { auth: "0", text: NEWEST_NOTE });
  await expectPage(getUserApp.url, "/notes", signedIn, { auth: "1", text: NEWEST_NOTE });
  await expectPage(app.url, "/notes", undefined, { status: 302 });

  const options = { seconds: SECONDS, connections: CONNECTIONS };
  const plan = [
    {
      key: "static",
      label: "static asset: GET /favicon.svg",
      url: `${app.url}/favicon.svg`,
      expectAuth: every("-"),
    },
    { key: "signedOut", label: "GET / signed out", url: `${app.url}/`, expectAuth: every("0") },
    {
      key: "signedInHome",
      label: "GET / signed in (warm, 5 latest notes)",
      url: `${app.url}/`,
      visitors: [signedIn],
      expectAuth: every("0"),
    },
    {
      key: "signedInNotes",
      label: `GET /notes signed in (warm, ${NOTE_COUNT} notes)`,
      url: `${app.url}/notes`,
      visitors: [signedIn],
      expectAuth: every("0"),
    },
    {
      key: "refresh",
      label: "GET /notes, access token expired (1 refresh per visitor)",
      url: `${app.url}/notes`,
      visitors: expired,
      expectAuth: oneRefreshPerVisitor,
    },
    {
      key: "getUser",
      label: "GET /notes, getUser() every request (UI-library blocks)",
      url: `${getUserApp.url}/notes`,
      visitors: [signedIn],
      expectAuth: every("1"),
    },
  ];
  load.push(loadavg()[0] ?? 0);
  for (const arm of plan) {
    log(`${arm.label}: ${SECONDS} s, ${CONNECTIONS} connections…`);
    const result = await runArm(arm, options);
    arms.push(result);
    byKey[arm.key] = result;
  }
  log(`a data API request while ${BURST} sign-ins are answered (real hash cost), and idle…`);
  burst = await measureSignInBurst(BACKEND_URL);
  log("taking the ended-session check out of the backend…");
  await backend.exec(WITHOUT_SESSION_CHECK);
  await expectPage(app.url, "/notes", signedIn, { auth: "0", text: NEWEST_NOTE });
  const unchecked = {
    label: "GET /notes signed in, without the ended-session check",
    url: `${app.url}/notes`,
    visitors: [signedIn],
    expectAuth: every("0"),
  };
  log(`${unchecked.label}: ${SECONDS} s, ${CONNECTIONS} connections…`);
  byKey.unchecked = await runArm(unchecked, options);
  arms.push(byKey.unchecked);
  load.push(loadavg()[0] ?? 0);
} finally {
  await Promise.all(previews.map((preview) => preview.stop()));
  await backend.close();
}

// 4. The report -------------------------------------------------------------------------------
const verdicts = judge(budgets, ALLOWED);
printReport();
const failed =
  arms.some((arm) => arm.errors > 0 || arm.problems.length > 0) ||
  checks.some((check) => !check.ok) ||
  verdicts.some((verdict) => verdict.status === "over");
process.exitCode = failed ? 1 : 0;

function printReport() {
  const out: string[] = [];
  out.push("");
  out.push(
    `Edge Notes bench: ${availableParallelism()} cores (os.availableParallelism()), Node ${process.version}, load average ${load.map((l) => l.toFixed(1)).join(" -> ")} during the arms`,
  );
  out.push("");
  out.push(
    `Under load: the production build in workerd (vite preview), autocannon, ${CONNECTIONS} connections, ${SECONDS} s per arm`,
  );
  out.push(
    `  ${"arm".padEnd(58)} ${"req/s".padStart(8)} ${"p50 ms".padStart(7)} ${"p99 ms".padStart(7)} ${"errors".padStart(7)}`,
  );
  for (const arm of arms) {
    out.push(
      `  ${arm.label.padEnd(58)} ${arm.rps.toFixed(1).padStart(8)} ${fmt(arm.p50).padStart(7)} ${fmt(arm.p99).padStart(7)} ${String(arm.errors).padStart(7)}`,
    );
    for (const problem of arm.problems) out.push(`    ! ${problem}`);
  }
  const { signedOut, signedInHome, signedInNotes, getUser, unchecked } = byKey;
  out.push("");
  if (signedOut && signedInHome && signedInNotes && getUser) {
    out.push(ratio("signed in ÷ signed out, GET / (+ 1 data API query)", signedInHome, signedOut));
    out.push(ratio("signed in GET /notes ÷ signed out GET /", signedInNotes, signedOut));
    out.push(ratio("getUser() pattern ÷ ours, GET /notes", getUser, signedInNotes));
  }
  if (signedInNotes && unchecked) {
    out.push(ratio("ended-session check: GET /notes with ÷ without", signedInNotes, unchecked));
  }
  if (burst) out.push(burstLine(burst));
  if (node) {
    out.push("");
    out.push(`supabase-js in Node, median of ${node.rounds} interleaved rounds`);
    out.push(
      `  ${"getClaims() (local JWKS check)".padEnd(58)} ${node.getClaimsMs.toFixed(2).padStart(8)} ms`,
    );
    out.push(
      `  ${"getUser() (auth round trip)".padEnd(58)} ${node.getUserMs.toFixed(2).padStart(8)} ms`,
    );
    out.push(
      `  ${"ratio getUser / getClaims".padEnd(58)} ${(node.getUserMs / node.getClaimsMs).toFixed(1).padStart(8)}x`,
    );
  }
  out.push("");
  out.push("Budgets (BENCH_ALLOW=name,… reports a named budget as a warning)");
  out.push(`  ${"budget".padEnd(58)} ${"limit".padStart(10)} ${"now".padStart(10)}`);
  for (const verdict of verdicts) out.push(budgetLine(verdict));
  out.push(
    `  Worker upload: ${upload.kib.toFixed(1)} KiB raw; largest modules: ${upload.largest.map((m) => `${m.path} ${m.kib.toFixed(1)} KiB`).join(", ")}`,
  );
  out.push(
    `  local backend starts (ms, sorted): fresh ${sortedTotals(freshStarts)}; warm ${sortedTotals(warmStarts)}`,
  );
  out.push(
    `  PGlite alone opens the warm data directory in ${fmt(pgliteAlone)} ms (median of ${STARTS}, each beside a warm start; sorted: ${sorted(pgliteStarts)}): the warm start is ${(warm.totalMs / pgliteAlone).toFixed(2)}x that, the warm budget ${(BUDGETS.backendWarmMs / pgliteAlone).toFixed(2)}x`,
  );
  out.push(
    `  of the median starts: loading the modules fresh ${fmt(fresh.importMs)} ms, warm ${fmt(warm.importMs)} ms; createLocalBackend() until serving fresh ${fmt(fresh.readyMs)} ms, warm ${fmt(warm.readyMs)} ms`,
  );
  for (const load of firstLoads) {
    const supabase = load.scripts.some((script) => script.supabase);
    out.push(
      `  first load of ${load.page}: ${load.scripts.length} scripts, ${load.gzipKib.toFixed(1)} KiB gzip (${load.brotliKib.toFixed(1)} KiB brotli): the framework chunk (React, React DOM, React Router) ${load.frameworkGzipKib.toFixed(1)}, the app and Vite's and Rolldown's helpers ${(load.gzipKib - load.frameworkGzipKib).toFixed(1)}; Supabase client ${supabase ? "AMONG THEM" : "not among them (lazy)"}`,
    );
  }
  out.push("");
  out.push("Checks");
  for (const check of checks) {
    out.push(
      `  ${check.ok ? "ok  " : "FAIL"} ${check.label}${check.detail ? `: ${check.detail}` : ""}`,
    );
  }
  out.push("");
  const over = verdicts.filter((v) => v.status === "over").map((v) => v.label);
  const erroredArms = arms.filter((arm) => arm.errors > 0 || arm.problems.length > 0);
  if (over.length || erroredArms.length || checks.some((check) => !check.ok)) {
    out.push(
      `FAILED: ${[...over.map((label) => `over budget: ${label}`), ...erroredArms.map((arm) => `errors: ${arm.label}`), ...checks.filter((c) => !c.ok).map((c) => `check: ${c.label}`)].join("; ")}`,
    );
  } else {
    out.push("All arms error-free, all checks ok, every budget met or allowed.");
  }
  console.log(out.join("\n"));
}

function ratio(label: string, a: ArmResult, b: ArmResult): string {
  return `  ratio ${label.padEnd(52)} p50 ${(a.p50 / b.p50).toFixed(1)}x, req/s ${(a.rps / b.rps).toFixed(2)}x`;
}

function budgetLine(verdict: Verdict): string {
  const status =
    verdict.status === "ok"
      ? "ok"
      : verdict.status === "allowed"
        ? `OVER (warning: BENCH_ALLOW=${verdict.name})`
        : `OVER (budget "${verdict.name}")`;
  const unit = verdict.unit ? ` ${verdict.unit}` : "";
  return `  ${verdict.label.padEnd(58)} ${`${verdict.limit}${unit}`.padStart(10)} ${`${fmt(verdict.actual)}${unit}`.padStart(10)}  ${status}`;
}

function fmt(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

interface StartTime {
  importMs: number;
  readyMs: number;
  /** importMs + readyMs: what `npm run local` reports */
  totalMs: number;
}

/** The median start by totalMs (the middle one of an odd number). */
function medianStart(starts: StartTime[]): StartTime {
  const sorted = [...starts].sort((a, b) => a.totalMs - b.totalMs);
  return sorted[Math.floor(sorted.length / 2)] as StartTime;
}

function sortedTotals(starts: StartTime[]): string {
  return sorted(starts.map((start) => start.totalMs));
}

function sorted(ms: number[]): string {
  return [...ms]
    .sort((a, b) => a - b)
    .map(fmt)
    .join(", ");
}

/** One start of the local backend in a fresh Node process (bench/backend-start.ts). */
async function timeBackendStart(dir: string): Promise<StartTime> {
  // With Node's compile cache and the TypeScript cache, as the command line (supabase-local's bin)
  // and `npm run dev` load them.
  const { code, output } = await run(process.execPath, [
    "--import",
    "@edge-notes/supabase-local/compile-cache",
    "--import",
    "@edge-notes/supabase-local/typescript-cache",
    `${ROOT}bench/backend-start.ts`,
    dir,
    String(START_PORT),
  ]);
  const line = output.trim().split("\n").at(-1) ?? "";
  if (code !== 0 || !line.startsWith("{")) {
    throw new Error(`bench/backend-start.ts failed (exit ${code}):\n${output}`);
  }
  return JSON.parse(line) as StartTime;
}

/** PGlite alone opening `dir`, in a fresh Node process (bench/pglite-start.js): milliseconds. */
async function timePgliteStart(dir: string): Promise<number> {
  // With Node's compile cache too, as the backend's start has it: the floor is PGlite's own work.
  const { code, output } = await run(process.execPath, [
    `--wasm-tiering-budget=${WASM_TIERING_BUDGET}`,
    "--import",
    "@edge-notes/supabase-local/compile-cache",
    `${ROOT}bench/pglite-start.js`,
    dir,
    ...START_SETTINGS,
  ]);
  const line = output.trim().split("\n").at(-1) ?? "";
  if (code !== 0 || !line.startsWith("{")) {
    throw new Error(`bench/pglite-start.js failed (exit ${code}):\n${output}`);
  }
  return (JSON.parse(line) as { totalMs: number }).totalMs;
}

/** A few requests to each Worker's pages, so no arm pays for a cold isolate or JWKS fetch. */
async function warmUp(origins: string[], jar: CookieJar) {
  for (const origin of origins) {
    for (let i = 0; i < 20; i++) {
      for (const [path, cookie] of [
        ["/", undefined],
        ["/", jar.header()],
        ["/notes", jar.header()],
      ] as const) {
        const response = await fetch(`${origin}${path}`, {
          headers: cookie ? { cookie } : {},
          redirect: "manual",
        });
        await response.arrayBuffer();
      }
    }
  }
}

/** Fails the run before any load when a page does not answer as the arm assumes. */
async function expectPage(
  origin: string,
  path: string,
  jar: CookieJar | undefined,
  expected: { status?: number; auth?: string; text?: string },
) {
  const response = await fetch(`${origin}${path}`, {
    headers: jar ? { cookie: jar.header() } : {},
    redirect: "manual",
  });
  const body = await response.text();
  const auth = authCalls(response.headers.get("server-timing") ?? undefined);
  const problems = [
    response.status !== (expected.status ?? 200) ? `status ${response.status}` : "",
    expected.auth !== undefined && auth !== expected.auth ? `auth=${auth}` : "",
    expected.text && !body.includes(expected.text) ? `no "${expected.text}" on the page` : "",
  ].filter(Boolean);
  checks.push({
    label: `${origin}${path} ${jar ? "signed in" : "signed out"}: ${expected.status ?? 200}${expected.auth ? `, auth=${expected.auth}` : ""}${expected.text ? `, shows "${expected.text}"` : ""}`,
    ok: problems.length === 0,
    detail: problems.join(", "),
  });
  if (problems.length) throw new Error(`${origin}${path}: ${problems.join(", ")}`);
}

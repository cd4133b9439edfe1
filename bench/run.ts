// `npm run bench`: how the shipped Worker behaves under load, and what it costs to ship, in one
// run, on this machine. It builds the app as `npm run preview` does (plus a bench-only variant,
// bench/get-user), serves both with `vite preview` (workerd) against an in-memory local backend
// reached through a delay that stands for the edge's distance from the Supabase region
// (rtt-proxy.ts), and prints one report: the arms and their ratios, each ratio's median over
// interleaved rounds with its lowest and highest round (rounds.ts, which says how to add an arm),
// the Worker's CPU per request, every signed-in page's sequential round trips (critical-path.ts),
// the session checks in Node, then the Realtime and Storage benches on backends of their own
// (realtime.ts, storage.ts, on the same rounds), and the budgets with the figure measured beside
// each. It exits
// non-zero when an arm saw an error, a check failed or a budget was missed (BENCH_ALLOW=name,…
// downgrades named budgets to warnings; see budgets.ts).
//
//   BENCH_ROUNDS       interleaved rounds of every arm (default 5)
//   BENCH_SECONDS      seconds per arm and round (default 3)
//   BENCH_PAIRED_ROUNDS  rounds of each paired comparison (ours vs getUser() on loopback, and the
//                      Worker CPU budget's /notes vs /; default 9, after 1 discarded warm-up
//                      round; BENCH_SECONDS of each arm in 1 s slices)
//   BENCH_CONNECTIONS  concurrent connections of the arms that load the Worker (default 10)
//   BENCH_RTT_MS       the round trip added between the Worker and the backend (default 40)
//   BENCH_RTT_CONNECTIONS  connections of the arms with that delay (default 1: one visitor's wait)
//   BENCH_PORT         first of the 6 consecutive ports the bench listens on (default 29790)
//   BENCH_NODE_ROUNDS  rounds of the Node getClaims/getUser comparison (default 60)
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
import { START_SETTINGS, startBackendThread, WASM_TIERING_BUDGET } from "./backend.ts";
import { type BenchSection, type Budget, budgetLine, fmt, judge, parseAllowed } from "./budgets.ts";
import {
  BROTLI_QUALITY,
  type FirstLoad,
  leftOutSupabaseClients,
  listFiles,
  measureFirstLoad,
  measureWorkerUpload,
} from "./bundle.ts";
import { type ClientChecks, clientChecks } from "./client-checks.ts";
import type { CookieJar } from "./cookies.ts";
import { measurePages, type PagePath, type PageTrips } from "./critical-path.ts";
import { BENCH_ONLY_MARKER } from "./get-user/marker.ts";
import { authCalls, every, httpArm } from "./load.ts";
import { realtimeBench } from "./realtime.ts";
import {
  type Arm,
  armSpread,
  formatSpread,
  type Measurement,
  median,
  type Ratio,
  type RoundResults,
  ratioSpread,
  runPaired,
  runRounds,
  type Spread,
  spread,
  spreadCell,
} from "./rounds.ts";
import { startRttProxy } from "./rtt-proxy.ts";
import { NEWEST_NOTE, NOTE_COUNT, userWithNotes, withExpiredAccessToken } from "./sessions.ts";
import { BURST, type BurstResult, burstLine, measureSignInBurst } from "./sign-in-burst.ts";
import { storageBench } from "./storage.ts";
import { cpuSeconds, workerdInGroup } from "./workerd-cpu.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const RTT_MS = Number(process.env.BENCH_RTT_MS ?? 40);
// The arms with the delay measure what one visitor waits, not what the machine can serve: at 10
// connections on two cores the queue in front of the Worker is most of a response's time, and it
// would hide the round trips the delay adds.
const RTT_CONNECTIONS = Number(process.env.BENCH_RTT_CONNECTIONS ?? 1);
/** The paired comparisons: with the getUser() pattern, and the Worker CPU budget's (runPaired). */
const PAIRED_ROUNDS = Number(process.env.BENCH_PAIRED_ROUNDS ?? 9);
const PAIRED_SLICE = 1;
const PAIRED_WARM_UP = 1;
const NODE_ROUNDS = Number(process.env.BENCH_NODE_ROUNDS ?? 60);
const ALLOWED = parseAllowed(process.env.BENCH_ALLOW);

// Everything this bench starts listens on BENCH_PORT and the 5 ports after it (default 29790-29795):
// below the ephemeral range (32768-60999 on Linux), from which outgoing connections (the bench's
// own among them) take their local ports, so that no socket can hold one of them at the moment a
// server needs it. Two benches at once need two BENCH_PORTs.
const FIRST_PORT = Number(process.env.BENCH_PORT ?? 29790);
const BACKEND_PORT = FIRST_PORT;
const PROXY_PORT = FIRST_PORT + 1; // the Worker's way to the backend, BENCH_RTT_MS away
const APP_PORT = FIRST_PORT + 2; // the production build
const GET_USER_PORT = FIRST_PORT + 3; // the bench-only getUser() build
const START_PORT = FIRST_PORT + 4; // the backend-start measurements (and + 5, their Postgres port)
/** Fresh starts (a warning only), and warm starts each paired with PGlite's own open (the budget). */
const FRESH_STARTS = 3;
const STARTS = 7;
const BACKEND_URL = `http://127.0.0.1:${BACKEND_PORT}`;
/** @supabase/ssr's cookie name for a project at 127.0.0.1 ("sb-<first host label>-auth-token"). */
const STORAGE_KEY = "sb-127-auth-token";

const GET_USER_PROJECT = "bench/get-user";

const BUDGETS = {
  workerUploadGzipKib: 250,
  /** Per public page, at BROTLI_QUALITY, every script of its first load. */
  firstLoadBrotliKib: 100,
  /** Per public page, everything but the framework chunk (React, React DOM, React Router). */
  firstLoadOwnGzipKib: 15,
  firstLoadGzipKib: 120,
  /** GET /notes signed in ÷ GET / signed out, the Worker's CPU per request (median of rounds). */
  workerCpuRatio: 1.5,
  /** GET /notes signed in, CPU per request (warning only: it moves with the machine). */
  notesCpuMs: 5,
  /** Warm start ÷ PGlite alone opening the same directory (median of the pairs' ratios). */
  backendWarmRatio: 2,
  /** Warnings only. */
  backendFreshMs: 1000,
  backendWarmMs: 500,
};

/** Every signed-in page, with the note id filled in once the bench user has notes. */
const SIGNED_IN_PAGES = (noteId: string): PagePath[] => [
  { path: "/" },
  { path: "/notes" },
  { path: "/notes?view=archived" },
  { path: "/notes/new" },
  { path: `/notes/${noteId}` },
  { path: `/notes/${noteId}/edit` },
  { path: `/notes/${noteId}/delete` },
  { path: "/account" },
  { path: "/account/email" },
  { path: "/account/password" },
  { path: "/account/security" },
  { path: "/account/identities" },
  { path: "/account/sessions" },
  { path: "/account/activity" },
];

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
/** The machine's 1-minute load average when the arms start and end: other work skews the figures. */
const load: number[] = [];

const checks: { label: string; ok: boolean; detail?: string }[] = [];
const budgets: Budget[] = [];

await assertPortFree(`http://localhost:${APP_PORT}`, "stop the earlier bench or set BENCH_PORT");
await assertPortFree(
  `http://localhost:${GET_USER_PORT}`,
  "stop the earlier bench or set BENCH_PORT",
);

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
log(
  `timing local backend starts (${FRESH_STARTS} fresh data directories, then ${STARTS} warm starts, each beside PGlite's own open)…`,
);
// Each start is a new Node process, and a start's time varies by a fifth from one to the next on
// a shared machine: the figures are medians of several. A start counts as `npm run local` reports
// it ("started in … ms"): from loading the backend's modules to serving. Each warm start is paired
// with PGlite alone opening the same directory (bench/pglite-start.js), the floor under it, and
// the budget is on the pair's ratio: a busy minute slows both of a pair alike.
const freshStarts: StartTime[] = [];
const warmStarts: StartTime[] = [];
const pgliteStarts: number[] = [];
const dataDirs: string[] = [];
try {
  for (let i = 0; i < FRESH_STARTS; i++) {
    const dataDir = mkdtempSync(join(tmpdir(), "bench-backend-"));
    dataDirs.push(dataDir);
    freshStarts.push(await timeBackendStart(dataDir));
  }
  for (let i = 0; i < STARTS; i++) {
    // each goes first in every other pair
    if (i % 2) pgliteStarts.push(await timePgliteStart(dataDirs[0] as string));
    warmStarts.push(await timeBackendStart(dataDirs[0] as string));
    if (!(i % 2)) pgliteStarts.push(await timePgliteStart(dataDirs[0] as string));
  }
} finally {
  for (const dataDir of dataDirs) rmSync(dataDir, { recursive: true, force: true });
}
const fresh = medianStart(freshStarts);
const warm = medianStart(warmStarts);
const pgliteAlone = median(pgliteStarts);
const warmRatio = spread(warmStarts.map((start, i) => start.totalMs / (pgliteStarts[i] as number)));
budgets.push(
  {
    name: "backend-start",
    label: `local backend warm start ÷ PGlite's open of the same directory (median of ${STARTS} pairs)`,
    limit: BUDGETS.backendWarmRatio,
    actual: warmRatio.median,
    unit: "x",
  },
  {
    name: "backend-start",
    warnOnly: true,
    label: `local backend started, fresh data directory (median of ${FRESH_STARTS})`,
    limit: BUDGETS.backendFreshMs,
    actual: fresh.totalMs,
    unit: "ms",
  },
  {
    name: "backend-start",
    warnOnly: true,
    label: `local backend started, warm (median of ${STARTS})`,
    limit: BUDGETS.backendWarmMs,
    actual: warm.totalMs,
    unit: "ms",
  },
);

// 3. Under load -------------------------------------------------------------------------------
log(`starting the local backend, the ${RTT_MS} ms proxy and both builds in vite preview…`);
const backend = await startBackendThread({ port: BACKEND_PORT, host: "127.0.0.1" });
const proxy = await startRttProxy({ host: "127.0.0.1", port: PROXY_PORT, target: BACKEND_URL });
const previews: Preview[] = [];
// The previews run in process groups of their own: Ctrl-C must stop them too.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, async () => {
    log(`${signal}: stopping the servers…`);
    await Promise.allSettled([
      ...previews.map((preview) => preview.stop()),
      proxy.close(),
      backend.close(),
    ]);
    process.exit(130);
  });
}
let results: RoundResults = new Map();
let arms: Arm[] = [];
const armProblems = new Map<string, string[]>();
let firstLoads: FirstLoad[] = [];
let pages: PageTrips[] = [];
let node: ClientChecks | undefined;
let burst: BurstResult | undefined;
try {
  // The Worker reaches the backend through the proxy only; the bench's own set-up goes direct.
  const vars = { SUPABASE_URL: proxy.url };
  const app = startPreview({ port: APP_PORT, vars });
  const getUserApp = startPreview({ port: GET_USER_PORT, vars, projectDir: GET_USER_PROJECT });
  previews.push(app, getUserApp);
  const servesBackend = (response: Response, body: string) =>
    response.ok && body.includes(proxy.url);
  await Promise.all([
    waitForPreview(app, servesBackend),
    waitForPreview(getUserApp, servesBackend),
  ]);
  const workerd = (preview: Preview) => {
    const pid = preview.child.pid === undefined ? undefined : workerdInGroup(preview.child.pid);
    if (!pid) throw new Error(`no workerd process in the group of ${preview.url}`);
    return () => cpuSeconds(pid);
  };
  const appCpu = workerd(app);
  const getUserCpu = workerd(getUserApp);

  log("first-load JavaScript of / and /sign-in…");
  firstLoads = [await measureFirstLoad(app.url, "/"), await measureFirstLoad(app.url, "/sign-in")];
  for (const first of firstLoads) {
    budgets.push(
      {
        name: "first-load-js",
        label: `first-load JS, GET ${first.page}, brotli quality ${BROTLI_QUALITY}`,
        limit: BUDGETS.firstLoadBrotliKib,
        actual: first.brotliKib,
        unit: "KiB",
      },
      {
        name: "first-load-js",
        label: `first-load JS, GET ${first.page}, the app's own share (gzip)`,
        limit: BUDGETS.firstLoadOwnGzipKib,
        actual: first.ownGzipKib,
        unit: "KiB",
      },
      {
        name: "first-load-js",
        label: `first-load JS, GET ${first.page}, all of it (gzip)`,
        limit: BUDGETS.firstLoadGzipKib,
        actual: first.gzipKib,
        unit: "KiB",
      },
    );
  }
  checks.push({
    label: "each page's first load has the framework chunk (vite.config.ts: FRAMEWORK_CHUNK)",
    ok: firstLoads.every((first) => first.frameworkGzipKib > 0),
  });
  budgets.push({
    name: "lazy-supabase",
    label: "Supabase client chunks loaded before idle (/ and /sign-in)",
    limit: 0,
    actual: firstLoads.flatMap((first) => first.scripts).filter((s) => s.supabase).length,
    unit: "",
  });

  log(`a user with ${NOTE_COUNT} notes and 4 sessions…`);
  const user = await userWithNotes(BACKEND_URL);
  const signedIn = await user.signIn();
  const expired: CookieJar[] = [];
  for (let i = 0; i < 3; i++) {
    expired.push(withExpiredAccessToken(await user.signIn(), STORAGE_KEY));
  }

  log(`supabase-js in Node: getClaims() vs getUser(), ${NODE_ROUNDS} rounds…`);
  node = await clientChecks(BACKEND_URL, user.email, user.password, NODE_ROUNDS);

  log("warming both Workers up and checking what each arm will measure…");
  await proxy.setDelay(0);
  await warmUp([app.url, getUserApp.url], signedIn);
  await expectPage(app.url, "/", signedIn, { auth: "0", text: "Welcome back" });
  await expectPage(app.url, "/notes", signedIn, { auth: "0", text: NEWEST_NOTE });
  await expectPage(getUserApp.url, "/notes", signedIn, { auth: "1", text: NEWEST_NOTE });
  await expectPage(app.url, "/notes", undefined, { status: 302 });
  await expectRefreshOnce(app.url, expired);

  log(`every signed-in page's round trips, ${RTT_MS} ms away from the backend…`);
  await proxy.setDelay(RTT_MS);
  const noteId = await firstNoteId(app.url, signedIn);
  pages = await measurePages(app.url, SIGNED_IN_PAGES(noteId), signedIn.header());
  budgets.push({
    name: "critical-path",
    label: `signed-in pages over their round-trip budget (of ${pages.length})`,
    limit: 0,
    actual: pages.filter((page) => page.problems.length > 0).length,
    unit: "",
  });

  const atRtt = () => proxy.setDelay(RTT_MS);
  const direct = () => proxy.setDelay(0);
  const common = { connections: CONNECTIONS };
  const visitor = { connections: RTT_CONNECTIONS };
  // The arms the ratios compare, each in the general rounds and in a paired comparison.
  const signedOutArm = (key: string, label: string) =>
    httpArm({
      ...common,
      key,
      label,
      url: `${app.url}/`,
      expectAuth: every("0"),
      cpuSeconds: appCpu,
      setUp: direct,
    });
  const notesArm = (key: string, label: string) =>
    httpArm({
      ...common,
      key,
      label,
      url: `${app.url}/notes`,
      visitors: [signedIn],
      expectAuth: every("0"),
      cpuSeconds: appCpu,
      setUp: direct,
    });
  arms = [
    httpArm({
      ...common,
      key: "static",
      label: "static asset: GET /favicon.svg",
      url: `${app.url}/favicon.svg`,
      expectAuth: every("-"),
      setUp: direct,
    }),
    signedOutArm("signedOut", "GET / signed out"),
    httpArm({
      ...common,
      key: "signedInHome",
      label: "GET / signed in (warm, 5 latest notes)",
      url: `${app.url}/`,
      visitors: [signedIn],
      expectAuth: every("0"),
      cpuSeconds: appCpu,
      setUp: direct,
    }),
    notesArm("notes", `GET /notes signed in (warm, ${NOTE_COUNT} notes)`),
    // For scale only, in no ratio: its p50 is a few milliseconds, and autocannon counts latency
    // in whole ones, so one millisecond more or less moved a ratio to it by 15% between runs.
    httpArm({
      ...visitor,
      key: "signedOutRtt",
      label: `GET / signed out, backend ${RTT_MS} ms away, ${RTT_CONNECTIONS} visitor`,
      url: `${app.url}/`,
      expectAuth: every("0"),
      setUp: atRtt,
    }),
    httpArm({
      ...visitor,
      key: "notesRtt",
      label: `GET /notes signed in, backend ${RTT_MS} ms away, ${RTT_CONNECTIONS} visitor`,
      url: `${app.url}/notes`,
      visitors: [signedIn],
      expectAuth: every("0"),
      setUp: atRtt,
    }),
    httpArm({
      ...visitor,
      key: "getUserRtt",
      label: `GET /notes, getUser() every request, backend ${RTT_MS} ms away, ${RTT_CONNECTIONS} visitor`,
      url: `${getUserApp.url}/notes`,
      visitors: [signedIn],
      expectAuth: every("1"),
      setUp: atRtt,
    }),
  ];
  // The two arms of the loopback comparison with the getUser() pattern, taking turns in slices
  // within each round (rounds.ts, runPaired): their req/s and CPU ratios moved by a fifth between
  // two quiet runs when each arm had one 3 s turn per round.
  const paired: [Arm, Arm] = [
    notesArm("notesPaired", "GET /notes signed in, paired with the next arm"),
    httpArm({
      ...common,
      key: "getUser",
      label: "GET /notes, getUser() every request (UI-library blocks)",
      url: `${getUserApp.url}/notes`,
      visitors: [signedIn],
      expectAuth: every("1"),
      cpuSeconds: getUserCpu,
      setUp: direct,
    }),
  ];
  // The Worker CPU budget's two arms, paired the same way: in one 3 s turn per round, `/` signed
  // out ranged 3.2–6.2 ms a request within one run on this VM (2026-11-29), and the budget's
  // ratio moved from 2.19 to 1.60 between two runs of one commit.
  const cpuPaired: [Arm, Arm] = [
    notesArm(
      "notesCpuPaired",
      `GET /notes signed in (warm, ${NOTE_COUNT} notes), paired with the next arm`,
    ),
    signedOutArm("signedOutCpuPaired", "GET / signed out, paired"),
  ];
  load.push(loadavg()[0] ?? 0);
  log(
    `${arms.length} arms × ${ROUNDS} rounds × ${SECONDS} s, ${CONNECTIONS} connections, in turn…`,
  );
  results = await runRounds(arms, { rounds: ROUNDS, seconds: SECONDS }, (arm, round, m) => {
    log(
      `  round ${round + 1}: ${arm.label}: ${m.rps.toFixed(0)} req/s, p50 ${m.p50} ms${m.cpuMs === undefined ? "" : `, CPU ${m.cpuMs.toFixed(2)} ms/request`}`,
    );
    if (m.problems.length)
      armProblems.set(arm.label, [...(armProblems.get(arm.label) ?? []), ...m.problems]);
  });
  for (const [pair, what] of [
    [paired, "ours and the getUser() pattern on loopback"],
    [cpuPaired, "the Worker CPU budget's arms, /notes signed in and / signed out"],
  ] as const) {
    log(
      `${what}, paired: ${PAIRED_WARM_UP} warm-up + ${PAIRED_ROUNDS} rounds, ${SECONDS} s each in ${PAIRED_SLICE} s slices, taking turns…`,
    );
    const pairedResults = await runPaired(
      pair,
      { rounds: PAIRED_ROUNDS, seconds: SECONDS, slice: PAIRED_SLICE, warmUp: PAIRED_WARM_UP },
      (round, measurements) => {
        pair.forEach((arm, i) => {
          const m = measurements[i] as Measurement;
          log(
            `  paired round ${round + 1}: ${arm.label}: ${m.rps.toFixed(0)} req/s, p50 ${m.p50} ms, CPU ${m.cpuMs?.toFixed(2)} ms/request`,
          );
          if (m.problems.length)
            armProblems.set(arm.label, [...(armProblems.get(arm.label) ?? []), ...m.problems]);
        });
      },
    );
    for (const [key, measurements] of pairedResults) results.set(key, measurements);
    arms.push(...pair);
  }
  load.push(loadavg()[0] ?? 0);
  await proxy.setDelay(0);

  log(`a data API request while ${BURST} sign-ins are answered (real hash cost), and idle…`);
  burst = await measureSignInBurst(BACKEND_URL);
} finally {
  await Promise.all(previews.map((preview) => preview.stop()));
  await proxy.close();
  await backend.close();
}

// 4. Realtime and Storage, each on a backend of its own, after the Worker's servers have stopped --
const sections: BenchSection[] = [];
log(`Realtime: 1 and 100 subscribers, ${ROUNDS} rounds × ${SECONDS} s (bench/realtime.ts)…`);
sections.push(await realtimeBench({ rounds: ROUNDS, seconds: SECONDS, port: BACKEND_PORT }));
log(
  `Storage: 50 MB transfers, ${ROUNDS} rounds × ${SECONDS} s, and a 200 MB TUS upload (bench/storage.ts)…`,
);
sections.push(await storageBench({ rounds: ROUNDS, seconds: SECONDS, port: PROXY_PORT }));
for (const section of sections) {
  budgets.push(...section.budgets);
  if (section.problems.length) armProblems.set(section.title, section.problems);
}

// 5. The report -------------------------------------------------------------------------------
const RATIOS: Ratio[] = [
  {
    label: `getUser() pattern ÷ ours, GET /notes p50, backend ${RTT_MS} ms away`,
    of: "getUserRtt",
    to: "notesRtt",
    metric: "p50",
  },
  {
    label: "ours ÷ getUser() pattern, GET /notes req/s, on loopback, paired",
    of: "notesPaired",
    to: "getUser",
    metric: "rps",
  },
  {
    label: "signed out ÷ signed in, GET / req/s (+ 1 data query)",
    of: "signedOut",
    to: "signedInHome",
    metric: "rps",
  },
  {
    label: "Worker CPU: GET /notes signed in ÷ GET / signed out, paired",
    of: "notesCpuPaired",
    to: "signedOutCpuPaired",
    metric: "cpuMs",
  },
  {
    label: "Worker CPU: getUser() pattern ÷ ours, GET /notes, paired",
    of: "getUser",
    to: "notesPaired",
    metric: "cpuMs",
  },
];
const ratios = RATIOS.map((ratio) => ({ ratio, value: ratioSpread(results, ratio) }));
const cpuRatio = ratios.find((r) => r.ratio.metric === "cpuMs")?.value.median ?? Number.NaN;
const notesCpu = armSpread(results, "notesCpuPaired", "cpuMs");
budgets.push(
  {
    name: "worker-cpu",
    label: "Worker CPU per request, GET /notes signed in ÷ GET / signed out, paired",
    limit: BUDGETS.workerCpuRatio,
    actual: cpuRatio,
    unit: "x",
  },
  {
    name: "worker-cpu",
    warnOnly: true,
    label: "Worker CPU per request, GET /notes signed in, paired",
    limit: BUDGETS.notesCpuMs,
    actual: notesCpu.median,
    unit: "ms",
  },
);
const verdicts = judge(budgets, ALLOWED);
printReport();
const failed =
  armProblems.size > 0 ||
  checks.some((check) => !check.ok) ||
  verdicts.some((verdict) => verdict.status === "over");
process.exitCode = failed ? 1 : 0;

function printReport() {
  const out: string[] = [];
  out.push("");
  out.push(
    `Edge Notes bench, ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC: ${availableParallelism()} cores (os.availableParallelism()), Node ${process.version}, load average ${load.map((l) => l.toFixed(1)).join(" -> ")} during the arms`,
  );
  const busiest = Math.max(...load);
  if (busiest > availableParallelism()) {
    out.push(
      `The machine was busy: a load average of ${busiest.toFixed(1)} on ${availableParallelism()} cores means other work shared the cores with every arm. Rounds spread it over all arms alike, but each figure moves with it.`,
    );
  }
  out.push("");
  out.push(
    `The production build in workerd (vite preview), autocannon: ${CONNECTIONS} connections on loopback, ${RTT_CONNECTIONS} with the delay; ${ROUNDS} interleaved rounds of ${SECONDS} s per arm; median (lowest-highest round)`,
  );
  out.push(
    `BENCH_RTT_MS=${RTT_MS}: arms marked "away" reach the backend through a proxy that adds ${RTT_MS} ms per round trip, one round trip on a warm connection; cold connection set-up (TCP and TLS, 2-3 round trips from the edge) is not modelled.`,
  );
  out.push(
    `  ${"arm".padEnd(62)} ${"req/s".padStart(18)} ${"p50 ms".padStart(18)} ${"CPU ms/req".padStart(18)}`,
  );
  for (const arm of arms) {
    const rps = armSpread(results, arm.key, "rps");
    const p50 = armSpread(results, arm.key, "p50");
    const cpu = armSpread(results, arm.key, "cpuMs");
    out.push(
      `  ${arm.label.padEnd(62)} ${spreadCell(rps, 0)} ${spreadCell(p50, 0)} ${Number.isNaN(cpu.median) ? "-".padStart(18) : spreadCell(cpu, 2)}`,
    );
    for (const problem of armProblems.get(arm.label) ?? []) out.push(`    ! ${problem}`);
  }
  out.push("");
  out.push("Ratios, taken in each round: median (lowest-highest round)");
  for (const { ratio, value } of ratios) {
    out.push(`  ${ratio.label.padEnd(66)} ${formatSpread(value)}`);
  }
  out.push(
    `  ${"local backend warm start ÷ PGlite's open, same directory".padEnd(66)} ${formatSpread(warmRatio)}`,
  );
  if (burst) out.push(burstLine(burst));
  out.push("");
  out.push(
    `Critical path of every signed-in page, warm, backend ${RTT_MS} ms away (Server-Timing: auth/rest calls, check = the session check's round trips, seq = round trips one after another)`,
  );
  for (const page of pages) {
    const t = page.trips;
    const trips = t
      ? `auth=${t.auth} rest=${t.rest} check=${t.check} seq=${t.seq}`
      : "no Server-Timing";
    out.push(
      `  ${page.path.replace(/[0-9a-f-]{36}/, ":id").padEnd(24)} ${trips.padEnd(34)} ${page.ms.toFixed(0).padStart(5)} ms  ${page.problems.length ? `OVER: ${page.problems.join("; ")}` : "ok"}`,
    );
  }
  for (const section of sections) {
    out.push("");
    out.push(
      `${section.title}, load average ${[section.load[0], section.load.at(-1)].map((l) => (l ?? Number.NaN).toFixed(1)).join(" -> ")}`,
    );
    out.push(...section.lines);
    for (const problem of section.problems) out.push(`    ! ${problem}`);
  }
  if (node) {
    out.push("");
    out.push(`supabase-js in Node, on loopback, median of ${node.rounds} interleaved rounds`);
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
  out.push(`  ${"budget".padEnd(78)} ${"limit".padStart(9)} ${"now".padStart(9)}`);
  for (const verdict of verdicts) out.push(budgetLine(verdict));
  out.push(
    `  Worker upload: ${upload.kib.toFixed(1)} KiB raw; largest modules: ${upload.largest.map((m) => `${m.path} ${m.kib.toFixed(1)} KiB`).join(", ")}`,
  );
  out.push(
    `  local backend starts (ms, sorted): fresh ${sortedTotals(freshStarts)}; warm ${sortedTotals(warmStarts)}; PGlite alone, warm directory: ${sorted(pgliteStarts)} (median ${fmt(pgliteAlone)})`,
  );
  out.push(
    `  of the median starts: loading the modules fresh ${fmt(fresh.importMs)} ms, warm ${fmt(warm.importMs)} ms; createLocalBackend() until serving fresh ${fmt(fresh.readyMs)} ms, warm ${fmt(warm.readyMs)} ms`,
  );
  for (const first of firstLoads) {
    const supabase = first.scripts.some((script) => script.supabase);
    out.push(
      `  first load of ${first.page}: ${first.scripts.length} scripts, ${first.gzipKib.toFixed(1)} KiB gzip, ${first.brotliKib.toFixed(1)} KiB brotli (quality ${BROTLI_QUALITY}, the highest: Cloudflare publishes no quality for static assets); gzip: the framework chunk (React, React DOM, React Router) ${first.frameworkGzipKib.toFixed(1)}, the app's own with Vite's and Rolldown's helpers ${first.ownGzipKib.toFixed(1)}; Supabase client ${supabase ? "AMONG THEM" : "not among them (lazy)"}`,
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
  if (over.length || armProblems.size || checks.some((check) => !check.ok)) {
    out.push(
      `FAILED: ${[...over.map((label) => `over budget: ${label}`), ...[...armProblems.keys()].map((label) => `errors: ${label}`), ...checks.filter((c) => !c.ok).map((c) => `check: ${c.label}`)].join("; ")}`,
    );
  } else {
    out.push("All arms error-free, all checks ok, every budget met, allowed or a warning only.");
  }
  console.log(out.join("\n"));
}

interface StartTime {
  importMs: number;
  readyMs: number;
  /** importMs + readyMs: what `npm run local` reports */
  totalMs: number;
}

/** The median start by totalMs (the middle one of an odd number). */
function medianStart(starts: StartTime[]): StartTime {
  const ordered = [...starts].sort((a, b) => a.totalMs - b.totalMs);
  return ordered[Math.floor(ordered.length / 2)] as StartTime;
}

function sortedTotals(starts: StartTime[]): string {
  return sorted(starts.map((start) => start.totalMs));
}

function sorted(ms: number[]): string {
  return [...ms]
    .sort((a, b) => a - b)
    .map((v) => v.toFixed(0))
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

/** The id of the first note /notes links to. */
async function firstNoteId(origin: string, jar: CookieJar): Promise<string> {
  const body = await (await fetch(`${origin}/notes`, { headers: { cookie: jar.header() } })).text();
  const id = /href="\/notes\/([0-9a-f-]{36})"/.exec(body)?.[1];
  if (!id) throw new Error("/notes links to no note");
  return id;
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

/**
 * Sessions whose access token has expired: the first GET /notes of each refreshes it (auth=1) and
 * sets new cookies, with which the next one makes no auth round trip (auth=0).
 */
async function expectRefreshOnce(origin: string, jars: CookieJar[]) {
  const seen: string[] = [];
  for (const jar of jars) {
    for (let i = 0; i < 2; i++) {
      const response = await fetch(`${origin}/notes`, { headers: { cookie: jar.header() } });
      await response.arrayBuffer();
      jar.applySetCookie(response.headers.getSetCookie());
      seen.push(
        `${response.status} auth=${authCalls(response.headers.get("server-timing") ?? undefined)}`,
      );
    }
  }
  const expected = jars.flatMap(() => ["200 auth=1", "200 auth=0"]);
  checks.push({
    label: `an expired access token is refreshed once: ${jars.length} sessions, GET /notes twice each: auth=1 then auth=0`,
    ok: seen.join() === expected.join(),
    detail: seen.join(", "),
  });
}

// `node bench/worker-cpu.ts [page] [server build …]`: the Worker's own CPU time per request for a
// page, in workerd, with nothing else measured: no HTTP server or load generator in front. Signed
// out (the default), no backend does work either: a stub answers the health probe, which suits a
// page that needs no session (`/`, `/sign-in`, a 404). With WORKER_CPU_SIGNED_IN=1 the page is
// asked with the session cookies of a user with 30 notes (bench/sessions.ts), against an in-memory
// local backend in a thread of its own: `/notes`, `/notes/<id>`, `/account`.
// Each build (default: build/server, what `npm run build` makes) runs in a workerd of its own; a
// driver module inside the isolate renders the page WORKER_CPU_REQUESTS times per round, and the
// round's CPU is the workerd process's (Linux's /proc). Builds take turns, WORKER_CPU_ROUNDS
// rounds each, so a slow spell of the machine hits all alike; the medians and their ratios to the
// first build are printed. To compare a change: build, copy build/server aside, change, build, and
//   node bench/worker-cpu.ts / /tmp/server-before build/server
//   WORKER_CPU_SIGNED_IN=1 node bench/worker-cpu.ts /notes /tmp/server-before build/server
// WORKER_CPU_PROFILE=<file.cpuprofile> records a V8 CPU profile of the first build over one more
// round, after the measured ones (the inspector is open then, so it is not among them), and prints
// where the time went (cpu-profile.ts); built with `npx react-router build --sourcemapServer`, by
// package and by the app's files.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { median } from "./client-checks.ts";
import { profileWhile, summarise } from "./cpu-profile.ts";
import { cpuSeconds, workerdPids } from "./workerd-cpu.ts";

const [page = "/", ...dirs] = process.argv.slice(2);
const builds = (dirs.length > 0 ? dirs : ["build/server"]).map((dir) => resolve(dir));
const REQUESTS = Number(process.env.WORKER_CPU_REQUESTS ?? 500);
const ROUNDS = Number(process.env.WORKER_CPU_ROUNDS ?? 7);
const SIGNED_IN = process.env.WORKER_CPU_SIGNED_IN === "1";
const PROFILE = process.env.WORKER_CPU_PROFILE;

/** Renders `page` `count` times inside the isolate, as the Worker entry is called for a request. */
const DRIVER = `import worker from "./index.js";
export default {
  async fetch(request, env, ctx) {
    const { searchParams } = new URL(request.url);
    const page = new URL(searchParams.get("page"), "http://localhost:8787");
    const cookie = searchParams.get("cookie");
    let status = 0;
    for (let i = 0; i < Number(searchParams.get("count")); i++) {
      const headers = { Accept: "text/html", "User-Agent": "bench/worker-cpu" };
      if (cookie) headers.Cookie = cookie;
      const response = await worker.fetch(new Request(page, { headers }), env, ctx);
      await response.arrayBuffer();
      status = response.status;
    }
    return new Response(String(status));
  },
};`;

// Signed out, every probe of the backend's health answered at once: the page renders as with a
// backend up. Signed in, a real backend and a user's session.
let backendUrl: string;
let cookie = "";
let stop: () => Promise<void>;
if (SIGNED_IN) {
  const { startBackendThread } = await import("./backend.ts");
  const { userWithNotes } = await import("./sessions.ts");
  const backend = await startBackendThread({ port: 0, host: "127.0.0.1" });
  backendUrl = backend.url;
  cookie = (await (await userWithNotes(backend.url)).signIn()).header();
  stop = backend.close;
} else {
  const stub = createServer((_request, response) => response.end("{}"));
  await new Promise<void>((done) => stub.listen(0, "127.0.0.1", done));
  backendUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
  stop = async () => void stub.close();
}

interface Running {
  dir: string;
  miniflare: Miniflare;
  pid: string;
  perRequestMs: number[];
}

async function start(dir: string, inspect: boolean): Promise<Running> {
  const config = JSON.parse(readFileSync(join(dir, "wrangler.json"), "utf8")) as {
    compatibility_date: string;
    compatibility_flags?: string[];
    vars?: Record<string, string>;
  };
  const modules = readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".js"))
    .map((file) => ({ type: "ESModule" as const, path: join(dir, file) }));
  const before = workerdPids();
  const miniflare = new Miniflare(
    convertV4MiniflareOptions({
      workers: [
        {
          name: "worker-cpu",
          modulesRoot: dir,
          modules: [
            { type: "ESModule", path: join(dir, "worker-cpu-driver.js"), contents: DRIVER },
            ...modules,
          ],
          compatibilityDate: config.compatibility_date,
          compatibilityFlags: config.compatibility_flags,
          bindings: { ...config.vars, SUPABASE_URL: backendUrl },
        },
      ],
      ...(inspect ? { inspectorPort: 0 } : {}),
    }),
  );
  await miniflare.ready;
  const pid = [...workerdPids()].find((candidate) => !before.has(candidate));
  if (!pid) throw new Error(`no workerd process appeared for ${dir}`);
  return { dir, miniflare, pid, perRequestMs: [] };
}

async function render(running: Running, count: number): Promise<void> {
  const url = `http://driver/?count=${count}&page=${encodeURIComponent(page)}&cookie=${encodeURIComponent(cookie)}`;
  const status = await (await running.miniflare.dispatchFetch(url)).text();
  if (status !== "200") throw new Error(`GET ${page} answered ${status} in ${running.dir}`);
}

const running: Running[] = [];
try {
  for (const dir of builds) {
    const worker = await start(dir, Boolean(PROFILE) && dir === builds[0]);
    running.push(worker);
    await render(worker, 200); // compiled and optimised before anything is measured
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const worker of running) {
      const before = cpuSeconds(worker.pid);
      await render(worker, REQUESTS);
      worker.perRequestMs.push(((cpuSeconds(worker.pid) - before) * 1000) / REQUESTS);
    }
  }
  const first = median(running[0]?.perRequestMs ?? []);
  console.log(
    `GET ${page} signed ${SIGNED_IN ? "in" : "out"}: workerd CPU per request, ${REQUESTS} requests x ${ROUNDS} rounds per build, taking turns`,
  );
  for (const worker of running) {
    const ms = median(worker.perRequestMs);
    const sorted = [...worker.perRequestMs].sort((a, b) => a - b);
    const spread = `${sorted[0]?.toFixed(2)}-${sorted.at(-1)?.toFixed(2)}`;
    const ratio = worker === running[0] ? "" : `  x${(ms / first).toFixed(2)} of the first`;
    console.log(`  ${worker.dir}  ${ms.toFixed(2)} ms (rounds ${spread})${ratio}`);
  }
  const profiled = running[0];
  if (PROFILE && profiled) {
    const inspector = new URL("/core:user:worker-cpu", await profiled.miniflare.getInspectorURL());
    const profile = await profileWhile(inspector.href, () => render(profiled, REQUESTS));
    writeFileSync(PROFILE, JSON.stringify(profile));
    console.log(`\n${PROFILE} (${profiled.dir}):\n${summarise(profile, profiled.dir, REQUESTS)}`);
  }
} finally {
  await Promise.all(running.map((worker) => worker.miniflare.dispose()));
  await stop();
}

// `node bench/realtime.ts`: how fast the local backend's Realtime delivers postgres_changes, in
// interleaved rounds (rounds.ts). It starts one in-memory local backend in a thread of its own
// with the Realtime tenant limits raised through the local settings (config.local.realtime, as
// [realtime] of supabase/local-backend.toml would; upstream's defaults would refuse 100 joins at
// once and 100 events a second with fan-out counted), makes two tables in the supabase_realtime
// publication under RLS, and subscribes to each as anon through raw sockets speaking the 1.0.0
// serializer (JSON; parsing is all the receiving side does, so this process is not the
// bottleneck): 1 socket on one table, 100 on the other. Each arm inserts one row at a time into
// its table and waits until every subscriber has it; a row carries the database's clock at its
// insert (clock_timestamp(), the statement that commits it), and each delivery's latency is the
// arrival time here minus that (the backend thread shares this process's clock; PGlite's clock
// counts whole milliseconds, so each latency reads up to 1 ms long).
//
// `realtimeBench()` does all this and answers its report lines and budgets; `npm run bench`
// (run.ts) calls it after the Worker's arms, and `node bench/realtime.ts` runs it alone.
// It prints commit-to-event p50 and p99 per arm and events delivered per second, each the median
// (lowest-highest round), and exits non-zero when an arm saw an error or the 100-subscriber p50 is
// over 3× the 1-subscriber p50 of the same round (median over rounds; BENCH_ALLOW=realtime-fanout
// makes that a warning). p50 ≤ 50 ms and p99 ≤ 250 ms are warnings only.
//
//   BENCH_ROUNDS   interleaved rounds of both arms (default 5)
//   BENCH_SECONDS  seconds per arm and round (default 3)
//   BENCH_PORT     the backend's port (default 29790)
//   BENCH_ALLOW    budgets reported as warnings instead of failures (budgets.ts)
import { availableParallelism, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { WebSocket } from "ws";
import { KEYS, startBackendThread } from "./backend.ts";
import { type BenchSection, type Budget, budgetLine, judge, parseAllowed } from "./budgets.ts";
import {
  type Arm,
  armSpread,
  formatSpread,
  type Measurement,
  percentile,
  type Ratio,
  ratioSpread,
  runRounds,
  type Spread,
  spread,
  spreadCell,
} from "./rounds.ts";

const FANOUT = 100;
/** A delivery not seen this long after its insert counts as an error. */
const DELIVERY_TIMEOUT_MS = 5000;

/** config.local.realtime: upstream's tenant limits, raised far past what the arms need. */
const RAISED = {
  maxConcurrentUsers: 10_000,
  maxChannelsPerClient: 1000,
  maxJoinsPerSecond: 10_000,
  maxEventsPerSecond: 1_000_000,
  maxBytesPerSecond: 1_000_000_000,
  maxPresenceEventsPerSecond: 100_000,
};
/** Upstream's defaults of the same limits (config/runtime.exs TENANT_MAX_*), for the printout. */
const UPSTREAM = {
  maxConcurrentUsers: 200,
  maxChannelsPerClient: 100,
  maxJoinsPerSecond: 100,
  maxEventsPerSecond: 100,
  maxBytesPerSecond: 100_000,
  maxPresenceEventsPerSecond: 1000,
};

export interface RealtimeOptions {
  rounds: number;
  seconds: number;
  /** The backend's port. */
  port: number;
}

/** Both arms in interleaved rounds on a backend of its own: the report's lines and budgets. */
export async function realtimeBench({
  rounds,
  seconds,
  port,
}: RealtimeOptions): Promise<BenchSection> {
  const backend = await startBackendThread({
    port,
    host: "127.0.0.1",
    config: { local: { realtime: RAISED } },
  });
  const tables = { one: "bench_realtime_one", hundred: "bench_realtime_hundred" };
  for (const table of Object.values(tables)) {
    await backend.exec(`
      create table public.${table} (
        seq bigint primary key,
        committed_at double precision not null default extract(epoch from clock_timestamp()) * 1000
      );
      alter table public.${table} enable row level security;
      create policy "anyone reads" on public.${table} for select to anon using (true);
      grant select on public.${table} to anon;
      alter publication supabase_realtime add table public.${table};`);
  }

  /** Deliveries awaited per inserted row (seq): how many are still to come, and who waits. */
  const awaited = new Map<number, { remaining: number; latencies: number[]; done: () => void }>();
  const sockets: WebSocket[] = [];
  const wsUrl = `${backend.url.replace("http", "ws")}/realtime/v1/websocket?apikey=${KEYS.publishable}&vsn=1.0.0`;

  /** One socket, joined to one channel with an INSERT binding on `table`; resolves once subscribed. */
  function subscribe(table: string, n: number): Promise<void> {
    const ws = new WebSocket(wsUrl);
    sockets.push(ws);
    return new Promise((resolve, reject) => {
      ws.once("error", reject);
      ws.once("open", () =>
        ws.send(
          JSON.stringify({
            topic: `realtime:${table}-${n}`,
            event: "phx_join",
            ref: "1",
            join_ref: "1",
            payload: {
              config: {
                broadcast: { ack: false, self: false },
                presence: { key: "", enabled: false },
                postgres_changes: [{ event: "INSERT", schema: "public", table }],
                private: false,
              },
            },
          }),
        ),
      );
      ws.on("message", (data) => {
        const arrived = performance.timeOrigin + performance.now();
        const message = JSON.parse(String(data));
        if (message.event === "postgres_changes") {
          const record = message.payload.data.record as { seq: number; committed_at: number };
          const row = awaited.get(record.seq);
          if (!row) return;
          row.latencies.push(arrived - record.committed_at);
          if (--row.remaining === 0) row.done();
        } else if (message.event === "system") {
          if (message.payload.status === "ok") resolve();
          else reject(new Error(`${table}-${n}: ${message.payload.message}`));
        } else if (message.event === "phx_reply" && message.payload.status !== "ok") {
          reject(new Error(`${table}-${n}: ${JSON.stringify(message.payload.response)}`));
        }
      });
    });
  }

  const joinStarted = performance.now();
  await subscribe(tables.one, 0);
  for (let i = 0; i < FANOUT; i += 20) {
    await Promise.all(Array.from({ length: 20 }, (_, j) => subscribe(tables.hundred, i + j)));
  }
  const joinMs = performance.now() - joinStarted;
  const heartbeat = setInterval(() => {
    for (const ws of sockets) {
      ws.send(JSON.stringify({ topic: "phoenix", event: "heartbeat", payload: {}, ref: "hb" }));
    }
  }, 20_000);

  let seq = 0;
  function insertArm(key: string, label: string, table: string, subscribers: number): Arm {
    return {
      key,
      label,
      measure: async (seconds) => {
        const latencies: number[] = [];
        const problems: string[] = [];
        let errors = 0;
        const started = performance.now();
        while (performance.now() - started < seconds * 1000) {
          const n = ++seq;
          const row = { remaining: subscribers, latencies, done: () => {} };
          let timer: NodeJS.Timeout | undefined;
          const delivered = new Promise<boolean>((resolve) => {
            row.done = () => resolve(true);
            timer = setTimeout(() => resolve(false), DELIVERY_TIMEOUT_MS);
          });
          awaited.set(n, row);
          await backend.exec(`insert into public.${table} (seq) values (${n})`);
          const complete = await delivered;
          clearTimeout(timer);
          if (!complete) {
            errors += row.remaining;
            problems.push(`row ${n}: ${row.remaining} of ${subscribers} deliveries missing`);
          }
          awaited.delete(n);
        }
        const elapsed = (performance.now() - started) / 1000;
        return {
          requests: latencies.length,
          rps: latencies.length / elapsed,
          p50: percentile(latencies, 50),
          p99: percentile(latencies, 99),
          errors,
          problems: problems.slice(0, 5),
        } satisfies Measurement;
      },
    };
  }

  const arms = [
    insertArm("rt-1", "postgres_changes, 1 subscriber", tables.one, 1),
    insertArm("rt-100", `postgres_changes, ${FANOUT} subscribers`, tables.hundred, FANOUT),
  ];
  const ratio: Ratio = {
    label: `commit to event p50, ${FANOUT} subscribers ÷ 1 subscriber`,
    of: "rt-100",
    to: "rt-1",
    metric: "p50",
  };
  const load: number[] = [loadavg()[0] ?? 0];
  let results: Awaited<ReturnType<typeof runRounds>>;
  try {
    results = await runRounds(arms, { rounds, seconds }, () => load.push(loadavg()[0] ?? 0));
  } finally {
    clearInterval(heartbeat);
    for (const ws of sockets) ws.terminate();
    await backend.close();
  }

  const p99Spread = (key: string): Spread => spread((results.get(key) ?? []).map((m) => m.p99));
  const p99s = new Map(arms.map((arm) => [arm.key, p99Spread(arm.key)]));
  const fanout = ratioSpread(results, ratio);
  const budgets: Budget[] = [
    {
      name: "realtime-fanout",
      label: `Realtime: ${ratio.label} (median of rounds)`,
      limit: 3,
      actual: fanout.median,
      unit: "x",
    },
    ...arms.flatMap((arm): Budget[] => [
      {
        name: "realtime-latency",
        warnOnly: true,
        label: `Realtime: ${arm.label}, commit to event p50`,
        limit: 50,
        actual: armSpread(results, arm.key, "p50").median,
        unit: "ms",
      },
      {
        name: "realtime-latency",
        warnOnly: true,
        label: `Realtime: ${arm.label}, commit to event p99`,
        limit: 250,
        actual: p99s.get(arm.key)?.median ?? Number.NaN,
        unit: "ms",
      },
    ]),
  ];
  const problems = arms.flatMap((arm) =>
    (results.get(arm.key) ?? []).flatMap((m) => [
      ...m.problems.map((problem) => `${arm.label}: ${problem}`),
      ...(m.errors > 0 && m.problems.length === 0 ? [`${arm.label}: ${m.errors} errors`] : []),
    ]),
  );
  const lines: string[] = [];
  lines.push(
    `Realtime tenant limits raised through config.local.realtime (upstream's default -> this run): ${Object.entries(
      RAISED,
    )
      .map(([name, value]) => `${name} ${UPSTREAM[name as keyof typeof UPSTREAM]} -> ${value}`)
      .join(", ")}`,
  );
  lines.push(
    `An in-memory local backend in its own thread; ${1 + FANOUT} raw sockets (serializer 1.0.0) joined as anon in ${joinMs.toFixed(0)} ms; one INSERT at a time into a table in supabase_realtime under RLS, the next once every subscriber has it; ${rounds} interleaved rounds of ${seconds} s per arm; median (lowest-highest round)`,
  );
  lines.push(
    `  ${"arm".padEnd(40)} ${"events/s".padStart(18)} ${"p50 ms".padStart(18)} ${"p99 ms".padStart(18)}`,
  );
  for (const arm of arms) {
    lines.push(
      `  ${arm.label.padEnd(40)} ${spreadCell(armSpread(results, arm.key, "rps"), 0)} ${spreadCell(armSpread(results, arm.key, "p50"), 1)} ${spreadCell(p99s.get(arm.key) as Spread, 1)}`,
    );
    for (const m of results.get(arm.key) ?? []) {
      for (const problem of m.problems) lines.push(`    ! ${problem}`);
    }
  }
  lines.push("Ratio, taken in each round: median (lowest-highest round)");
  lines.push(`  ${ratio.label.padEnd(66)} ${formatSpread(fanout)}`);
  return { title: "Realtime (bench/realtime.ts)", lines, budgets, problems, load };
}

// `node bench/realtime.ts`: the same, alone.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const section = await realtimeBench({
    rounds: Number(process.env.BENCH_ROUNDS ?? 5),
    seconds: Number(process.env.BENCH_SECONDS ?? 3),
    port: Number(process.env.BENCH_PORT ?? 29790),
  });
  const verdicts = judge(section.budgets, parseAllowed(process.env.BENCH_ALLOW));
  const out: string[] = [""];
  out.push(
    `Edge Notes Realtime bench, ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC: ${availableParallelism()} cores (os.availableParallelism()), Node ${process.version}, load average ${section.load.map((l) => l.toFixed(1)).join(" -> ")} during the arms`,
  );
  out.push("", ...section.lines, "");
  out.push("Budgets (BENCH_ALLOW=name,… reports a named budget as a warning)");
  out.push(`  ${"budget".padEnd(78)} ${"limit".padStart(9)} ${"now".padStart(9)}`);
  for (const verdict of verdicts) out.push(budgetLine(verdict));
  out.push("");
  const over = verdicts.filter((v) => v.status === "over").map((v) => `over budget: ${v.label}`);
  if (over.length || section.problems.length) {
    out.push(`FAILED: ${[...over, ...section.problems.map((p) => `errors: ${p}`)].join("; ")}`);
  } else {
    out.push("Both arms error-free, every budget met, allowed or a warning only.");
  }
  console.log(out.join("\n"));
  process.exitCode = over.length || section.problems.length ? 1 : 0;
}

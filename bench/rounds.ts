// Interleaved rounds: the one way `npm run bench` measures anything under load. Every arm runs
// once per round, arms in turn, for BENCH_SECONDS each; after BENCH_ROUNDS rounds each ratio is
// taken per round (the two arms of a round ran minutes apart at most, seconds apart at best) and
// reported as its median with the lowest and highest round. A slow minute of a shared machine then
// lands on every arm of one round, not on one arm of the run.
//
// Adding an arm (the Realtime and Storage benches do it this way):
//   1. Write an `Arm`: a key, a label, and `measure(seconds)` that drives the system for that long
//      and returns a `Measurement` (requests, req/s, p50 and p99 latency, errors, problems; and the
//      Worker's CPU per request when it has one). `setUp()` runs before each of its rounds, e.g. to
//      set the delay between the Worker and the backend (rtt-proxy.ts). load.ts's httpArm() makes
//      one for an HTTP page; another protocol (a websocket's messages, an upload) brings its own.
//   2. Add it to the list run.ts hands runRounds().
//   3. Add the `Ratio`s it is for (arm ÷ arm, on p50, req/s or CPU); a budget on a ratio is judged
//      on its median (budgets.ts).
export interface Measurement {
  requests: number;
  rps: number;
  /** Latency, milliseconds. */
  p50: number;
  p99: number;
  /** Socket errors, timeouts and unexpected answers. */
  errors: number;
  /** What went wrong, in words (an arm with any fails the run). */
  problems: string[];
  /** The Worker's own CPU per request (workerd's process CPU time ÷ requests), when measured. */
  cpuMs?: number;
}

export interface Arm {
  key: string;
  label: string;
  /** Before each of this arm's rounds. */
  setUp?: () => void | Promise<void>;
  measure: (seconds: number) => Promise<Measurement>;
}

export type Metric = "p50" | "rps" | "cpuMs";

export interface Ratio {
  label: string;
  /** Arm keys: numerator ÷ denominator, round by round. */
  of: string;
  to: string;
  metric: Metric;
}

export interface Spread {
  median: number;
  min: number;
  max: number;
  /** One value per round (NaN where a round lacks the figure). */
  rounds: number[];
}

/** Every arm's measurements, one per round, in the order the rounds ran. */
export type RoundResults = Map<string, Measurement[]>;

/** Runs `rounds` rounds of every arm in turn; `onArm` hears each measurement as it comes. */
export async function runRounds(
  arms: Arm[],
  options: { rounds: number; seconds: number },
  onArm?: (arm: Arm, round: number, measurement: Measurement) => void,
): Promise<RoundResults> {
  const results: RoundResults = new Map(arms.map((arm) => [arm.key, []]));
  for (let round = 0; round < options.rounds; round++) {
    // Each round starts one arm later, so no arm always follows the same one.
    const order = arms.map((_, i) => arms[(i + round) % arms.length] as Arm);
    for (const arm of order) {
      await arm.setUp?.();
      const measurement = await arm.measure(options.seconds);
      results.get(arm.key)?.push(measurement);
      onArm?.(arm, round, measurement);
    }
  }
  return results;
}

/**
 * Two arms measured against each other, for a ratio that must hold from one run to the next. Within
 * each round they take turns in slices of `slice` seconds (A B A B …, `seconds` of each; the arm
 * that goes first alternates by round), so a busy second of the machine lands on both arms alike
 * rather than on one arm's whole turn. Each arm's figure for the round is the total of its slices:
 * requests ÷ seconds, CPU ÷ requests (a ratio of totals, not a mean of per-slice ratios, which one
 * near-empty slice would swing); p50 is the median of the slices' and p99 the highest. `warmUp`
 * rounds run first and are discarded: the first seconds after other arms pay for caches, JIT and
 * connection pools the arms share.
 */
export async function runPaired(
  pair: [Arm, Arm],
  options: { rounds: number; seconds: number; slice: number; warmUp: number },
  onRound?: (round: number, measurements: [Measurement, Measurement]) => void,
): Promise<RoundResults> {
  const results: RoundResults = new Map(pair.map((arm) => [arm.key, []]));
  const slices = Math.max(1, Math.round(options.seconds / options.slice));
  for (let round = -options.warmUp; round < options.rounds; round++) {
    const order = round % 2 ? [1, 0] : [0, 1];
    const taken: [Measurement[], Measurement[]] = [[], []];
    for (let s = 0; s < slices; s++) {
      for (const i of order) {
        const arm = pair[i] as Arm;
        await arm.setUp?.();
        taken[i]?.push(await arm.measure(options.slice));
      }
    }
    if (round < 0) continue;
    const totals = [total(taken[0], options.slice), total(taken[1], options.slice)] as [
      Measurement,
      Measurement,
    ];
    pair.forEach((arm, i) => results.get(arm.key)?.push(totals[i] as Measurement));
    onRound?.(round, totals);
  }
  return results;
}

/** One arm's slices of a round as one measurement: totals over the slices' requests and seconds. */
export function total(slices: Measurement[], sliceSeconds: number): Measurement {
  const requests = slices.reduce((sum, m) => sum + m.requests, 0);
  const seconds = slices.reduce(
    (sum, m) => sum + (m.rps > 0 ? m.requests / m.rps : sliceSeconds),
    0,
  );
  const timed = slices.filter((m) => m.cpuMs !== undefined);
  const timedRequests = timed.reduce((sum, m) => sum + m.requests, 0);
  return {
    requests,
    rps: seconds > 0 ? requests / seconds : Number.NaN,
    p50: median(slices.map((m) => m.p50)),
    p99: Math.max(...slices.map((m) => m.p99)),
    errors: slices.reduce((sum, m) => sum + m.errors, 0),
    problems: slices.flatMap((m) => m.problems),
    cpuMs:
      timed.length && timedRequests > 0
        ? timed.reduce((sum, m) => sum + (m.cpuMs as number) * m.requests, 0) / timedRequests
        : undefined,
  };
}

/** The median (the mean of the middle two for an even count), NaN for none. */
export function median(values: number[]): number {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export function spread(values: number[]): Spread {
  const known = values.filter((v) => !Number.isNaN(v));
  return {
    median: median(known),
    min: known.length ? Math.min(...known) : Number.NaN,
    max: known.length ? Math.max(...known) : Number.NaN,
    rounds: values,
  };
}

/** A metric of one arm over the rounds. */
export function armSpread(results: RoundResults, key: string, metric: Metric): Spread {
  return spread((results.get(key) ?? []).map((m) => m[metric] ?? Number.NaN));
}

/** A ratio taken in each round (the two arms' figures of that round), then summarised. */
export function ratioSpread(results: RoundResults, ratio: Ratio): Spread {
  const of = results.get(ratio.of) ?? [];
  const to = results.get(ratio.to) ?? [];
  const rounds = of.map((m, i) => {
    const a = m[ratio.metric];
    const b = to[i]?.[ratio.metric];
    return a === undefined || b === undefined || b === 0 ? Number.NaN : a / b;
  });
  return spread(rounds);
}

/** A report's table cell: "median (lowest-highest)", right-aligned in 18 characters. */
export function spreadCell(value: Spread, digits: number): string {
  if (Number.isNaN(value.median)) return "-".padStart(18);
  return `${value.median.toFixed(digits)} (${value.min.toFixed(digits)}-${value.max.toFixed(digits)})`.padStart(
    18,
  );
}

/** "1.92x (1.85-2.01)": a ratio's median and its lowest and highest round. */
export function formatSpread(value: Spread, digits = 2, unit = "x"): string {
  const f = (v: number) => v.toFixed(digits);
  return `${f(value.median)}${unit} (${f(value.min)}-${f(value.max)})`;
}

/** The p-th percentile (0-100) of samples, nearest rank; NaN for none. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

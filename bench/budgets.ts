// The budgets `npm run bench` enforces, each printed with the figure measured beside it. Any
// budget exceeded makes the run exit non-zero, unless BENCH_ALLOW names it (comma-separated):
// then it is reported as a warning. A budget on a ratio of two arms is judged on the ratio's median
// over the rounds (rounds.ts). Absolute times that move with the machine (a start in ms, CPU ms per
// request) are warnOnly: printed against their figure, never failing the run. Budgets live here,
// never in timed unit tests.

/** Budget names BENCH_ALLOW accepts, and what each covers. */
export const BUDGET_NAMES = {
  "worker-upload": "Worker upload, gzipped as Wrangler reports it",
  "first-load-js":
    "JavaScript loaded before a public page is idle (/ and /sign-in): brotli per page, the app's own share gzipped, all of it gzipped",
  "lazy-supabase": "no Supabase client code before the page is idle",
  "critical-path":
    "signed-in pages, warm: no round trip for the session check, at most one sequential data round trip (two with private files)",
  "worker-cpu": "the Worker's CPU per request, GET /notes signed in ÷ GET / signed out",
  "backend-start": "local backend's warm start ÷ PGlite alone opening the same data directory",
  "realtime-fanout":
    "Realtime commit-to-event p50 with 100 subscribers ÷ with 1 subscriber (bench/realtime.ts)",
  "realtime-latency": "Realtime commit-to-event p50 and p99, absolute (warnings only)",
  "storage-transfer":
    "Storage upload and download of 50 MB ÷ a plain stream copy with fsync on the same disk, at least (bench/storage.ts)",
  "storage-tus-rss": "the backend's RSS growth during a 200 MB TUS upload (bench/storage.ts)",
} as const;

export type BudgetName = keyof typeof BUDGET_NAMES;

export interface Budget {
  name: BudgetName;
  /** Reported, never failing the run: a figure that moves with the machine, shown for scale. */
  warnOnly?: boolean;
  label: string;
  /** The figure must be at least the limit (a throughput ratio), not at most. */
  atLeast?: boolean;
  limit: number;
  actual: number;
  unit: string;
}

/**
 * A part of the bench with a backend of its own (Realtime, Storage): run alone by its own script or
 * as part of `npm run bench`, which prints its lines and judges its budgets with the rest.
 */
export interface BenchSection {
  title: string;
  lines: string[];
  budgets: Budget[];
  /** Errors of its arms, in words (any fails the run). */
  problems: string[];
  /** The 1-minute load average as its arms ran. */
  load: number[];
}

export interface Verdict extends Budget {
  /** allowed: over, but named in BENCH_ALLOW; warning: over a warnOnly budget. */
  status: "ok" | "over" | "allowed" | "warning";
}

/** BENCH_ALLOW="backend-start,worker-upload" -> those names; an unknown name is an error. */
export function parseAllowed(value: string | undefined): Set<BudgetName> {
  const names = (value ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  for (const name of names) {
    if (!(name in BUDGET_NAMES)) {
      throw new Error(
        `BENCH_ALLOW: unknown budget "${name}" (known: ${Object.keys(BUDGET_NAMES).join(", ")})`,
      );
    }
  }
  return new Set(names as BudgetName[]);
}

export function judge(budgets: Budget[], allowed: Set<BudgetName>): Verdict[] {
  return budgets.map((budget) => ({
    ...budget,
    // A figure that could not be measured (NaN) is over, never ok.
    status: (budget.atLeast ? budget.actual >= budget.limit : budget.actual <= budget.limit)
      ? "ok"
      : budget.warnOnly
        ? "warning"
        : allowed.has(budget.name)
          ? "allowed"
          : "over",
  }));
}

/** A number as the reports print it: whole as is, else 2 decimals below 10 and 1 above. */
export function fmt(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(value < 10 ? 2 : 1);
}

/** A budget's line in a report: its label, limit, measured value and verdict. */
export function budgetLine(verdict: Verdict): string {
  const status = {
    ok: "ok",
    allowed: `OVER (allowed: BENCH_ALLOW=${verdict.name})`,
    warning: "OVER (a warning only)",
    over: `OVER (budget "${verdict.name}")`,
  }[verdict.status];
  const unit = verdict.unit ? ` ${verdict.unit}` : "";
  const limit = `${verdict.atLeast ? ">= " : ""}${verdict.limit}${unit}`;
  return `  ${verdict.label.padEnd(78)} ${limit.padStart(9)} ${`${fmt(verdict.actual)}${unit}`.padStart(9)}  ${status}`;
}

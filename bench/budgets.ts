// The budgets `npm run bench` enforces, each printed with the figure measured beside it. Any
// budget exceeded makes the run exit non-zero, unless BENCH_ALLOW names it (comma-separated):
// then it is reported as a warning. Budgets live here, never in timed unit tests.

/** Budget names BENCH_ALLOW accepts, and what each covers. */
export const BUDGET_NAMES = {
  "worker-upload": "Worker upload, gzipped as Wrangler reports it",
  "first-load-js": "JavaScript loaded before a public page is idle (/ and /sign-in), gzipped",
  "lazy-supabase": "no Supabase client code before the page is idle",
  "backend-start": "local backend ready from a fresh data directory, and warm",
} as const;

export type BudgetName = keyof typeof BUDGET_NAMES;

export interface Budget {
  name: BudgetName;
  label: string;
  limit: number;
  actual: number;
  unit: string;
}

export interface Verdict extends Budget {
  status: "ok" | "over" | "allowed";
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
    status: budget.actual <= budget.limit ? "ok" : allowed.has(budget.name) ? "allowed" : "over",
  }));
}

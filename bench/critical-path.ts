// The critical path of each signed-in page: how many round trips to the backend it waits for one
// after another, as the Worker counts them in `Server-Timing` (app/lib/auth.server.ts:
// `supabase;desc="auth=A rest=R storage=T check=C seq=S"`; the chain length S is computed in
// app/lib/backend-fetch.server.ts). From the edge each of those trips is a round trip to the
// Supabase region, so S decides what a visitor far from it waits.
//
// Budget: warm (a valid access token, the JWKS cached), a page's session check makes no round trip
// (check=0), and the page waits for at most one round trip of data (seq <= 1). A page that shows
// private files may take one more, to sign their URLs (`files: true`). A page that needs more runs
// its independent queries side by side, or asks one database function for all of it.
export interface BackendTrips {
  auth: number;
  rest: number;
  /** Round trips the session check made. */
  check: number;
  /** The longest chain of round trips, one after another. */
  seq: number;
}

/** The trips in a `Server-Timing` header, or null when it has none (not answered by the Worker). */
export function backendTrips(serverTiming: string | null | undefined): BackendTrips | null {
  const desc = /supabase;desc="([^"]*)"/.exec(serverTiming ?? "")?.[1];
  if (desc === undefined) return null;
  const field = (name: string) => Number(new RegExp(`\\b${name}=(\\d+)`).exec(desc)?.[1] ?? NaN);
  return { auth: field("auth"), rest: field("rest"), check: field("check"), seq: field("seq") };
}

export interface PagePath {
  path: string;
  /** Shows private files: one more round trip allowed, to sign their URLs. */
  files?: boolean;
}

/** The most sequential data round trips a page may wait for. */
export function allowedTrips(page: PagePath): number {
  return page.files ? 2 : 1;
}

/** What is wrong with a page's trips against its budget (empty: within it). */
export function tripProblems(page: PagePath, trips: BackendTrips | null): string[] {
  if (!trips) return ["no Server-Timing supabase entry"];
  const problems: string[] = [];
  if (!(trips.check === 0)) problems.push(`the session check made ${trips.check} round trip(s)`);
  if (!(trips.seq <= allowedTrips(page))) {
    problems.push(`${trips.seq} sequential round trips (budget ${allowedTrips(page)})`);
  }
  return problems;
}

export interface PageTrips extends PagePath {
  status: number;
  trips: BackendTrips | null;
  /** Median time to the whole page, over a few loads through the delay (ms). */
  ms: number;
  problems: string[];
}

/** Loads each page `times` times with `cookie` and reads its trips (the last load's). */
export async function measurePages(
  origin: string,
  pages: PagePath[],
  cookie: string,
  times = 3,
): Promise<PageTrips[]> {
  const results: PageTrips[] = [];
  for (const page of pages) {
    const durations: number[] = [];
    let status = 0;
    let trips: BackendTrips | null = null;
    for (let i = 0; i < times; i++) {
      const started = performance.now();
      const response = await fetch(`${origin}${page.path}`, {
        headers: { cookie },
        redirect: "manual",
      });
      await response.arrayBuffer();
      durations.push(performance.now() - started);
      status = response.status;
      trips = backendTrips(response.headers.get("server-timing"));
    }
    const problems = tripProblems(page, trips);
    if (status !== 200) problems.unshift(`status ${status}`);
    const sorted = durations.sort((a, b) => a - b);
    results.push({
      ...page,
      status,
      trips,
      ms: sorted[Math.floor(sorted.length / 2)] ?? NaN,
      problems,
    });
  }
  return results;
}

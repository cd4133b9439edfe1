// One arm of the load test: autocannon drives a URL with N connections for a fixed time. Each
// connection is a visitor with a cookie jar of its own, updated from every response's
// `Set-Cookie` (so a visitor whose token was refreshed sends the new cookies from then on), and
// every response's `Server-Timing` auth count is tallied to prove what the arm measured.
import autocannon from "autocannon";
import type { CookieJar } from "./cookies.ts";

export interface Arm {
  label: string;
  url: string;
  /** One jar per connection (repeated if fewer); none = no cookies. */
  visitors?: CookieJar[];
  /** Checks the tally of auth round trips per response ("-" = no Server-Timing, i.e. no Worker). */
  expectAuth: (tally: Map<string, number>, connections: number) => string | null;
}

export interface ArmResult {
  label: string;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  /** Socket errors, timeouts and every response other than a 200. */
  errors: number;
  /** What went wrong, if anything (status codes seen, a failed auth-count check). */
  problems: string[];
}

export async function runArm(
  arm: Arm,
  options: { seconds: number; connections: number },
): Promise<ArmResult> {
  const tally = new Map<string, number>();
  let next = 0;
  const result = await autocannon({
    url: arm.url,
    connections: options.connections,
    duration: options.seconds,
    // Page renders on a busy two-core machine can take a while; a timeout still counts as an error.
    timeout: 10,
    setupClient(client) {
      const jar = arm.visitors?.length ? arm.visitors[next++ % arm.visitors.length] : undefined;
      if (jar) client.setHeaders({ cookie: jar.header() });
      // autocannon emits the HTTP parser's record here (flat [name, value, …] headers), not the
      // IncomingHttpHeaders its typings promise, hence the plain EventEmitter view.
      (client as NodeJS.EventEmitter).on("headers", (response: { headers: string[] }) => {
        const setCookie: string[] = [];
        let timing: string | undefined;
        for (let i = 0; i < response.headers.length; i += 2) {
          const name = response.headers[i]?.toLowerCase();
          if (name === "set-cookie") setCookie.push(response.headers[i + 1] ?? "");
          if (name === "server-timing") timing = response.headers[i + 1];
        }
        const auth = authCalls(timing);
        tally.set(auth, (tally.get(auth) ?? 0) + 1);
        if (jar?.applySetCookie(setCookie)) client.setHeaders({ cookie: jar.header() });
      });
    },
  });
  const statuses = Object.entries(result.statusCodeStats ?? {}).map(
    ([code, stats]) => [code, stats.count ?? 0] as const,
  );
  const wrongStatus = statuses.filter(([code]) => code !== "200");
  const problems: string[] = [];
  if (wrongStatus.length) {
    problems.push(
      `responses other than 200: ${wrongStatus.map(([c, n]) => `${n}× ${c}`).join(", ")}`,
    );
  }
  if (result.errors) problems.push(`${result.errors} socket errors (${result.timeouts} timeouts)`);
  const authProblem = arm.expectAuth(tally, options.connections);
  if (authProblem)
    problems.push(`${authProblem} (auth round trips per response: ${describe(tally)})`);
  const responses = statuses.reduce((sum, [, count]) => sum + count, 0);
  return {
    label: arm.label,
    requests: responses,
    rps: responses / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + wrongStatus.reduce((sum, [, count]) => sum + count, 0),
    problems,
  };
}

/** The `auth=N` of `Server-Timing: supabase;desc="auth=N rest=M"`, or "-" when there is none. */
export function authCalls(serverTiming: string | undefined): string {
  return /supabase;desc="auth=(\d+)/.exec(serverTiming ?? "")?.[1] ?? "-";
}

function describe(tally: Map<string, number>): string {
  return [...tally].map(([auth, count]) => `${count}× auth=${auth}`).join(", ") || "none";
}

/** Every response made exactly `calls` auth round trips ("-": none went through the Worker). */
export function every(calls: string) {
  return (tally: Map<string, number>): string | null =>
    tally.size === 1 && tally.has(calls) ? null : `expected auth=${calls} on every response`;
}

/** One auth round trip (the refresh) per connection, none on any other response. */
export function oneRefreshPerVisitor(tally: Map<string, number>, connections: number) {
  const others = [...tally.keys()].filter((key) => key !== "0" && key !== "1");
  return tally.get("1") === connections && others.length === 0
    ? null
    : `expected exactly ${connections} responses with auth=1 (one refresh per visitor), the rest auth=0`;
}

// An HTTP arm of the load test (rounds.ts): autocannon drives a URL with N connections for one
// round's seconds. Each connection is a visitor with a cookie jar of its own, updated from every response's
// `Set-Cookie` (so a visitor whose token was refreshed sends the new cookies from then on), and
// every response's `Server-Timing` auth count is tallied to prove what the arm measured.
import autocannon from "autocannon";
import type { CookieJar } from "./cookies.ts";
import type { Arm, Measurement } from "./rounds.ts";

export interface HttpArm {
  key: string;
  label: string;
  url: string;
  connections: number;
  /** One jar per connection (repeated if fewer); none = no cookies. */
  visitors?: CookieJar[];
  /** Checks the tally of auth round trips per response ("-" = no Server-Timing, i.e. no Worker). */
  expectAuth: (tally: Map<string, number>, connections: number) => string | null;
  /** CPU seconds the process serving the URL has used so far (workerd-cpu.ts), for cpuMs. */
  cpuSeconds?: () => number;
  setUp?: () => void | Promise<void>;
}

/** An arm (rounds.ts) that loads one URL with autocannon for each round. */
export function httpArm(arm: HttpArm): Arm {
  return {
    key: arm.key,
    label: arm.label,
    setUp: arm.setUp,
    measure: async (seconds) => {
      const before = arm.cpuSeconds?.();
      const measurement = await load(arm, seconds);
      if (before !== undefined && arm.cpuSeconds && measurement.requests > 0) {
        measurement.cpuMs = ((arm.cpuSeconds() - before) * 1000) / measurement.requests;
      }
      return measurement;
    },
  };
}

async function load(arm: HttpArm, seconds: number): Promise<Measurement> {
  const tally = new Map<string, number>();
  let next = 0;
  const result = await autocannon({
    url: arm.url,
    connections: arm.connections,
    duration: seconds,
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
  const authProblem = arm.expectAuth(tally, arm.connections);
  if (authProblem)
    problems.push(`${authProblem} (auth round trips per response: ${describe(tally)})`);
  const responses = statuses.reduce((sum, [, count]) => sum + count, 0);
  return {
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
  return (tally: Map<string, number>): string | null => {
    if (tally.size === 0) return "no response within the round";
    return tally.size === 1 && tally.has(calls) ? null : `expected auth=${calls} on every response`;
  };
}

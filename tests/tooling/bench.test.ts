// The benchmark's own parsing and bookkeeping (bench/): what it counts as first-load JavaScript,
// how it reads Wrangler's upload size, how a virtual visitor's cookies follow the responses, how
// interleaved rounds run and turn into ratios, how a page's round trips are read and judged, that
// the proxy adds the round trip it is set to, and how budgets are judged. The timed figures
// themselves live only in `npm run bench`.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createConnection, createServer } from "node:net";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { judge, parseAllowed } from "../../bench/budgets.ts";
import {
  initialScripts,
  isFrameworkChunk,
  isSupabaseClient,
  leftOutSupabaseClients,
  parseTotalUpload,
  staticImports,
} from "../../bench/bundle.ts";
import { CookieJar } from "../../bench/cookies.ts";
import { allowedTrips, backendTrips, tripProblems } from "../../bench/critical-path.ts";
import { authCalls, every } from "../../bench/load.ts";
import {
  type Arm,
  formatSpread,
  type Measurement,
  median,
  percentile,
  ratioSpread,
  runPaired,
  runRounds,
  total,
} from "../../bench/rounds.ts";
import { startRttProxy } from "../../bench/rtt-proxy.ts";
import { withExpiredAccessToken } from "../../bench/sessions.ts";

describe("initialScripts", () => {
  const html = `<!DOCTYPE html><html><head>
    <link rel="icon" href="/favicon.svg"/>
    <link rel="modulepreload" href="/assets/entry.client-A.js" nonce="x"/>
    <link nonce="x" rel="modulepreload" href="/assets/components-B.js"/>
    <link rel="stylesheet" href="/assets/root.css"/>
    </head><body>
    <script nonce="x">window.__reactRouterContext = {"module": "/assets/not-loaded.js"};</script>
    <script src="/assets/legacy.js"></script>
    <script nonce="x" type="module" async="">;
import * as route0 from "/assets/root-C.js";
import * as route1 from "/assets/home-D.js";
  window.__reactRouterManifest = { "entry": { "module": "/assets/entry.client-A.js",
    "imports": ["/assets/listed-only-in-the-manifest.js"] } };
import("/assets/entry.client-A.js");</script></body></html>`;

  it("lists modulepreloads, script sources and the inline module's imports, once each", () => {
    expect(initialScripts(html).sort()).toEqual([
      "/assets/components-B.js",
      "/assets/entry.client-A.js",
      "/assets/home-D.js",
      "/assets/legacy.js",
      "/assets/root-C.js",
    ]);
  });

  it("leaves out stylesheets, icons and URLs that only appear in data", () => {
    const scripts = initialScripts(html);
    expect(scripts).not.toContain("/assets/root.css");
    expect(scripts).not.toContain("/favicon.svg");
    expect(scripts).not.toContain("/assets/not-loaded.js");
    expect(scripts).not.toContain("/assets/listed-only-in-the-manifest.js");
  });
});

describe("staticImports", () => {
  it("follows static imports and re-exports of a minified chunk, never a lazy import()", () => {
    const chunk =
      'import{a as b}from"./components-B.js";import"./side-effect.js";export{c}from"./lib.js";' +
      'const m=`call it from "react-router/route-pattern"`;const lazy=()=>import("./supabase.client-E.js");';
    expect(staticImports(chunk)).toEqual(["./components-B.js", "./side-effect.js", "./lib.js"]);
  });
});

describe("isSupabaseClient", () => {
  it("recognises the browser client's chunk by name or by supabase-js's code", () => {
    expect(isSupabaseClient("/assets/supabase.client-CmqY08j7.js", "")).toBe(true);
    expect(
      isSupabaseClient("/assets/chunk-1.js", 'headers:{"X-Client-Info":"supabase-js-web/2"}'),
    ).toBe(true);
    expect(isSupabaseClient("/assets/root-C.js", "export default function App(){}")).toBe(false);
  });
});

describe("isFrameworkChunk", () => {
  it("recognises the framework chunk (vite.config.ts) by its name and hash alone", () => {
    expect(isFrameworkChunk("/assets/framework-xf4b_eTL.js")).toBe(true);
    expect(isFrameworkChunk("/assets/framework-xf4b_eTL.js.map")).toBe(false);
    expect(isFrameworkChunk("/assets/framework-xf4b_eTL.css")).toBe(false);
    expect(isFrameworkChunk("/assets/root-CTI6Doaz.js")).toBe(false);
    expect(isFrameworkChunk("/assets/my-framework-CTI6Doaz.js")).toBe(false);
  });
});

describe("parseTotalUpload", () => {
  it("reads Wrangler's total, colours and all", () => {
    const output =
      "│ Total (4 modules) │ │ 744.29 KiB │\n✨ Read 53 files\nTotal Upload: \u001b[32m761.11 KiB / gzip: 214.77 KiB\u001b[39m\n";
    expect(parseTotalUpload(output)).toEqual({ kib: 761.11, gzipKib: 214.77 });
  });

  it("says so when the line is missing", () => {
    expect(parseTotalUpload("✘ [ERROR] Could not resolve ./app")).toBeNull();
  });
});

describe("CookieJar", () => {
  it("follows Set-Cookie: new values replace old ones, Max-Age=0 and past Expires remove", () => {
    const jar = new CookieJar();
    jar.set("a", "1");
    jar.set("b", "2");
    jar.set("c", "3");
    const changed = jar.applySetCookie([
      "a=10; Path=/; HttpOnly; SameSite=Lax",
      "b=; Path=/; Max-Age=0",
      "c=3; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
      "d=4; Max-Age=3600",
    ]);
    expect(changed).toBe(true);
    expect(jar.header()).toBe("a=10; d=4");
  });

  it("reports no change when the response repeats what it has", () => {
    const jar = new CookieJar();
    jar.set("a", "1");
    expect(jar.applySetCookie(["a=1; Path=/"])).toBe(false);
    expect(jar.applySetCookie([])).toBe(false);
  });

  it("reads a session stored as one cookie or in chunks, and writes it back as one", () => {
    const session = { access_token: "x".repeat(50), expires_at: 2_000_000_000 };
    const encoded = `base64-${Buffer.from(JSON.stringify(session)).toString("base64url")}`;
    const jar = new CookieJar();
    jar.set("sb-127-auth-token.0", encoded.slice(0, 30));
    jar.set("sb-127-auth-token.1", encoded.slice(30));
    expect(jar.readSession("sb-127-auth-token")).toEqual(session);

    jar.writeSession("sb-127-auth-token", { ...session, expires_at: 1 });
    expect(jar.entries().map((cookie) => cookie.name)).toEqual(["sb-127-auth-token"]);
    expect(jar.readSession("sb-127-auth-token")).toEqual({ ...session, expires_at: 1 });
  });

  it("withExpiredAccessToken ages a copy, never the original session", () => {
    const jar = new CookieJar();
    jar.writeSession("sb-127-auth-token", { access_token: "t", expires_at: 2_000_000_000 });
    const aged = withExpiredAccessToken(jar, "sb-127-auth-token");
    expect(Number(aged.readSession("sb-127-auth-token")?.expires_at)).toBeLessThan(
      Date.now() / 1000,
    );
    expect(jar.readSession("sb-127-auth-token")?.expires_at).toBe(2_000_000_000);
    expect(() => withExpiredAccessToken(new CookieJar(), "sb-127-auth-token")).toThrow();
  });
});

describe("auth round-trip tallies", () => {
  it("reads auth=N from Server-Timing, '-' when the Worker did not answer", () => {
    expect(authCalls('auth;dur=0.4, supabase;desc="auth=1 rest=2"')).toBe("1");
    expect(authCalls(undefined)).toBe("-");
  });

  it("every() wants one count on every response", () => {
    expect(every("0")(new Map([["0", 500]]))).toBeNull();
    expect(
      every("0")(
        new Map([
          ["0", 499],
          ["1", 1],
        ]),
      ),
    ).toMatch(/auth=0/);
    expect(every("0")(new Map())).toBe("no response within the round");
  });
});

describe("budgets", () => {
  const budget = (actual: number) => ({
    name: "backend-start" as const,
    label: "local backend ready",
    limit: 1000,
    actual,
    unit: "ms",
  });

  it("BENCH_ALLOW names budgets; an unknown name is refused, not ignored", () => {
    expect([...parseAllowed("backend-start, first-load-js")]).toEqual([
      "backend-start",
      "first-load-js",
    ]);
    expect(parseAllowed(undefined).size).toBe(0);
    expect(() => parseAllowed("backend-starts")).toThrow(/unknown budget "backend-starts"/);
  });

  it("a figure over its limit fails unless allowed; one that could not be measured fails", () => {
    expect(judge([budget(1000)], new Set())[0]?.status).toBe("ok");
    expect(judge([budget(1001)], new Set())[0]?.status).toBe("over");
    expect(judge([budget(1001)], new Set(["backend-start"]))[0]?.status).toBe("allowed");
    expect(judge([budget(Number.NaN)], new Set())[0]?.status).toBe("over");
  });

  it("an atLeast budget (a throughput ratio) fails below its limit, not above", () => {
    const ratio = (actual: number) => ({
      name: "storage-transfer" as const,
      label: "upload ÷ copy",
      atLeast: true,
      limit: 0.5,
      actual,
      unit: "x",
    });
    expect(judge([ratio(0.5)], new Set())[0]?.status).toBe("ok");
    expect(judge([ratio(0.9)], new Set())[0]?.status).toBe("ok");
    expect(judge([ratio(0.49)], new Set())[0]?.status).toBe("over");
    expect(judge([ratio(Number.NaN)], new Set())[0]?.status).toBe("over");
  });

  it("a warnOnly budget over its limit is a warning, never a failure", () => {
    expect(judge([{ ...budget(1001), warnOnly: true }], new Set())[0]?.status).toBe("warning");
    expect(judge([{ ...budget(999), warnOnly: true }], new Set())[0]?.status).toBe("ok");
  });
});

describe("leftOutSupabaseClients", () => {
  const published = (pkg: string, file: string) =>
    readFileSync(
      join(dirname(createRequire(import.meta.url).resolve(`${pkg}/package.json`)), file),
      "utf8",
    );

  it("finds each client the Worker leaves out in that client's own published code", () => {
    const realtime = published("@supabase/realtime-js", "dist/module/lib/constants.js");
    const storage = published("@supabase/storage-js", "dist/index.mjs");
    const functions = published("@supabase/functions-js", "dist/module/FunctionsClient.js");
    expect(leftOutSupabaseClients(realtime)).toEqual(["Realtime"]);
    expect(leftOutSupabaseClients(storage)).toEqual(["Storage"]);
    expect(leftOutSupabaseClients(functions)).toEqual(["Edge Functions"]);
  });

  it("finds none in the stand-ins the Worker bundles instead", () => {
    const standIns = readFileSync(
      new URL("../../workers/unused-supabase-clients.ts", import.meta.url),
      "utf8",
    );
    expect(leftOutSupabaseClients(standIns)).toEqual([]);
  });
});

describe("interleaved rounds", () => {
  const measurement = (p50: number, extra: Partial<Measurement> = {}): Measurement => ({
    requests: 100,
    rps: 1000 / p50,
    p50,
    p99: p50 * 2,
    errors: 0,
    problems: [],
    ...extra,
  });

  it("runs every arm once per round, set up first, starting one arm later each round", async () => {
    const order: string[] = [];
    const arm = (key: string): Arm => ({
      key,
      label: key,
      setUp: () => {
        order.push(`setUp ${key}`);
      },
      measure: async (seconds) => {
        order.push(`${key} ${seconds}s`);
        return measurement(10);
      },
    });
    const results = await runRounds([arm("a"), arm("b"), arm("c")], { rounds: 2, seconds: 3 });
    expect(order).toEqual([
      "setUp a",
      "a 3s",
      "setUp b",
      "b 3s",
      "setUp c",
      "c 3s",
      "setUp b",
      "b 3s",
      "setUp c",
      "c 3s",
      "setUp a",
      "a 3s",
    ]);
    expect([...results.values()].map((rounds) => rounds.length)).toEqual([2, 2, 2]);
  });

  it("paired: two arms take turns in slices, the first alternating, after discarded warm-up rounds", async () => {
    const order: string[] = [];
    let call = 0;
    const arm = (key: string): Arm => ({
      key,
      label: key,
      setUp: () => {
        order.push(`setUp ${key}`);
      },
      measure: async (seconds) => {
        order.push(`${key} ${seconds}s`);
        return measurement(10, { requests: ++call });
      },
    });
    const results = await runPaired([arm("a"), arm("b")], {
      rounds: 2,
      seconds: 2,
      slice: 1,
      warmUp: 1,
    });
    expect(order.filter((step) => !step.startsWith("setUp"))).toEqual([
      // warm-up round (-1): b first
      "b 1s",
      "a 1s",
      "b 1s",
      "a 1s",
      // round 0: a first
      "a 1s",
      "b 1s",
      "a 1s",
      "b 1s",
      // round 1: b first
      "b 1s",
      "a 1s",
      "b 1s",
      "a 1s",
    ]);
    expect(order.filter((step) => step.startsWith("setUp"))).toHaveLength(12);
    // the warm-up's requests (calls 1-4) are nowhere in the results
    expect(results.get("a")?.map((m) => m.requests)).toEqual([5 + 7, 10 + 12]);
    expect(results.get("b")?.map((m) => m.requests)).toEqual([6 + 8, 9 + 11]);
  });

  it("paired: a round's figure is the total of its slices, CPU weighted by requests", () => {
    const round = total(
      [
        { requests: 100, rps: 100, p50: 10, p99: 40, errors: 0, problems: [], cpuMs: 4 },
        { requests: 20, rps: 20, p50: 50, p99: 90, errors: 1, problems: ["x"], cpuMs: 9 },
        { requests: 60, rps: 60, p50: 20, p99: 60, errors: 0, problems: [], cpuMs: 5 },
      ],
      1,
    );
    // 180 requests in 3 s; (400 + 180 + 300) ms of CPU over 180 requests
    expect(round.rps).toBe(60);
    expect(round.cpuMs).toBeCloseTo(880 / 180);
    expect(round).toMatchObject({ requests: 180, p50: 20, p99: 90, errors: 1, problems: ["x"] });
  });

  it("takes a ratio within each round, then its median, lowest and highest", () => {
    // the machine slows down in round 2: both arms slow alike, and the ratio holds
    const results = new Map([
      ["ours", [measurement(10), measurement(30), measurement(11)]],
      ["theirs", [measurement(20), measurement(57), measurement(23)]],
    ]);
    const ratio = ratioSpread(results, { label: "", of: "theirs", to: "ours", metric: "p50" });
    expect(ratio.rounds).toEqual([2, 1.9, 23 / 11]);
    expect(ratio).toMatchObject({ median: 2, min: 1.9, max: 23 / 11 });
    expect(formatSpread(ratio)).toBe("2.00x (1.90-2.09)");
  });

  it("a round without the figure (no CPU measured) is left out, not counted as zero", () => {
    const results = new Map([
      ["a", [measurement(10, { cpuMs: 6 }), measurement(10)]],
      ["b", [measurement(10, { cpuMs: 3 }), measurement(10, { cpuMs: 3 })]],
    ]);
    const ratio = ratioSpread(results, { label: "", of: "a", to: "b", metric: "cpuMs" });
    expect(ratio.median).toBe(2);
    expect(Number.isNaN(ratio.rounds[1])).toBe(true);
  });

  it("median: the middle value, the mean of the middle two, NaN for none", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(Number.isNaN(median([]))).toBe(true);
  });

  it("percentile: nearest rank of the samples as given, NaN for none", () => {
    const samples = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(percentile(samples, 50)).toBe(50);
    expect(percentile(samples, 99)).toBe(99);
    expect(percentile(samples, 100)).toBe(100);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([2, 1], 0)).toBe(1);
    expect(Number.isNaN(percentile([], 50))).toBe(true);
    expect(samples[0]).toBe(100);
  });
});

describe("critical path", () => {
  it("reads auth, rest, the session check's trips and the chain from Server-Timing", () => {
    expect(backendTrips('auth;dur=0.3, supabase;desc="auth=1 rest=2 check=0 seq=1"')).toEqual({
      auth: 1,
      rest: 2,
      check: 0,
      seq: 1,
    });
    expect(backendTrips("auth;dur=0.3")).toBeNull();
    expect(backendTrips(null)).toBeNull();
  });

  it("holds a page to no session-check trip and one sequential trip, two with private files", () => {
    const trips = (check: number, seq: number) => ({ auth: 0, rest: 2, check, seq });
    expect(tripProblems({ path: "/notes" }, trips(0, 1))).toEqual([]);
    expect(tripProblems({ path: "/notes/x" }, trips(0, 2))).toEqual([
      "2 sequential round trips (budget 1)",
    ]);
    expect(tripProblems({ path: "/notes/x", files: true }, trips(0, 2))).toEqual([]);
    expect(allowedTrips({ path: "/notes/x", files: true })).toBe(2);
    expect(tripProblems({ path: "/" }, trips(1, 1))).toEqual([
      "the session check made 1 round trip(s)",
    ]);
    // a header from before check= and seq= existed cannot pass
    expect(tripProblems({ path: "/" }, backendTrips('supabase;desc="auth=0 rest=1"'))).toHaveLength(
      2,
    );
    expect(tripProblems({ path: "/" }, null)).toEqual(["no Server-Timing supabase entry"]);
  });
});

describe("rtt-proxy", () => {
  it("adds the round trip it is set to, each exchange, and none at 0", async () => {
    // an echo server standing for the backend
    const echo = createServer((socket) => socket.pipe(socket));
    await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
    const { port } = echo.address() as { port: number };
    const proxy = await startRttProxy({
      host: "127.0.0.1",
      port: 0,
      target: `http://127.0.0.1:${port}`,
    }).catch((error) => {
      echo.close();
      throw error;
    });
    try {
      const socket = createConnection({ host: "127.0.0.1", port: proxy.port });
      await new Promise((resolve) => socket.once("connect", resolve));
      const exchange = async () => {
        const started = performance.now();
        const answered = new Promise((resolve) => socket.once("data", resolve));
        socket.write("ping");
        await answered;
        return performance.now() - started;
      };
      // The fastest of three exchanges: a busy machine only ever adds time, so the minimum shows
      // what the proxy adds (half the round trip each way: one round trip, not two).
      const fastest = async () => Math.min(await exchange(), await exchange(), await exchange());
      await proxy.setDelay(100);
      const delayed = await fastest();
      await proxy.setDelay(0);
      const direct = await fastest();
      expect(delayed).toBeGreaterThanOrEqual(99);
      expect(delayed).toBeLessThan(199);
      expect(direct).toBeLessThan(99);
      socket.destroy();
    } finally {
      await proxy.close();
      echo.close();
    }
  });
});

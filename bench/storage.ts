// The Storage bench: `node bench/storage.ts` (issue 40's bench arm). It starts one local backend in
// a child process (`node bench/storage.ts --backend <dataDir> <port>`), its data directory on disk
// under os.tmpdir(), with [storage] file_size_limit raised to 256MiB (config fileSizeLimit) for the 200 MB upload, and
// measures in interleaved rounds (rounds.ts):
//   - upload and download of a 50 MB file through the Storage API (node:http, streamed both
//     ways, the secret key), each as a ratio to a plain stream copy of the same file with fsync in
//     the same directory, in the same round (the download is written to a file and fsynced too, as
//     a client saving it does); budget: each ratio's median at least 0.5;
//   - the backend process's RSS (/proc/<pid>/status VmRSS of the child) while a 200 MB file goes
//     up by TUS (tus-js-client, 6 MiB chunks, /storage/v1/upload/resumable): peak minus the RSS
//     just before; budget: under 64 MB.
// Any budget missed, or any arm's error, exits non-zero. Environment:
//   BENCH_ROUNDS   interleaved rounds of every arm (default 5)
//   BENCH_SECONDS  seconds per arm and round (default 3; an arm always finishes one transfer)
//   BENCH_PORT     the backend's port (default 54390)
// `storageBench()` does all this and answers its report lines and budgets; `npm run bench` (run.ts)
// calls it after the Worker's arms, and `node bench/storage.ts` runs it alone.
import { spawn } from "node:child_process";
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { open } from "node:fs/promises";
import { Agent, request as httpRequest, type IncomingMessage } from "node:http";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import { Upload } from "tus-js-client";
import { type BenchSection, type Budget, budgetLine, judge, parseAllowed } from "./budgets.ts";
import {
  type Arm,
  armSpread,
  formatSpread,
  type Measurement,
  type Ratio,
  ratioSpread,
  runRounds,
} from "./rounds.ts";

const MB = 1024 * 1024;
const FILE_MB = 50;
const TUS_MB = 200;
const TUS_CHUNK_MB = 6;
const FILE_SIZE_LIMIT_MB = 256;
const RATIO_BUDGET = 0.5;
const RSS_BUDGET_MB = 64;
const BUCKET = "bench";
/** The transfers' HTTP client: node:http, its connection kept between transfers, so the bench
 * measures the backend's path, not a client's (undici fetch with Web streams both ways took two
 * to three times the backend's CPU on a download). */
const agent = new Agent({ keepAlive: true });

if (process.argv[2] === "--backend") {
  await serveBackend(process.argv[3] as string, Number(process.argv[4]));
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // `node bench/storage.ts`: the same as in `npm run bench`, alone.
  const section = await storageBench({
    rounds: Number(process.env.BENCH_ROUNDS ?? 5),
    seconds: Number(process.env.BENCH_SECONDS ?? 3),
    port: Number(process.env.BENCH_PORT ?? 54390),
  });
  const verdicts = judge(section.budgets, parseAllowed(process.env.BENCH_ALLOW));
  const out = [
    `Storage bench, ${new Date().toISOString()}: ${availableParallelism()} cores, load ${section.load.map((l) => l.toFixed(2)).join(" -> ")}`,
    ...section.lines,
    "",
    "Budgets (BENCH_ALLOW=name,… reports a named budget as a warning)",
    `  ${"budget".padEnd(78)} ${"limit".padStart(9)} ${"now".padStart(9)}`,
    ...verdicts.map(budgetLine),
    "",
  ];
  const over = verdicts.filter((v) => v.status === "over").map((v) => `over budget: ${v.label}`);
  if (over.length || section.problems.length) {
    out.push(`FAILED: ${[...over, ...section.problems.map((p) => `errors: ${p}`)].join("; ")}`);
    process.exitCode = 1;
  } else {
    out.push("All arms error-free, every budget met.");
  }
  console.log(out.join("\n"));
}

/** The child: one backend, its URL and secret key on stdout, closed when stdin ends. */
async function serveBackend(dataDir: string, port: number): Promise<void> {
  const { createLocalBackend } = await import("./backend.ts");
  const backend = await createLocalBackend({
    dataDir,
    port,
    host: "127.0.0.1",
    config: { storage: { fileSizeLimit: FILE_SIZE_LIMIT_MB * MB } },
  });
  console.log(JSON.stringify({ url: backend.url, secret: backend.keys.secret }));
  process.stdin.resume();
  process.stdin.on("end", async () => {
    await backend.close();
    process.exit(0);
  });
}

export interface StorageOptions {
  rounds: number;
  seconds: number;
  /** The backend child's port. */
  port: number;
}

/** Every arm in interleaved rounds and the TUS upload, on a backend of its own: lines and budgets. */
export async function storageBench({
  rounds,
  seconds,
  port,
}: StorageOptions): Promise<BenchSection> {
  const load = [loadavg()[0] ?? 0];
  const work = mkdtempSync(join(tmpdir(), "edge-notes-storage-bench-"));
  const dataDir = join(work, "data");
  const child = spawn(
    process.execPath,
    [new URL(import.meta.url).pathname, "--backend", dataDir, String(port)],
    {
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  try {
    const { url, secret } = await new Promise<{ url: string; secret: string }>(
      (resolve, reject) => {
        let out = "";
        child.once("exit", (code) => reject(new Error(`the bench backend exited (${code})`)));
        child.stdout?.on("data", (chunk: Buffer) => {
          out += chunk;
          const line = out.split("\n").find((l) => l.startsWith("{"));
          if (line) resolve(JSON.parse(line));
        });
      },
    );
    const headers = { apikey: secret, authorization: `Bearer ${secret}` };
    const created = await fetch(`${url}/storage/v1/bucket`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ id: BUCKET, name: BUCKET, public: false }),
    });
    if (!created.ok) throw new Error(`bucket: ${created.status} ${await created.text()}`);

    const source = join(work, "source.bin");
    const big = join(work, "tus.bin");
    await writeRandom(source, FILE_MB * MB);
    await writeRandom(big, TUS_MB * MB);
    const objectUrl = `${url}/storage/v1/object/${BUCKET}/file-${FILE_MB}mb.bin`;

    const copyArm = transferArm(
      "copy",
      `plain stream copy of ${FILE_MB} MB, fsync, same disk`,
      async () => {
        await copyWithFsync(
          createReadStream(source, { highWaterMark: MB }),
          join(work, "copy.bin"),
        );
      },
    );
    const uploadArm = transferArm(
      "upload",
      `upload ${FILE_MB} MB, POST /storage/v1/object (streamed)`,
      async () => {
        const { status, text } = await httpUpload(objectUrl, source, {
          ...headers,
          "content-type": "application/octet-stream",
          "content-length": String(FILE_MB * MB),
          "x-upsert": "true",
        });
        if (status !== 200) throw new Error(`upload answered ${status}: ${text.slice(0, 200)}`);
      },
    );
    const downloadArm = transferArm(
      "download",
      `download ${FILE_MB} MB, GET /storage/v1/object, to a file, fsync`,
      async () => {
        const response = await httpGet(objectUrl, headers);
        if (response.statusCode !== 200) {
          response.resume();
          throw new Error(`download answered ${response.statusCode}`);
        }
        const bytes = await copyWithFsync(response, join(work, "download.bin"));
        if (bytes !== FILE_MB * MB) throw new Error(`download gave ${bytes} bytes`);
      },
    );
    // The download needs the object: one upload before the rounds.
    await uploadArm.measure(0);

    const arms = [copyArm, uploadArm, downloadArm];
    const results = await runRounds(arms, { rounds, seconds }, (arm, round, m) => {
      process.stderr.write(
        `round ${round + 1}/${rounds} ${arm.key}: ${(m.rps * FILE_MB).toFixed(0)} MB/s\n`,
      );
    });
    const ratios: Ratio[] = [
      {
        label: "upload through Storage ÷ plain copy with fsync (throughput)",
        of: "upload",
        to: "copy",
        metric: "rps",
      },
      {
        label: "download through Storage ÷ plain copy with fsync (throughput)",
        of: "download",
        to: "copy",
        metric: "rps",
      },
    ];

    const tus = await tusRss(url, secret, big, child.pid as number);

    load.push(loadavg()[0] ?? 0);
    const out: string[] = [];
    out.push(
      `  one local backend in a child process (pid ${child.pid}), data directory on disk in ${tmpdir()}, [storage] file_size_limit raised to ${FILE_SIZE_LIMIT_MB}MiB for the bench (default 50MiB); the secret key`,
    );
    out.push("");
    out.push(
      `Arms: median (lowest-highest round)${"".padEnd(30)} ${"MB/s".padStart(18)} ${"p50 ms".padStart(18)}`,
    );
    const problems: string[] = [];
    for (const arm of arms) {
      const rps = armSpread(results, arm.key, "rps");
      const p50 = armSpread(results, arm.key, "p50");
      const mbs = {
        ...rps,
        median: rps.median * FILE_MB,
        min: rps.min * FILE_MB,
        max: rps.max * FILE_MB,
      };
      out.push(`  ${arm.label.padEnd(62)} ${cell(mbs)} ${cell(p50)}`);
      for (const m of results.get(arm.key) ?? []) {
        for (const problem of m.problems) {
          out.push(`    ! ${problem}`);
          problems.push(`${arm.key}: ${problem}`);
        }
      }
    }
    out.push("");
    out.push("Ratios, taken in each round: median (lowest-highest round)");
    const values = ratios.map((ratio) => ({ ratio, value: ratioSpread(results, ratio) }));
    for (const { ratio, value } of values)
      out.push(`  ${ratio.label.padEnd(66)} ${formatSpread(value)}`);
    out.push("");
    out.push(
      `Resumable upload of ${TUS_MB} MB by TUS (tus-js-client, ${TUS_CHUNK_MB} MiB chunks): ${tus.seconds.toFixed(1)} s, ${(TUS_MB / tus.seconds).toFixed(0)} MB/s`,
    );
    out.push(
      `  backend process RSS (VmRSS, sampled every 50 ms): ${tus.beforeMb.toFixed(0)} MB before, ${tus.peakMb.toFixed(0)} MB at peak, ${tus.afterMb.toFixed(0)} MB after`,
    );
    if (tus.problem) problems.push(`tus: ${tus.problem}`);
    const budgets: Budget[] = [
      ...values.map(({ ratio, value }) => ({
        name: "storage-transfer" as const,
        label: `Storage: ${ratio.label}, median`,
        atLeast: true,
        limit: RATIO_BUDGET,
        actual: value.median,
        unit: "x",
      })),
      {
        name: "storage-tus-rss",
        label: `Storage: backend RSS growth during the ${TUS_MB} MB TUS upload`,
        limit: RSS_BUDGET_MB,
        actual: tus.peakMb - tus.beforeMb,
        unit: "MB",
      },
    ];
    return { title: "Storage (bench/storage.ts)", lines: out, budgets, problems, load };
  } finally {
    agent.destroy();
    child.stdin?.end();
    await new Promise((resolve) => {
      const timer = setTimeout(() => {
        child.kill();
        resolve(undefined);
      }, 10_000);
      child.once("exit", () => {
        clearTimeout(timer);
        resolve(undefined);
      });
      if (child.exitCode !== null) resolve(undefined);
    });
    rmSync(work, { recursive: true, force: true });
  }
}

/** An arm that repeats one transfer for `seconds` (at least once): transfers/s in `rps`. */
function transferArm(key: string, label: string, transfer: () => Promise<void>): Arm {
  return {
    key,
    label,
    measure: async (seconds) => {
      const times: number[] = [];
      const problems: string[] = [];
      const started = performance.now();
      do {
        const t = performance.now();
        try {
          await transfer();
          times.push(performance.now() - t);
        } catch (error) {
          problems.push((error as Error).message);
          break;
        }
      } while (performance.now() - started < seconds * 1000);
      const elapsed = times.reduce((a, b) => a + b, 0) / 1000;
      const sorted = [...times].sort((a, b) => a - b);
      const at = (q: number) =>
        sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
      return {
        requests: times.length,
        rps: elapsed ? times.length / elapsed : Number.NaN,
        p50: at(0.5),
        p99: at(0.99),
        errors: problems.length,
        problems,
      } satisfies Measurement;
    },
  };
}

/** Streams `from` into a new file at `path`, fsyncs it, and answers the bytes written. */
async function copyWithFsync(from: Readable, path: string): Promise<number> {
  const file = await open(path, "w");
  try {
    const sink = createWriteStream("", { fd: file.fd, autoClose: false, highWaterMark: MB });
    await pipeline(from, sink);
    await file.sync();
    return sink.bytesWritten;
  } finally {
    await file.close();
  }
}

/** POSTs the file at `path` with node:http, streamed in 1 MiB reads: the answer's status and text. */
async function httpUpload(
  url: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; text: string }> {
  const request = httpRequest(url, { method: "POST", headers, agent });
  const answer = new Promise<IncomingMessage>((resolve, reject) => {
    request.once("response", resolve).once("error", reject);
  });
  await pipeline(createReadStream(path, { highWaterMark: MB }), request);
  const response = await answer;
  let text = "";
  for await (const chunk of response) text += chunk;
  return { status: response.statusCode ?? 0, text };
}

function httpGet(url: string, headers: Record<string, string>): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    httpRequest(url, { headers, agent }).once("response", resolve).once("error", reject).end();
  });
}

async function writeRandom(path: string, size: number): Promise<void> {
  const { randomBytes } = await import("node:crypto");
  const file = await open(path, "w");
  try {
    for (let written = 0; written < size; written += MB) await file.write(randomBytes(MB));
    await file.sync();
  } finally {
    await file.close();
  }
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
  return kb / 1024;
}

/** A 200 MB TUS upload while the backend's RSS is sampled. */
async function tusRss(
  url: string,
  secret: string,
  path: string,
  pid: number,
): Promise<{
  seconds: number;
  beforeMb: number;
  peakMb: number;
  afterMb: number;
  problem?: string;
}> {
  const beforeMb = rssMb(pid);
  let peakMb = beforeMb;
  const sampler = setInterval(() => {
    peakMb = Math.max(peakMb, rssMb(pid));
  }, 50);
  const started = performance.now();
  let problem: string | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      const upload = new Upload(createReadStream(path), {
        endpoint: `${url}/storage/v1/upload/resumable`,
        chunkSize: TUS_CHUNK_MB * MB,
        retryDelays: [],
        uploadSize: TUS_MB * MB,
        headers: { apikey: secret, authorization: `Bearer ${secret}`, "x-upsert": "true" },
        metadata: {
          bucketName: BUCKET,
          objectName: `tus-${TUS_MB}mb.bin`,
          contentType: "application/octet-stream",
        },
        onError: reject,
        onSuccess: () => resolve(),
      });
      upload.start();
    });
    // the object is there, whole
    const head = await fetch(`${url}/storage/v1/object/${BUCKET}/tus-${TUS_MB}mb.bin`, {
      method: "HEAD",
      headers: { apikey: secret, authorization: `Bearer ${secret}` },
    });
    const length = Number(head.headers.get("content-length"));
    if (length !== TUS_MB * MB) problem = `the TUS upload stored ${length} bytes (${head.status})`;
  } catch (error) {
    problem = (error as Error).message.slice(0, 300);
  } finally {
    clearInterval(sampler);
  }
  const seconds = (performance.now() - started) / 1000;
  peakMb = Math.max(peakMb, rssMb(pid));
  return { seconds, beforeMb, peakMb, afterMb: rssMb(pid), problem };
}

function cell(value: { median: number; min: number; max: number }): string {
  if (Number.isNaN(value.median)) return "-".padStart(18);
  return `${value.median.toFixed(0)} (${value.min.toFixed(0)}-${value.max.toFixed(0)})`.padStart(
    18,
  );
}

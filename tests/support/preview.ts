// The production build served the way `npm run preview` serves it: `react-router build`, then
// `vite preview` on the build (the Worker in workerd, static assets from build/client). Shared by
// the end-to-end run (tests/e2e/setup/servers.ts) and the load benchmark (bench/).
import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

/** The repository root (ends with a slash). */
export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Wrangler and the React Router CLI from node_modules, offline (no metrics, no cf fetch). */
export const TOOL_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  PATH: `${ROOT}node_modules/.bin:${process.env.PATH}`,
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
};

/** Runs a tool from node_modules/.bin in the repository root; resolves with its exit code and output. */
export function run(
  command: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: ROOT,
      env: { ...TOOL_ENV, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

/**
 * `react-router build` (into build/, or into `projectDir`'s build directory with that folder's
 * own vite and react-router configs). NODE_ENV is production whatever the caller's is: Vitest
 * sets it to "test", which would make Vite bundle React's development build.
 */
export async function buildApp(projectDir?: string): Promise<string> {
  const { code, output } = await run(
    "react-router",
    ["build", ...(projectDir ? [projectDir] : [])],
    {
      NODE_ENV: "production",
    },
  );
  if (code !== 0) throw new Error(`react-router build failed (exit ${code}):\n${output}`);
  const errors = buildErrors(output);
  if (errors.length > 0) {
    throw new Error(`react-router build succeeded but printed ${errors.length} errors:\n${output}`);
  }
  return output;
}

/**
 * The errors Vite printed in a build that still exited 0 (a build that warmed imports it could
 * not resolve printed 110 "[vite] (ssr) Pre-transform error" lines and succeeded): a build must
 * print none, or the one that matters drowns among them.
 */
export function buildErrors(output: string): string[] {
  return output.split("\n").filter((line) => /\[vite\].*\berror\b/i.test(line));
}

/**
 * `buildApp()`, skipped when build/ already holds the build of exactly these sources: the test
 * run and the end-to-end run need a build, and making it again from unchanged sources cost 11 s of
 * CPU of every `npm test`. What the build is made from (everything buildInputsHash() reads) is hashed,
 * and the hash is kept inside build/server, which every build empties first: a build made any other
 * way (`npm run build` of other sources, the bench) leaves no hash behind and the next run builds.
 */
export async function buildAppIfChanged(): Promise<void> {
  const stamp = join(ROOT, "build/server/.inputs-hash");
  const hash = buildInputsHash();
  if (existsSync(stamp) && readFileSync(stamp, "utf8") === hash) return;
  await buildApp();
  writeFileSync(stamp, hash);
}

/** The folders and files the app's build reads (its sources, assets, configs and dependencies). */
const BUILD_INPUTS = ["app", "public", "workers", "package.json", "package-lock.json"];
const BUILD_CONFIG = /^(?:vite\.config|react-router\.config|wrangler|tsconfig.*)\.\w+$|^\.env/;

/** The hash of everything the build of the app in `root` reads (see buildAppIfChanged). */
export function buildInputsHash(root = ROOT): string {
  const hash = createHash("sha256");
  const add = (path: string) => {
    const full = join(root, path);
    if (!existsSync(full)) return;
    const files = statSync(full).isDirectory()
      ? readdirSync(full, { withFileTypes: true, recursive: true })
          .filter((entry) => entry.isFile())
          .map((entry) => join(entry.parentPath, entry.name))
      : [full];
    for (const file of files.sort()) {
      hash.update(`${file.slice(root.length)}\0`);
      hash.update(readFileSync(file));
    }
  };
  for (const path of BUILD_INPUTS) add(path);
  for (const name of readdirSync(root).sort()) if (BUILD_CONFIG.test(name)) add(name);
  // what Vite and the Cloudflare plugin read from the environment
  for (const [name, value] of Object.entries(process.env).sort())
    if (/^(?:VITE_|CLOUDFLARE_ENV$)/.test(name)) hash.update(`${name}=${value}\0`);
  return hash.digest("hex");
}

export interface PreviewOptions {
  port: number;
  /** The build's project folder (its own vite.config.ts and build/); default: the repository's. */
  projectDir?: string;
  /** Worker variables for this server (e.g. SUPABASE_URL of the backend this run started). */
  vars?: Record<string, string>;
  /** Every chunk the server writes to stdout or stderr. */
  onOutput?: (chunk: Buffer) => void;
}

export interface Preview {
  child: ChildProcess;
  url: string;
  /** Everything the server has printed so far. */
  output: () => string;
  /** True once stop() was called (an exit after that is expected). */
  readonly stopping: boolean;
  stop: () => Promise<void>;
}

/**
 * Starts `vite preview` on a build (what `npm run preview` runs): the Cloudflare plugin serves the
 * built Worker in workerd and the static assets from build/client, as `wrangler dev` would, but
 * without wrangler's ProxyWorker, which ends the whole server when one browser aborts a request
 * mid-flight (cloudflare/workers-sdk#15203, #15317; docs/decisions/011-preview-with-vite.md).
 *
 * The Worker's variables are wrangler.toml's with `vars` on top, passed as the process environment
 * (CLOUDFLARE_INCLUDE_PROCESS_ENV), which is why that environment holds nothing else the server
 * does not need. The dev registry is one of its own (in the shared one every local `edge-notes`
 * Worker on the machine announces itself under the same name); it is removed when the server exits.
 */
export function startPreview(options: PreviewOptions): Preview {
  const registry = mkdtempSync(join(tmpdir(), "preview-registry-"));
  const child = spawn(
    "vite",
    [
      "preview",
      ...(options.projectDir ? [options.projectDir] : []),
      "--port",
      String(options.port),
      "--strictPort",
    ],
    {
      cwd: ROOT,
      env: {
        PATH: TOOL_ENV.PATH,
        HOME: process.env.HOME,
        ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
        WRANGLER_SEND_METRICS: "false",
        CLOUDFLARE_CF_FETCH_ENABLED: "false",
        WRANGLER_REGISTRY_PATH: registry,
        CLOUDFLARE_INCLUDE_PROCESS_ENV: "true",
        ...options.vars,
      },
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group, so stop() ends Vite and its workerd together.
      detached: true,
    },
  );
  let output = "";
  const record = (chunk: Buffer) => {
    output += chunk;
    options.onOutput?.(chunk);
  };
  child.stdout?.on("data", record);
  child.stderr?.on("data", record);
  child.on("exit", () => rmSync(registry, { recursive: true, force: true }));
  let stopping = false;
  return {
    child,
    url: `http://localhost:${options.port}`,
    output: () => output,
    get stopping() {
      return stopping;
    },
    stop: () => {
      stopping = true;
      return stopProcessGroup(child);
    },
  };
}

/**
 * Waits until this preview's own server says where it listens (not one still shutting down from
 * an earlier run on the port: with --strictPort a taken port ends it) and then `ready(response,
 * body)` accepts an answer to GET /.
 */
export async function waitForPreview(
  preview: Preview,
  ready: (response: Response, body: string) => boolean,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (preview.child.exitCode !== null) break;
    if (!preview.output().includes(preview.url)) {
      await sleep(100);
      continue;
    }
    try {
      const response = await fetch(`${preview.url}/`, { signal: AbortSignal.timeout(10_000) });
      if (ready(response, await response.text())) return;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  throw new Error(`vite preview did not serve ${preview.url}:\n${preview.output()}`);
}

/**
 * Throws when something already answers at `url` (a server left over, or another checkout's), or
 * when its port stays taken by something that answers no HTTP: a Postgres port, or a process of a
 * run that just ended (`npm test` before `npm run test:e2e`) still letting go of its sockets. Such
 * a port is waited for, up to 5 s; a listener that is not a web server made the first backend's
 * listen fail with EADDRINUSE instead.
 */
export async function assertPortFree(url: string, hint: string): Promise<void> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(1000) });
  } catch {
    const { hostname, port } = new URL(url);
    const host = hostname === "localhost" ? "127.0.0.1" : hostname;
    const deadline = Date.now() + 5000;
    while (!(await canListen(host, Number(port)))) {
      if (Date.now() > deadline) {
        throw new Error(`port ${port} of ${url} is taken (not by a web server); ${hint}.`);
      }
      await sleep(250);
    }
    return;
  }
  throw new Error(`${url} already answers; stop whatever runs there or ${hint}.`);
}

/** Whether a server could listen on host:port now (it listens, then closes at once). */
function canListen(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/**
 * SIGTERM to the whole process group (the server and its workerd), SIGKILL for whatever is left after
 * 5 s; resolves once no process of the group remains, so the ports are free for the next run.
 */
export async function stopProcessGroup(child: ChildProcess): Promise<void> {
  const group = child.pid;
  if (group === undefined) return;
  const signal = (name: NodeJS.Signals | 0) => {
    try {
      process.kill(-group, name);
      return true;
    } catch {
      return false; // ESRCH: the group is gone
    }
  };
  if (!signal("SIGTERM")) return;
  const started = Date.now();
  // (A zombie left for an init that does not reap would answer forever: stop looking after 8 s.)
  while (signal(0) && Date.now() - started < 8000) {
    if (Date.now() - started > 5000) signal("SIGKILL");
    await sleep(50);
  }
}

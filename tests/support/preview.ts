// The production build served the way `npm run preview` serves it: `react-router build`, then
// `wrangler dev` on the build (the Worker in workerd, static assets from build/client). Shared by
// the end-to-end run (tests/e2e/setup/servers.ts) and the load benchmark (bench/).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
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
  return output;
}

export interface PreviewOptions {
  port: number;
  /** Where the inspector listens: two `wrangler dev`s must not share the default 9229. */
  inspectorPort: number;
  /** `--var NAME:value` for each entry (e.g. SUPABASE_URL of the backend this run started). */
  vars?: Record<string, string>;
  /** A build's server/wrangler.json; default: the project's build/ (wrangler.toml redirects there). */
  config?: string;
  /** Every chunk wrangler writes to stdout or stderr. */
  onOutput?: (chunk: Buffer) => void;
}

export interface Preview {
  child: ChildProcess;
  url: string;
  /** Everything wrangler has printed so far. */
  output: () => string;
  /** True once stop() was called (an exit after that is expected). */
  readonly stopping: boolean;
  stop: () => Promise<void>;
}

/**
 * Starts `wrangler dev` on a build, with local state of its own (`--persist-to`: two workerd
 * processes on the project's shared `.wrangler/state` fail with "SQLITE_BUSY: database is
 * locked") and a dev registry of its own (in wrangler's shared one every local `edge-notes`
 * Worker on the machine announces itself under the same name). Both are removed when it exits.
 */
export function startPreview(options: PreviewOptions): Preview {
  const registry = mkdtempSync(join(tmpdir(), "preview-registry-"));
  const state = mkdtempSync(join(tmpdir(), "preview-state-"));
  const vars = Object.entries(options.vars ?? {}).flatMap(([name, value]) => [
    "--var",
    `${name}:${value}`,
  ]);
  const child = spawn(
    "wrangler",
    [
      "dev",
      ...(options.config ? ["--config", options.config] : []),
      "--port",
      String(options.port),
      "--inspector-port",
      String(options.inspectorPort),
      ...vars,
      "--persist-to",
      state,
      "--show-interactive-dev-session=false",
    ],
    {
      cwd: ROOT,
      env: { ...TOOL_ENV, WRANGLER_REGISTRY_PATH: registry },
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group, so stop() ends wrangler and its workerd together.
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
  child.on("exit", () => {
    rmSync(registry, { recursive: true, force: true });
    rmSync(state, { recursive: true, force: true });
  });
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
 * Waits until this preview's own server says "Ready on" (not one still shutting down from an
 * earlier run on the port) and then `ready(response, body)` accepts an answer to GET /.
 */
export async function waitForPreview(
  preview: Preview,
  ready: (response: Response, body: string) => boolean,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (preview.child.exitCode !== null) break;
    if (!preview.output().includes("Ready on")) {
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
  throw new Error(`wrangler dev did not serve ${preview.url}:\n${preview.output()}`);
}

/** Throws when something already answers at `url` (a server left over, or another checkout's). */
export async function assertPortFree(url: string, hint: string): Promise<void> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(1000) });
  } catch {
    return;
  }
  throw new Error(`${url} already answers; stop whatever runs there or ${hint}.`);
}

/**
 * SIGTERM to the whole process group (wrangler and its workerd), SIGKILL for whatever is left after
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

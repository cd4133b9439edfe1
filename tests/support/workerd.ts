// The production build's Worker served straight from workerd (Miniflare, the runtime's Node API
// that wrangler and the Vite plugin wrap): a request reaches the Worker, or the static assets in
// build/client, with no Node server in between. The integration tests use it: it costs a fraction of
// the CPU of a dev server or `vite preview` (both proxy every request through Node), which on 2
// cores is most of what the test run can save, and it answers as the deployed Worker does.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { ROOT } from "./preview.ts";

export interface WorkerServer {
  url: string;
  stop: () => Promise<void>;
}

/** What `react-router build` writes beside the Worker: the resolved wrangler config. */
interface BuiltConfig {
  name: string;
  main: string;
  compatibility_date: string;
  compatibility_flags?: string[];
  vars?: Record<string, string>;
  assets?: { directory: string };
}

/**
 * Serves `build/` (run `buildApp()` first) on 127.0.0.1:`port`, with wrangler.toml's variables and
 * `vars` on top. Resolves once workerd listens.
 */
export async function serveBuild(options: {
  port: number;
  vars?: Record<string, string>;
}): Promise<WorkerServer> {
  const serverDir = join(ROOT, "build/server");
  const config = JSON.parse(readFileSync(join(serverDir, "wrangler.json"), "utf8")) as BuiltConfig;
  const modules = readdirSync(serverDir, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".js"))
    // The entry first: workerd takes the first module as the Worker's main module.
    .sort((a, b) => Number(b === config.main) - Number(a === config.main))
    .map((file) => ({ type: "ESModule" as const, path: join(serverDir, file) }));
  // workerd logs each client that hung up before its answer was written (a "disconnected: …
  // Broken pipe" line, then its stack): the tests' fetch closes a connection whose body it did not
  // read, a hundred times a run. Everything else is printed as Miniflare prints it.
  let hungUp = false;
  const handleStructuredLogs = ({ level, message }: { level: string; message: string }) => {
    const wasHungUp = hungUp;
    hungUp = /disconnected: .*Broken pipe/.test(message);
    if (hungUp || (wasHungUp && message.startsWith("stack: "))) return;
    if (level === "error" || level === "warn") console.error(message);
    else console.log(message);
  };
  const miniflare = new Miniflare(
    convertV4MiniflareOptions({
      host: "127.0.0.1",
      port: options.port,
      handleStructuredLogs,
      workers: [
        {
          name: config.name,
          modulesRoot: serverDir,
          modules,
          compatibilityDate: config.compatibility_date,
          compatibilityFlags: config.compatibility_flags,
          bindings: { ...config.vars, ...options.vars },
          ...(config.assets && {
            assets: {
              directory: join(serverDir, config.assets.directory),
              routerConfig: { has_user_worker: true },
            },
          }),
        },
      ],
    }),
  );
  const url = await miniflare.ready;
  return {
    url: url.origin,
    stop: () => miniflare.dispose(),
  };
}

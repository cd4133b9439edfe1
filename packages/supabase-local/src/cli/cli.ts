// supabase-local: the local backend's command line, run from the project directory (the one with
// supabase/config.toml), as the Supabase CLI is.
//
//   supabase-local start    the backend on 127.0.0.1 and ::1 (config.toml [api] port, 54321),
//                           persisted in .local-data/; prints what `supabase status` prints and
//                           stays up until Ctrl-C
//   supabase-local status   asks the backend on that port; the same table, or exit 1 when none
//   supabase-local reset    deletes .local-data/ (accounts, sessions, app data, signing key): the
//                           next start applies the migrations and the seed (config.toml [db.seed])
//
// --workdir <dir> names another project directory. LOCAL_BACKEND_PORT moves the API's port,
// LOCAL_BACKEND_DB_PORT the Postgres port (config.toml [db] port, 54322), LOCAL_BACKEND_MAILPIT_PORT
// the Mailpit API's ([local_smtp] port, 54324).

import { existsSync, statSync } from "node:fs";
import { relative } from "node:path";
import { parseArgs } from "node:util";
import { type Config, ConfigError, loadConfig } from "../project/config.ts";
import { firstFileKey, KEYS, type Keys, projectKeys } from "../project/keys.ts";
import { type ProjectPaths, projectPaths, reset } from "../project/paths.ts";
import { S3_CREDENTIALS } from "../storage/s3/credentials.ts";
import { startRefusal } from "./start-errors.ts";

const USAGE = `Usage: supabase-local <start|status|reset> [--workdir <project dir>]

  start    start the local backend (Auth, data API, Realtime, Storage, inbox) and print its URLs and keys
  status   show the URLs and keys of the backend running on the configured port
  reset    delete the persisted data (.local-data/): the next start is a fresh database`;

/** The rows `supabase status` prints, for this backend (what it has and what it has not). */
function statusTable(url: string, keys: Keys, ports: Ports, s3Protocol: boolean): string {
  const rows: Array<[string, string]> = [
    ["API URL", url],
    ["Auth API URL", `${url}/auth/v1`],
    ["REST API URL", `${url}/rest/v1`],
    // our addition: `supabase status` prints no Realtime URL
    ["Realtime URL", `${url.replace(/^http/, "ws")}/realtime/v1`],
    // ours too: `supabase status` prints Storage only as its S3 endpoint, below
    ["Storage URL", `${url}/storage/v1`],
    ["JWKS URL", `${url}/auth/v1/.well-known/jwks.json`],
    ["DB URL", `postgresql://postgres:postgres@127.0.0.1:${ports.db}/postgres`],
    ["Studio URL", "none (not part of the local backend)"],
    [
      "Mailpit URL",
      ports.mail ? `http://127.0.0.1:${ports.mail}` : "none ([local_smtp] enabled = false)",
    ],
    ["Inbox URL", `${url}/inbox`],
    ["Publishable key", keys.publishable],
    ["Secret key", keys.secret],
    ["JWT secret", keys.jwtSecret],
    ["anon key", keys.anon],
    ["service_role key", keys.serviceRole],
    // `supabase status`'s "Storage (S3)" rows, with [storage.s3_protocol] on
    ...(s3Protocol
      ? ([
          ["S3 Storage URL", `${url}/storage/v1/s3`],
          ["S3 Access Key", S3_CREDENTIALS.accessKeyId],
          ["S3 Secret Key", S3_CREDENTIALS.secretAccessKey],
          ["S3 Region", S3_CREDENTIALS.region],
        ] as Array<[string, string]>)
      : []),
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `${label.padStart(width + 1)}: ${value}`).join("\n");
}

interface Ports {
  api: number;
  db: number;
  /** The Mailpit API's port; undefined when [local_smtp] is off. */
  mail: number | undefined;
}

/** config.toml's ports ([api], [db], [local_smtp] port), or LOCAL_BACKEND_PORT / _DB_PORT / _MAILPIT_PORT. */
function configuredPorts(config: Config): Ports {
  const env = (name: string) => {
    const value = process.env[name];
    if (!value) return undefined;
    if (!/^\d{1,5}$/.test(value.trim()) || Number(value) > 65535)
      throw new ConfigError(`${name} must be a port number (0 to 65535), not "${value}"`);
    return Number(value);
  };
  return {
    api: env("LOCAL_BACKEND_PORT") ?? config.api.port,
    db: env("LOCAL_BACKEND_DB_PORT") ?? config.db.port,
    mail: config.localSmtp.enabled
      ? (env("LOCAL_BACKEND_MAILPIT_PORT") ?? config.localSmtp.port)
      : undefined,
  };
}

async function start(paths: ProjectPaths): Promise<void> {
  const { projectDir, dataDir } = paths;
  const started = performance.now();
  const config = loadConfig({ configFile: paths.configFile });
  const ports = configuredPorts(config);
  // Only `start` loads the server (Auth, the data API, PGlite): status and reset answer at once.
  // PGlite's WebAssembly starts compiling (on V8's own threads), and the database thread starting,
  // while the server's modules load. (A failure is the start's to report: it loads the same
  // modules.)
  import("../database/engine.ts")
    .then(({ pgliteEngine, prestartDatabaseThread }) => {
      pgliteEngine().catch(() => {});
      prestartDatabaseThread();
    })
    .catch(() => {});
  const { createLocalBackend } = await import("../backend.ts");
  const backend = await createLocalBackend({
    projectDir,
    dataDir,
    port: ports.api,
    postgresPort: ports.db,
    mailpitPort: ports.mail,
  });
  const ms = Math.round(performance.now() - started);
  const shown = relative(process.cwd(), dataDir) || dataDir;
  console.log(`
Local Supabase backend started in ${ms} ms (data in ${shown}/, reset with supabase-local reset)

${statusTable(backend.url, backend.keys, ports, config.storage.s3Protocol.enabled)}

Press Ctrl-C to stop.`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping the local backend…`);
    await backend.close();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

async function status(paths: ProjectPaths): Promise<number> {
  const config = loadConfig({ configFile: paths.configFile });
  const ports = configuredPorts(config);
  const url = `http://127.0.0.1:${ports.api}`;
  let running = false;
  try {
    const response = await fetch(`${url}/auth/v1/health`, {
      headers: { apikey: KEYS.publishable },
      signal: AbortSignal.timeout(2000),
    });
    running = response.ok;
  } catch {
    running = false;
  }
  if (!running) {
    console.error(`No local backend answers on ${url}. Start one with \`supabase-local start\`.`);
    return 1;
  }
  // With signing_keys_path the API keys are JWTs signed with the file's first key, signed afresh on
  // every run as `supabase status` does (its config loading signs them, expiring in ten years).
  const path = config.auth.signingKeysPath;
  const keys = path ? await projectKeys(await firstFileKey(path)) : KEYS;
  console.log(
    `Local Supabase backend is running.\n\n${statusTable(url, keys, ports, config.storage.s3Protocol.enabled)}`,
  );
  return 0;
}

async function resetData(paths: ProjectPaths): Promise<void> {
  const removed = await reset({ dataDir: paths.dataDir });
  console.log(
    `Removed ${removed}. The next \`supabase-local start\` begins with a fresh database (migrations, then the seed).`,
  );
}

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  // the project's paths, once: each command is handed them
  const paths = projectPaths(values.workdir);
  const { projectDir } = paths;
  if (!existsSync(projectDir) || !statSync(projectDir).isDirectory()) {
    console.error(`--workdir ${values.workdir}: no such directory`);
    return 1;
  }
  try {
    switch (positionals[0]) {
      case "start":
        await start(paths);
        return 0;
      case "status":
        return await status(paths);
      case "reset":
        await resetData(paths);
        return 0;
      default:
        console.error(USAGE);
        return 2;
    }
  } catch (error) {
    const sentence = startRefusal(error, "supabase-local reset");
    if (sentence === undefined) throw error;
    console.error(sentence);
    return 1;
  }
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: { workdir: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
}

const code = await main(process.argv.slice(2));
// start keeps running (its sockets hold the process); the others end here.
if (code !== 0) process.exit(code);

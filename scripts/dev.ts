// `npm run dev`: the app (`npm run dev:app`) and, beside it, the local backend (unless one already
// answers on 54321). One Ctrl-C stops both. They start side by side: the app asks the backend for
// nothing until its first request, and Vite took 3 s to listen (5 s after an install, optimising
// the browser's libraries) that it had spent waiting for the backend (3.3 s from a fresh clone,
// making its start snapshot; 0.4 s warm).
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import {
  createLocalBackend,
  KEYS,
  type LocalBackend,
  loadConfig,
  projectPaths,
  startRefusal,
} from "@edge-notes/supabase-local";
import { DEMO_LOGINS } from "./demo-logins.ts";

/** This repository: its supabase/ is the project, its .local-data/ the backend's data. */
const PROJECT = projectPaths(fileURLToPath(new URL("..", import.meta.url)));
const URL_54321 = "http://127.0.0.1:54321";
const APP_URL = "http://localhost:5173/";

async function alreadyRunning(): Promise<boolean> {
  try {
    const response = await fetch(`${URL_54321}/auth/v1/health`, {
      headers: { apikey: KEYS.publishable },
      signal: AbortSignal.timeout(1000),
    });
    return response.ok;
  } catch {
    return false;
  }
}

/**
 * What a developer can fix (a port another program holds included), said in a sentence instead of
 * a stack trace, as `npm run local` says it. Anything else is thrown as it is.
 */
function exitOnStartError(error: unknown): never {
  const sentence = startRefusal(error, "npm run local:reset");
  if (sentence === undefined) throw error;
  console.error(sentence);
  process.exit(1);
}

const config = (() => {
  try {
    return loadConfig({ projectDir: PROJECT.projectDir });
  } catch (error) {
    exitOnStartError(error);
  }
})();
const DB_URL = `postgresql://postgres:postgres@127.0.0.1:${config.db.port}/postgres`;

/**
 * The app's environment: this one, plus the local backend's well-known secret key as the Worker's
 * SUPABASE_SECRET_KEY (wrangler.toml [secrets]; the Vite plugin reads declared secrets from the
 * environment), so its rate-limited Auth calls carry the visitor's address as deployed. Not when a
 * .dev.vars or .env file may point the app at another project: that project's key is its own.
 */
function appEnv(): NodeJS.ProcessEnv {
  const ownSettings = [".dev.vars", ".env", ".env.local"].some((name) =>
    existsSync(fileURLToPath(new URL(`../${name}`, import.meta.url))),
  );
  if (ownSettings || process.env.SUPABASE_SECRET_KEY) return process.env;
  return { ...process.env, SUPABASE_SECRET_KEY: KEYS.secret };
}

/** Whether the app's port is free (vite.config.ts: 5173, strictPort). */
function appPortFree(): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(5173, "localhost", () => server.close(() => resolve(true)));
  });
}

// Asked first, so that a second `npm run dev` says why in a sentence, before starting anything
// (Vite's own refusal comes seconds later, with a stack trace).
if (!(await appPortFree())) {
  console.error(
    "Port 5173 is in use: is another `npm run dev` (or `npm run dev:app`) running? Stop it first.",
  );
  process.exit(1);
}

// The app runs in a process group of its own: npm, the shell it starts, `react-router dev`, the
// Node process that one starts and workerd. Stopping sends SIGTERM to the whole group; signalling
// npm alone left the dev server behind, holding port 5173, whenever this script was stopped by
// SIGTERM (a process manager, an editor's stop button, `timeout`) rather than by a Ctrl-C that the
// terminal sends to every process itself.
let backend: LocalBackend | undefined;
const app = spawn("npm", ["run", "dev:app"], { stdio: "inherit", detached: true, env: appEnv() });
function stopApp() {
  try {
    if (app.pid !== undefined) process.kill(-app.pid, "SIGTERM");
  } catch {
    // ESRCH: the group is gone already
  }
}
let stopping = false;
async function stop(code: number) {
  if (stopping) return;
  stopping = true;
  stopApp();
  await backend?.close();
  process.exit(code);
}
app.on("exit", (code) => void stop(code ?? 0));
process.on("SIGINT", () => void stop(0));
process.on("SIGTERM", () => void stop(0));
process.on("SIGHUP", () => void stop(0));
// and if this script fails, the app does not outlive it
process.on("exit", stopApp);

if (await alreadyRunning()) {
  console.log(`Using the backend already running on ${URL_54321}.`);
} else {
  const started = performance.now();
  backend = await createLocalBackend({
    projectDir: PROJECT.projectDir,
    dataDir: PROJECT.dataDir,
    postgresPort: config.db.port,
    mailpitPort: config.localSmtp.enabled ? config.localSmtp.port : undefined,
  }).catch(exitOnStartError); // exiting stops the app too
  console.log(
    `Local backend on ${backend.url} in ${Math.round(performance.now() - started)} ms` +
      ` (inbox: ${backend.url}/inbox, keys: npm run local prints them).`,
  );
}

const logins = DEMO_LOGINS.map(
  (l) => `    ${l.email.padEnd(20)} ${l.password.padEnd(20)} ${l.name}`,
);
console.log(`
  App:       http://localhost:5173 (sign in at http://localhost:5173/sign-in)
  Accounts:  from supabase/seed.sql (a fresh database; npm run local:reset starts over)
${logins.join("\n")}
  Mail:      ${URL_54321}/inbox (Mailpit API: http://127.0.0.1:${config.localSmtp.port})
  Database:  ${DB_URL}
`);

// The Worker's first request loads every route module and library into workerd: 1.5 s however
// late it comes. Asked for here, once the backend answers and as soon as the app listens, it is
// done before a developer opens the page, and so is Vite's transform of the browser's modules the
// page names (the entry, the root, the route; Vite follows their imports). Opened 3 s after the
// app printed its address, the first page then answered in 0.07 s instead of 1.48 s, and
// hydrated in 0.57-0.63 s instead of 0.90-0.97 s (two alternating pairs each); opened after 1.5 s,
// it answered in 1.0-1.1 s instead of 1.5 s.
void firstRequest();

async function firstRequest() {
  while (!stopping) {
    try {
      const page = await fetch(APP_URL, { signal: AbortSignal.timeout(60_000) });
      const html = await page.text();
      await Promise.all(
        browserModules(html).map((path) =>
          fetch(new URL(path, APP_URL)).then(
            (response) => response.body?.cancel(),
            () => {}, // the browser will ask again
          ),
        ),
      );
      return;
    } catch {
      await sleep(200); // not listening yet
    }
  }
}

/** The modules a page's HTML has the browser load: its modulepreloads and module script imports. */
function browserModules(html: string): string[] {
  const found = html.matchAll(/rel="modulepreload" href="([^"]+)"|import(?:\(| )"([^"]+)"/g);
  return [...new Set([...found].map((match) => match[1] ?? match[2] ?? ""))].filter(Boolean);
}

// Starts the one local backend a test run uses: in memory, on 127.0.0.1:5178, with the app's
// migrations and every tests/fixtures/*.sql and packages/*/test/fixtures/*.sql applied.
// Stopped when the run ends.
//
// Without supabase/seed.sql, on purpose: tests make the users and notes they need (random
// addresses, tests/support/backend.ts), so no test depends on the demo data or sees it in a
// listing, and editing the demo data never breaks a test. tests/database/seed.test.ts proves the
// seed on a backend of its own.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createLocalBackend, loadConfig } from "@edge-notes/supabase-local";
import {
  QUICK_PASSWORD_HASH_COST,
  TEST_RATE_LIMITS,
  TEST_RECOVERY_CODES,
} from "../support/backend.ts";

/** The project the test backend serves: this repository's supabase/ (config, migrations, seed). */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

// Beside the app under test (5179), below Linux's ephemeral range (32768-60999: a port of it can be
// held by any outbound connection) and off the Supabase CLI's ports (54329 is its pooler's).
export const TEST_BACKEND_PORT = Number(process.env.TEST_BACKEND_PORT ?? 5178);

export default async function setup() {
  const fixtures = [
    join(ROOT, "tests/fixtures"),
    ...workspaces().map((dir) => join(dir, "test/fixtures")),
  ].flatMap(sqlFiles);
  const started = performance.now();
  const backend = await createLocalBackend({
    projectDir: ROOT,
    port: TEST_BACKEND_PORT,
    host: "127.0.0.1",
    seed: false,
    fixtures,
    config: {
      auth: {
        additionalRedirectUrls: redirectUrls(),
        webauthn: { rpOrigins: webauthnOrigins() },
        // As a project that asks for a reauthentication code to change the password of a session
        // older than 24 hours; fresh test sessions are never that old unless a test ages them.
        email: { securePasswordChange: true },
        // Every test file signs in and verifies codes from 127.0.0.1 (config.toml has the hosted
        // limits, tested on backends of their own).
        rateLimit: TEST_RATE_LIMITS,
        passwordHashCost: QUICK_PASSWORD_HASH_COST,
        mfa: { recoveryCodes: TEST_RECOVERY_CODES },
      },
    },
  });
  if (process.env.LOCAL_BACKEND_TIMING) {
    console.log(
      `[local backend] up at ${backend.url} in ${Math.round(performance.now() - started)} ms`,
    );
  }
  return () => backend.close();
}

/** The workspace packages (package.json "workspaces": packages/*), each may bring test fixtures. */
function workspaces(): string[] {
  const packages = join(ROOT, "packages");
  if (!existsSync(packages)) return [];
  return readdirSync(packages)
    .sort()
    .map((name) => join(packages, name));
}

/** The .sql files of a directory, in name order (none when it does not exist). */
function sqlFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith(".sql"))
    .sort()
    .map((name) => join(dir, name));
}

/** config.toml's WebAuthn origins, plus the app under test when TEST_APP_PORT moved it off 5179. */
function webauthnOrigins(): string[] {
  const listed = loadConfig({ projectDir: ROOT }).auth.webauthn.rpOrigins;
  const port = process.env.TEST_APP_PORT;
  if (!port) return listed;
  return [...listed, `http://localhost:${port}`, `http://127.0.0.1:${port}`];
}

/** config.toml's allow-list, plus the app under test when TEST_APP_PORT moved it off 5179. */
function redirectUrls(): string[] {
  const listed = loadConfig({ projectDir: ROOT }).auth.additionalRedirectUrls;
  const port = process.env.TEST_APP_PORT;
  if (!port) return listed;
  return [...listed, `http://localhost:${port}/**`, `http://127.0.0.1:${port}/**`];
}

import { existsSync, mkdirSync } from "node:fs";
import { defineConfig } from "vitest/config";
import ProjectOrder from "./tests/setup/sequencer.ts";

// The tests' temporary projects, data directories and CLI workdirs (everything under os.tmpdir())
// go to tmpfs where the machine has one, as the test backends' scratch directories already do:
// each copies a start snapshot of about 1,100 files, a second of system time on a VM's disk and a
// tenth of one in memory (6 s of CPU per run of the local project). Inherited by the test threads
// and every process they start.
if (!process.env.TMPDIR && existsSync("/dev/shm")) {
  process.env.TMPDIR = "/dev/shm/edge-notes-tests";
  mkdirSync(process.env.TMPDIR, { recursive: true });
}

// One test run = one local backend (tests/setup/local-backend.ts, in memory, port 5178) shared
// by every project. Each folder under tests/ is a project with its own environment, and so is the
// local backend's package:
//   tests/unit                      pure app code and Worker-level tests inside workerd
//   tests/database                  the app's schema (supabase/migrations) through the real clients
//   tests/integration               the whole Worker (workerd) + local backend, through HTTP
//   packages/supabase-local/test    the local backend itself ("local"), driven by supabase-js
// tests/e2e (a real browser against the built app) is not part of it: `npm run test:e2e`.
//
// The projects that run in Node keep their transformed modules on disk between runs (Vitest's
// fsModuleCache, in node_modules/.experimental-vitest-cache, keyed by each file's content and
// dropped when dependencies are reinstalled): a second run transforms 11 s of modules instead of
// 23 s and imports them in 41-46 s instead of 55-62 s (summed over the workers). The unit project
// cannot: its files are read inside workerd, which does not see that folder.
export default defineConfig({
  test: {
    globalSetup: ["tests/setup/local-backend.ts"],
    // Test files mostly wait on the local backend and workerd (other threads and processes), so
    // more workers than cores keep both cores busy: on 2 cores, 341 s against 428 s with vitest's
    // default (cores - 1 = one worker), same 1165 tests. Four rather than three: the integration
    // files, last, wait on HTTP most of the time, and with three the cores idled a fifth of their
    // last 40 s (`npm test` on a fresh clone, four runs each, interleaved: 20 -> 15 idle
    // core-seconds, 135 -> 131 s on average).
    maxWorkers: 4,
    sequence: { sequencer: ProjectOrder },
    projects: [
      "tests/*/vitest.config.ts",
      "!tests/e2e/vitest.config.ts",
      "packages/*/vitest.config.ts",
    ],
  },
});

import { defineProject } from "vitest/config";

// The app's database (supabase/migrations: tables, row-level security, the functions the data API
// exposes), driven by the real @supabase/supabase-js against the one in-memory backend the root
// globalSetup starts, or against a backend of its own where a test needs other settings.
export default defineProject({
  test: {
    name: "database",
    environment: "node",
    // Files share their worker's module cache (supabase-js, the backend's modules): none keeps
    // module state or mocks, and importing everything again per file was a third of the run.
    // Worker threads cost less to start and to talk to than child processes (181 s -> 163 s).
    isolate: false,
    // transformed modules kept between runs (see the root vitest.config.ts)
    experimental: { fsModuleCache: true },
    pool: "threads",
    include: ["**/*.test.ts"],
    testTimeout: 20_000,
  },
});

import { defineProject } from "vitest/config";

// The whole Worker (workerd, started by tests/setup/app.ts on :5179) against the test backend
// (:5178, started once by the root globalSetup), driven over HTTP with real cookies.
export default defineProject({
  test: {
    name: "integration",
    environment: "node",
    // Files share their worker's module cache (supabase-js, the backend's modules): none keeps
    // module state or mocks, and importing everything again per file was a third of the run.
    // Worker threads cost less to start and to talk to than child processes (181 s -> 163 s).
    isolate: false,
    // transformed modules kept between runs (see the root vitest.config.ts)
    experimental: { fsModuleCache: true },
    pool: "threads",
    include: ["**/*.test.ts"],
    globalSetup: ["../setup/app.ts"],
    setupFiles: ["support/app-ready.ts", "support/no-keep-alive.ts"],
    testTimeout: 20_000,
  },
});

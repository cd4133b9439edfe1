import { defineProject } from "vitest/config";

// The local backend (src/), driven by the real @supabase/supabase-js over HTTP against the one
// in-memory backend the repository's root globalSetup starts on 127.0.0.1:5178 (TEST_BACKEND_PORT),
// or against a backend of its own in memory. test/rest/ is the data API's part of the project.
// Run it with the repository's others (`npm test`) or alone: `npx vitest run --project local`.
export default defineProject({
  test: {
    name: "local",
    environment: "node",
    // Files share their worker's module cache (supabase-js, the backend's modules): none keeps
    // module state or mocks, and importing everything again per file was a third of the run.
    // Worker threads cost less to start and to talk to than child processes (181 s -> 163 s).
    isolate: false,
    // transformed modules kept between runs (see the root vitest.config.ts)
    experimental: { fsModuleCache: true },
    pool: "threads",
    include: ["test/**/*.test.ts"],
    testTimeout: 20_000,
  },
});

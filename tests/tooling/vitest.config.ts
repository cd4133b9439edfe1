import { defineProject } from "vitest/config";

// The project's own tooling (deploy scripts), in Node.
export default defineProject({
  test: {
    name: "tooling",
    environment: "node",
    // Files share their worker's module cache (supabase-js, the backend's modules): none keeps
    // module state or mocks, and importing everything again per file was a third of the run.
    // Worker threads cost less to start and to talk to than child processes (181 s -> 163 s).
    isolate: false,
    // transformed modules kept between runs (see the root vitest.config.ts)
    experimental: { fsModuleCache: true },
    pool: "threads",
    include: ["**/*.test.ts"],
  },
});

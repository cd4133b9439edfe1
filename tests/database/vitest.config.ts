import { defineProject } from "vitest/config";

// The app's database (supabase/migrations: tables, row-level security, the functions the data API
// exposes), driven by the real @supabase/supabase-js against the one in-memory backend the root
// globalSetup starts, or against a backend of its own where a test needs other settings.
export default defineProject({
  test: {
    name: "database",
    environment: "node",
    include: ["**/*.test.ts"],
    testTimeout: 20_000,
  },
});

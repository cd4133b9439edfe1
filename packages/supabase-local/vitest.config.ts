import { defineProject } from "vitest/config";

// The local backend (local/), driven by the real @supabase/supabase-js over HTTP against the one
// in-memory backend the root globalSetup starts on 127.0.0.1:54329. tests/local/rest/ is the data
// API's part of the same project.
export default defineProject({
  test: {
    name: "local",
    environment: "node",
    include: ["**/*.test.ts"],
    testTimeout: 20_000,
  },
});

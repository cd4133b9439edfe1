import { defineProject } from "vitest/config";

// The data API (local/rest) in Node: pure parser/SQL tests, fuzzing, and supabase-js end to end.
export default defineProject({
  test: { name: "local-rest", environment: "node", include: ["tests/local/rest/**/*.test.ts"] },
});

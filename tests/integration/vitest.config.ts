import { defineProject } from "vitest/config";

// The whole Worker (workerd, started by tests/setup/app.ts on :5179) against the test backend
// (:54329, started once by the root globalSetup), driven over HTTP with real cookies.
export default defineProject({
  test: {
    name: "integration",
    environment: "node",
    include: ["**/*.test.ts"],
    globalSetup: ["../setup/app.ts"],
    testTimeout: 20_000,
  },
});

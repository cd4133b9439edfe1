import { defineProject } from "vitest/config";

// The project's own tooling (deploy scripts), in Node.
export default defineProject({
  test: {
    name: "tooling",
    environment: "node",
    include: ["**/*.test.ts"],
  },
});

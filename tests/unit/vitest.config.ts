import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineProject } from "vitest/config";

// Unit and Worker-level tests, run inside workerd (the same runtime as production).
export default defineProject({
  plugins: [
    cloudflareTest({
      miniflare: { compatibilityDate: "2026-08-15", compatibilityFlags: ["nodejs_compat"] },
    }),
  ],
  test: { name: "unit", include: ["**/*.test.ts"] },
});

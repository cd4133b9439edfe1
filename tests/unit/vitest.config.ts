import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineProject } from "vitest/config";

// Unit and Worker-level tests, run inside workerd (the same runtime as production).
export default defineProject({
  plugins: [
    cloudflareTest({
      miniflare: { compatibilityDate: "2026-08-15", compatibilityFlags: ["nodejs_compat"] },
    }),
  ],
  test: {
    name: "unit",
    include: ["**/*.test.ts"],
    // One module graph for all files (no test mocks modules or keeps module state): importing the
    // app's modules again per file was most of this project's time (38 s of CPU against 22 s).
    isolate: false,
    // workerd asks Vitest for each module it imports, one request each, and React Router (8) and
    // zod ship as hundreds of small modules. Bundled once per install (node_modules/.vite), the
    // libraries the tests reach are a few modules. `npx vitest run --project unit` (with the shared
    // backend's start), two runs each, taking turns (2026-11-26): 20.1-21.2 s -> 16.0-16.9 s, and
    // 24.4-25.8 s of CPU -> 18.9-19.8 s.
    deps: {
      optimizer: {
        ssr: {
          enabled: true,
          include: ["react-router", "@supabase/ssr", "@supabase/supabase-js", "zod", "jose"],
        },
      },
    },
  },
});

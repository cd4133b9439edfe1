import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// `npm run test:e2e`: the built app in `vite preview` and the local backend (both started once by
// setup/servers.ts), driven by a real headless Chromium. Not part of `npm test` (the root config
// leaves this folder out): it needs a browser and a production build.
export default defineConfig({
  root: fileURLToPath(new URL("../..", import.meta.url)),
  test: {
    name: "e2e",
    environment: "node",
    include: ["tests/e2e/**/*.test.ts"],
    globalSetup: ["tests/e2e/setup/servers.ts"],
    // One Chromium per worker; two fit two cores.
    maxWorkers: 2,
    // A browser flow takes 10-50 s here; CI machines ran the suite at about half this speed.
    testTimeout: 120_000,
    hookTimeout: 90_000,
  },
});

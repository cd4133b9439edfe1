import { cloudflare } from "@cloudflare/vite-plugin";
import { reactRouter } from "@react-router/dev/vite";
import tailwindcss from "@tailwindcss/vite";
import { defineConfig, type UserConfig } from "vite";

/**
 * Vite minifies only the client by default; the Worker bundle is uploaded and parsed on every
 * cold start, so it is minified too (`npm run bench` checks its size budget).
 */
export const environments: UserConfig["environments"] = { ssr: { build: { minify: true } } };

// The Cloudflare plugin runs the server build inside workerd (dev and preview), as the "ssr"
// environment React Router builds into. CLOUDFLARE_ENV picks a wrangler.toml [env.*] (tests: "test").
// `vite preview` serves what the build made and needs only the Cloudflare plugin: React Router's
// would start its route-type generator, whose watcher rewrites .react-router/types, and previews
// started side by side (the end-to-end stacks, the bench) would race on that folder. For the same
// reason a preview keeps workerd's local state (cache, traces) in memory, not in .wrangler/state,
// and opens no inspector (each would try port 9229 at once).
export default defineConfig(({ isPreview }) => ({
  plugins: [
    cloudflare({
      viteEnvironment: { name: "ssr" },
      persistState: !isPreview,
      ...(isPreview ? { inspectorPort: false as const } : {}),
    }),
    ...(isPreview ? [] : [tailwindcss(), reactRouter()]),
  ],
  server: { port: 5173, strictPort: true },
  environments,
}));

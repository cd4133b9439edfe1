import { cloudflare } from "@cloudflare/vite-plugin";
import { reactRouter } from "@react-router/dev/vite";
import tailwindcss from "@tailwindcss/vite";
import { defineConfig } from "vite";

// The Cloudflare plugin runs the server build inside workerd (dev and preview), as the "ssr"
// environment React Router builds into. CLOUDFLARE_ENV picks a wrangler.toml [env.*] (tests: "test").
export default defineConfig({
  plugins: [cloudflare({ viteEnvironment: { name: "ssr" } }), tailwindcss(), reactRouter()],
  server: { port: 5173, strictPort: true },
  // Vite minifies only the client by default; the Worker bundle is uploaded and parsed on every
  // cold start, so it is minified too (`npm run bench` checks its size budget).
  environments: { ssr: { build: { minify: true } } },
});

// A bench-only build of the app (`react-router build bench/get-user`), never deployed: the same
// app, Worker entry and wrangler.toml, but the root middleware's session check is the one the
// Supabase UI library's React Router blocks use, `getUser()` on every request (an auth round
// trip), instead of our `getClaims()` (verified locally against the cached JWKS). `npm run bench`
// serves it beside the production build and loads the same signed-in page on both.
import { fileURLToPath } from "node:url";
import { cloudflare } from "@cloudflare/vite-plugin";
import { reactRouter } from "@react-router/dev/vite";
import tailwindcss from "@tailwindcss/vite";
import { defineConfig, type Plugin } from "vite";
import { environments, streamingRendererOnly, supabaseAuthAndRestOnly } from "../../vite.config";

const APP_CLIENT = fileURLToPath(new URL("../../app/lib/supabase.server.ts", import.meta.url));
const MIDDLEWARE = fileURLToPath(new URL("../../app/lib/auth.server.ts", import.meta.url));
const BENCH_CLIENT = fileURLToPath(new URL("./supabase.server.ts", import.meta.url));

export default defineConfig(({ isPreview }) => ({
  // The app's plugins, with wrangler.toml found from here (this folder is the Vite root); a preview
  // needs only the Cloudflare one, as the app's (../../vite.config.ts).
  plugins: [
    cloudflare({
      viteEnvironment: { name: "ssr" },
      persistState: !isPreview,
      ...(isPreview ? { inspectorPort: false as const } : {}),
      configPath: fileURLToPath(new URL("../../wrangler.toml", import.meta.url)),
    }),
    ...(isPreview
      ? []
      : [
          tailwindcss(),
          reactRouter(),
          streamingRendererOnly(),
          supabaseAuthAndRestOnly(),
          getUserOnEveryRequest(),
        ]),
  ],
  // The rest as the app builds (the Worker minified like the one that ships).
  environments,
}));

/**
 * Gives the middleware (app/lib/auth.server.ts, and only it) bench/get-user/supabase.server.ts in
 * place of app/lib/supabase.server.ts. The build fails if the swap never happened (the app's
 * modules moved): the arm would otherwise measure our own pattern twice.
 */
function getUserOnEveryRequest(): Plugin {
  let swapped = false;
  return {
    name: "bench:get-user-on-every-request",
    enforce: "pre",
    async resolveId(source, importer, options) {
      if (importer !== MIDDLEWARE) return null;
      const resolved = await this.resolve(source, importer, { ...options, skipSelf: true });
      if (resolved?.id !== APP_CLIENT) return null;
      swapped = true;
      return BENCH_CLIENT;
    },
    buildEnd(error) {
      if (!error && this.environment.name === "ssr" && !swapped) {
        this.error(`${MIDDLEWARE} no longer imports ${APP_CLIENT}: update bench/get-user.`);
      }
    },
  };
}

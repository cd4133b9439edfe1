import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig, type Plugin, type PluginOption, type UserConfig } from "vite";

/**
 * The browser's build puts React, React DOM, React Router and React's scheduler in one chunk of
 * their own, `framework-<hash>.js`, which every page loads first. Left to Rolldown they were spread
 * over five chunks (entry.client, components, errorBoundaries, lib, jsx-runtime) named after
 * whichever module came first: one file compresses better than five (gzip 114.9 -> 111.8 KiB on
 * `/`, 117.5 -> 114.3 on `/sign-in`), a page asks for three fewer, and a release that changes the
 * app's code alone leaves the framework's file, and its hash, as browsers have cached it.
 * `npm run bench` reports the framework's share of each page's first load by this name.
 */
const FRAMEWORK_CHUNK = "framework";
const FRAMEWORK_MODULES = /[\\/]node_modules[\\/](?:react|react-dom|react-router|scheduler)[\\/]/;

/**
 * Vite minifies only the client by default; the Worker bundle is uploaded and parsed on every
 * cold start, so it is minified too (`npm run bench` checks its size budget).
 */
export const environments: UserConfig["environments"] = {
  ssr: { build: { minify: true } },
  client: {
    build: {
      rolldownOptions: {
        output: {
          codeSplitting: { groups: [{ name: FRAMEWORK_CHUNK, test: FRAMEWORK_MODULES }] },
        },
      },
    },
  },
};

/**
 * The dev server transforms every route module, and all they import, for the Worker's first
 * request (React Router's server build imports them all): about 3 s after it starts listening.
 * Warmed up, that work starts with the server. With this and the dependency scan at the start
 * (react-router.config.ts), a first page opened a second and a half after the server printed its
 * address loaded in 3.8–4.0 s instead of 5.0–5.6 s, and the address came 0.7–0.9 s later: 0.4 to
 * 0.8 s sooner in all (three runs each). Warming the browser's modules too delayed the server's
 * start by 1.5–4.5 s for no faster page.
 * Vite warms a server environment's files alone, not what they import (`preTransformRequests` is
 * on for the browser only), so the pre-bundled libraries (React DOM's server renderer, supabase-js,
 * the Markdown parser) were still transformed at the first request, which took 2.0–2.3 s however
 * long after the start it came. With them warmed too it takes 1.5 s, and a page opened 1.5 s after
 * the address loads 0.6–0.8 s sooner (three alternating pairs; no change for one opened at once).
 */
const SERVER_WARMUP = ["./app/root.tsx", "./app/routes/**/*.{ts,tsx}"];

/**
 * `npm run typecheck` runs `react-router typegen --mode typegen`. Typegen reads only React Router's
 * own config and routes; of this file it asks only whether React Router's RSC plugin is in it
 * (it is not), and resolving the whole config for that loaded the Cloudflare plugin, and with it
 * all of wrangler: 4 to 6 s of CPU in every `npm test`. In that mode the config has no plugins.
 */
const TYPEGEN_MODE = "typegen";

// The Cloudflare plugin runs the server build inside workerd (dev and preview), as the "ssr"
// environment React Router builds into (CLOUDFLARE_ENV would pick a wrangler.toml [env.*]).
// `vite preview` serves what the build made and needs only the Cloudflare plugin: React Router's
// would start its route-type generator, whose watcher rewrites .react-router/types, and previews
// started side by side (the end-to-end stacks, the bench) would race on that folder. For the same
// reason a preview keeps workerd's local state (cache, traces) in memory, not in .wrangler/state,
// and opens no inspector (each would try port 9229 at once).
export default defineConfig(async ({ command, isPreview, mode }) => {
  if (mode === TYPEGEN_MODE) return {};
  const { cloudflare } = await import("@cloudflare/vite-plugin");
  return {
    plugins: [
      cloudflare({
        viteEnvironment: { name: "ssr" },
        persistState: !isPreview,
        ...(isPreview ? { inspectorPort: false as const } : {}),
      }),
      ...(isPreview ? [] : await buildPlugins()),
    ],
    server: { port: 5173, strictPort: true },

    environments: {
      ...environments,
      ssr: {
        ...environments?.ssr,
        // Not in a build: React Router's child compiler there takes this config too, and warmed
        // imports it cannot resolve (110 "Pre-transform error" lines in every build).
        dev: { warmup: SERVER_WARMUP, preTransformRequests: command === "serve" },
      },
    },
  };
});

/**
 * The plugins that build the app, loaded only where they run: a preview serves a finished build,
 * and loading React Router's and Tailwind's plugins there slowed every `vite preview` start (the
 * end-to-end stacks, the bench): 1.57 -> 1.39 s until it serves (medians, four alternating pairs).
 */
async function buildPlugins(): Promise<PluginOption[]> {
  const [{ reactRouter }, { default: tailwindcss }] = await Promise.all([
    import("@react-router/dev/vite"),
    import("@tailwindcss/vite"),
  ]);
  return [tailwindcss(), reactRouter(), streamingRendererOnly(), supabaseAuthAndRestOnly()];
}

/**
 * In the Worker build, `react-dom/server` is React's streaming renderer alone, and the one React
 * builds for Node. For workerd it resolves to react-dom/server.edge.js, which also loads the legacy
 * renderToString build for two exports the app never calls (app/entry.server.tsx streams with
 * renderToReadableStream): 92 KiB of the upload (28 KiB gzipped). And the edge build turns every
 * attribute name, value and text it writes into bytes with its own `TextEncoder.encode()` call, a
 * new array each: in workerd a call costs about 1.1 µs, and a list of 20 notes makes thousands. The
 * Node build (same API, same HTML, about the same size) writes those strings into one buffer with
 * `encodeInto()`: the Worker's CPU for `/notes` fell by a fifth (docs/decisions/043-notes-list-cpu.md).
 * It needs `nodejs_compat` (wrangler.toml), for its `stream`, `util`, `crypto` and `async_hooks`.
 * It is changed to gather the strings it writes before making them bytes (stringsGathered).
 * Builds only, so development keeps React's development build.
 */
export function streamingRendererOnly(): Plugin {
  const reactDom = dirname(createRequire(import.meta.url).resolve("react-dom/package.json"));
  const streaming = join(reactDom, "cjs/react-dom-server.node.production.js");
  return {
    name: "edge-notes:streaming-renderer-only",
    apply: "build",
    enforce: "pre",
    resolveId(source) {
      if (this.environment.name !== "ssr" || source !== "react-dom/server") return null;
      return streaming;
    },
    transform(code, id) {
      return id === streaming ? stringsGathered(code) : null;
    },
  };
}

/**
 * React's Node renderer, changed to write as React's own renderer for Bun does: every piece of
 * HTML it writes (attribute names and values, text, and the fixed pieces such as `="` that it
 * keeps as bytes) is gathered as a string, and each 2 KiB of them becomes bytes in one `encode()`.
 * The Node build calls `encodeInto()` once per piece, into a new view of its buffer, and counts
 * each string's bytes with `Buffer.byteLength()` (for when to stream a large Suspense boundary
 * apart): thousands of calls from JavaScript into workerd for a page of 20 notes, about an eighth
 * of the Worker's CPU on `/notes` (docs/decisions/043-notes-list-cpu.md). The bytes written, and
 * the byte counts, are the same: `tests/tooling/worker-renderer.test.ts` compares the pages. Each
 * piece of React's code this changes is named exactly; if a React release changes one, the build
 * fails here rather than writing something else.
 */
export function stringsGathered(code: string): string {
  const changes: [from: string, to: string][] = [
    [
      "function writeChunk(destination, chunk) {",
      `var gathered = "";
function writeGathered(destination) {
  if (gathered !== "") {
    var text = gathered;
    gathered = "";
    writeBytes(destination, textEncoder.encode(text));
  }
}
function writeChunk(destination, chunk) {
  if ("string" === typeof chunk) {
    gathered += chunk;
    2048 < gathered.length && writeGathered(destination);
    return;
  }
  writeGathered(destination);
  writeBytes(destination, chunk);
}
function writeBytes(destination, chunk) {`,
    ],
    [
      "function completeWriting(destination) {",
      "function completeWriting(destination) {\n  writeGathered(destination);",
    ],
    [
      "function stringToPrecomputedChunk(content) {\n  return textEncoder.encode(content);",
      "function stringToPrecomputedChunk(content) {\n  return content;",
    ],
    [
      'return "string" === typeof chunk\n    ? Buffer.byteLength(chunk, "utf8")',
      'return "string" === typeof chunk\n    ? (ASCII_ONLY.test(chunk) ? chunk.length : Buffer.byteLength(chunk, "utf8"))',
    ],
    [
      "function byteLengthOfChunk(chunk) {",
      "var ASCII_ONLY = /^[\\x00-\\x7f]*$/;\nfunction byteLengthOfChunk(chunk) {",
    ],
  ];
  let changed = code;
  for (const [from, to] of changes) {
    if (changed.split(from).length !== 2) {
      throw new Error(`React's Node renderer changed: "${from.split("\n")[0]}" is not there once`);
    }
    changed = changed.replace(from, () => to);
  }
  return changed;
}

/**
 * The Worker uses supabase-js for Auth and the REST API only, yet supabase-js builds a Realtime
 * and a Storage client in its constructor (once per request here), so the Worker bundled them, with
 * Phoenix, Iceberg and the Edge Functions client: 86 KiB of the upload (23 KiB gzipped). In the
 * Worker build these packages resolve to stand-ins (workers/unused-supabase-clients.ts) that cost
 * nothing to build and refuse any use in a sentence. The browser keeps the real clients.
 * Builds only, as the dev server's pre-bundled supabase-js already holds its own copies; the built
 * Worker is what `npm run preview`, the end-to-end tests and the bench run.
 */
export const SUPABASE_CLIENTS_LEFT_OUT = [
  "@supabase/realtime-js",
  "@supabase/storage-js",
  "@supabase/functions-js",
];

export function supabaseAuthAndRestOnly(): Plugin {
  const standIns = fileURLToPath(new URL("./workers/unused-supabase-clients.ts", import.meta.url));
  const leftOut = new Set(SUPABASE_CLIENTS_LEFT_OUT);
  return {
    name: "edge-notes:supabase-auth-and-rest-only",
    apply: "build",
    enforce: "pre",
    resolveId(source) {
      if (this.environment.name !== "ssr" || !leftOut.has(source)) return null;
      return standIns;
    },
  };
}

// What ships: the Worker upload as `wrangler deploy --dry-run` builds it, and the JavaScript a
// browser loads before a public page is interactive.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { init, parse } from "es-module-lexer";
import { run } from "../tests/support/preview.ts";

await init; // es-module-lexer's WebAssembly, once

/**
 * The brotli quality first-load JavaScript is measured at. Cloudflare does not publish the quality
 * it compresses static assets with: its compression docs
 * (developers.cloudflare.com/speed/optimization/content/compression/) list the content types and
 * the algorithms, and the Compression Rules that choose between them, but no level. Without a
 * figure to cite, the bench takes the highest, 11, as the owner decided (issue 42): the budget is
 * then on the smallest size brotli can give, and a lower edge quality only makes the real bytes
 * larger.
 */
export const BROTLI_QUALITY = 11;

function brotliKib(code: string): number {
  const params = { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY };
  return brotliCompressSync(code, { params }).byteLength / 1024;
}

export interface WorkerUpload {
  /** As Wrangler reports it ("Total Upload: … KiB / gzip: … KiB"): all modules, gzipped together. */
  kib: number;
  gzipKib: number;
  /** The largest modules of the upload (path, KiB). */
  largest: { path: string; kib: number }[];
  /** Every file of the upload, for the content checks. */
  files: { path: string; text: string }[];
}

/** `wrangler deploy --dry-run --outdir`: the exact bundle a deploy would upload, no account needed. */
export async function measureWorkerUpload(): Promise<WorkerUpload> {
  const outdir = mkdtempSync(join(tmpdir(), "bench-upload-"));
  try {
    const { code, output } = await run("wrangler", ["deploy", "--dry-run", "--outdir", outdir]);
    if (code !== 0) throw new Error(`wrangler deploy --dry-run failed (exit ${code}):\n${output}`);
    const total = parseTotalUpload(output);
    if (!total) throw new Error(`no "Total Upload" line in wrangler's output:\n${output}`);
    const files = listFiles(outdir).map((path) => ({
      path: relative(outdir, path),
      text: readFileSync(path, "utf8"),
      bytes: statSync(path).size,
    }));
    const largest = [...files]
      .sort((a, b) => b.bytes - a.bytes)
      .slice(0, 3)
      .map((file) => ({ path: file.path, kib: file.bytes / 1024 }));
    return { ...total, largest, files };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/** "Total Upload: 761.11 KiB / gzip: 214.77 KiB" (colours and all) -> the two numbers. */
export function parseTotalUpload(output: string): { kib: number; gzipKib: number } | null {
  const match = /Total Upload:\D*([\d.]+) KiB \/ gzip: ([\d.]+) KiB/.exec(
    stripVTControlCharacters(output),
  );
  return match ? { kib: Number(match[1]), gzipKib: Number(match[2]) } : null;
}

export function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

export interface FirstLoad {
  page: string;
  /** Every script the HTML loads before the page is interactive, with its gzipped size. */
  scripts: { url: string; gzipKib: number; brotliKib: number; supabase: boolean }[];
  gzipKib: number;
  /** Of gzipKib, the framework chunk's (React, React DOM, React Router: vite.config.ts). */
  frameworkGzipKib: number;
  /** The same at BROTLI_QUALITY, each file on its own. */
  brotliKib: number;
  /** Of gzipKib, everything but the framework chunk: the app's own code and Vite's helpers. */
  ownGzipKib: number;
}

/**
 * The JavaScript a first visit to `page` loads before the page is idle: the HTML's modulepreloads,
 * script tags and the imports of its inline module scripts, followed through the static imports
 * of each chunk (a dynamic `import()` stays out: it runs later, as the Supabase client's does).
 * Each file is gzipped on its own, as a server compresses it for the browser.
 */
export async function measureFirstLoad(origin: string, page: string): Promise<FirstLoad> {
  const response = await fetch(new URL(page, origin));
  const html = await response.text();
  if (!response.ok) throw new Error(`GET ${page}: ${response.status}`);
  const queue = initialScripts(html).map((src) => new URL(src, new URL(page, origin)).href);
  const seen = new Set<string>();
  const scripts: FirstLoad["scripts"] = [];
  while (queue.length) {
    const url = queue.shift() as string;
    if (seen.has(url)) continue;
    seen.add(url);
    const script = await fetch(url);
    if (!script.ok) throw new Error(`GET ${url}: ${script.status}`);
    const code = await script.text();
    scripts.push({
      url: new URL(url).pathname,
      gzipKib: gzipSync(code).byteLength / 1024,
      brotliKib: brotliKib(code),
      supabase: isSupabaseClient(new URL(url).pathname, code),
    });
    for (const imported of staticImports(code)) queue.push(new URL(imported, url).href);
  }
  const gzipKib = scripts.reduce((sum, s) => sum + s.gzipKib, 0);
  const frameworkGzipKib = scripts
    .filter((s) => isFrameworkChunk(s.url))
    .reduce((sum, s) => sum + s.gzipKib, 0);
  return {
    page,
    scripts,
    gzipKib,
    frameworkGzipKib,
    brotliKib: scripts.reduce((sum, s) => sum + s.brotliKib, 0),
    ownGzipKib: gzipKib - frameworkGzipKib,
  };
}

/**
 * Whether a script is the browser build's framework chunk, `/assets/framework-<hash>.js`, as
 * vite.config.ts names it (FRAMEWORK_CHUNK; the bench fails a page whose first load has none).
 */
export function isFrameworkChunk(path: string): boolean {
  return /\/framework-[\w-]+\.js$/.test(path);
}

/** Script URLs in an HTML document: modulepreloads, `<script src>`, inline module imports. */
export function initialScripts(html: string): string[] {
  const urls = new Set<string>();
  for (const tag of html.match(/<link\b[^>]*>/gi) ?? []) {
    if (/\brel=["']?modulepreload\b/i.test(tag)) {
      const href = /\bhref=["']([^"']+)["']/i.exec(tag)?.[1];
      if (href) urls.add(href);
    }
  }
  for (const [, attributes = "", body = ""] of html.matchAll(
    /<script\b([^>]*)>([\s\S]*?)<\/script>/gi,
  )) {
    const src = /\bsrc=["']([^"']+)["']/i.exec(attributes)?.[1];
    if (src) urls.add(src);
    // The inline bootstrap script starts the app with a top-level `import("/assets/entry.client…")`.
    else if (/\btype=["']?module\b/i.test(attributes)) {
      for (const specifier of moduleImports(body, true)) urls.add(specifier);
    }
  }
  return [...urls];
}

/** Static `import … from "x"` / `import "x"` / `export … from "x"` specifiers of a module. */
export function staticImports(code: string): string[] {
  return moduleImports(code, false);
}

function moduleImports(code: string, withDynamic: boolean): string[] {
  const [imports] = parse(code);
  return imports
    .filter((entry) => entry.d === -1 || (withDynamic && entry.d >= 0))
    .map((entry) => entry.n)
    .filter((specifier): specifier is string => specifier !== undefined);
}

/** The browser Supabase client: its chunk (app/lib/supabase.client.ts) or supabase-js's code. */
export function isSupabaseClient(path: string, code: string): boolean {
  return /supabase\.client/.test(path) || code.includes("supabase-js");
}

/**
 * Strings only the Supabase clients the Worker leaves out carry (vite.config.ts:
 * supabaseAuthAndRestOnly): Phoenix's join event (Realtime), Storage's upload header, and the Edge
 * Functions relay's error header.
 */
const LEFT_OUT_CLIENT_MARKERS = {
  Realtime: "phx_join",
  Storage: "x-upsert",
  "Edge Functions": "x-relay-error",
} as const;

/** Which of the Supabase clients the Worker leaves out this code holds. */
export function leftOutSupabaseClients(code: string): string[] {
  return Object.entries(LEFT_OUT_CLIENT_MARKERS)
    .filter(([, marker]) => code.includes(marker))
    .map(([client]) => client);
}

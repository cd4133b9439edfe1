// The Worker build renders pages with React's renderer for Node instead of the one for edge
// runtimes (streamingRendererOnly in vite.config.ts): in workerd the edge build's TextEncoder call
// per written string was a fifth of the Worker's CPU on /notes (docs/decisions/043-notes-list-cpu.md).
// It also gathers the strings that renderer writes before making them bytes (stringsGathered).
// Both are only sound while every renderer writes the same bytes for the same tree.
import { readFileSync } from "node:fs";
import Module, { createRequire } from "node:module";
import { dirname } from "node:path";
import { createElement as h, Suspense, use } from "react";
import { expect, test } from "vitest";

type Render = (
  element: ReturnType<typeof h>,
  options?: { nonce?: string },
) => Promise<ReadableStream<Uint8Array>>;

const require = createRequire(import.meta.url);

// vite.config.ts belongs to another TypeScript project (tsconfig.tooling.json): loaded by URL.
const viteConfig = (await import(new URL("../../vite.config.ts", import.meta.url).href)) as {
  streamingRendererOnly: () => { resolveId: unknown; transform: unknown };
  stringsGathered: (code: string) => string;
};

/** What the plugin hands the Worker build for `react-dom/server`. */
function workerRenderer(): string {
  const plugin = viteConfig.streamingRendererOnly();
  const resolveId = plugin.resolveId as (this: unknown, source: string) => string | null;
  const resolved = resolveId.call({ environment: { name: "ssr" } }, "react-dom/server");
  if (!resolved) throw new Error("the Worker build resolves react-dom/server to nothing");
  return resolved;
}

async function html(render: Render, element: ReturnType<typeof h>): Promise<string> {
  return new Response(await render(element, { nonce: "n0nce" })).text();
}

/** A page's worth of what the app renders: attributes to escape, text, a form, a script. */
const page = h(
  "main",
  { className: "py-8", "data-testid": "note-list" },
  h("h1", null, "Notes & “quotes” <b>"),
  h(
    "form",
    { method: "post", action: "/notes/1" },
    h("input", { type: "hidden", name: "returnTo", value: '/notes?q="x"&tag=<y>' }),
    h("button", { type: "submit", "aria-pressed": false, name: "intent", value: "pin" }, "Pin"),
  ),
  h("time", { dateTime: "2026-11-28T07:00:00Z" }, "28 Nov 2026"),
  h("p", null, "ünïcödé ✓ ", 42, " ", "𝒳".repeat(3000)),
);

test("the Worker build takes React's Node renderer, and only its streaming build", () => {
  const resolved = workerRenderer();
  expect(resolved).toMatch(/react-dom-server\.node\.production\.js$/);
  expect(
    typeof (require(resolved) as { renderToReadableStream?: unknown }).renderToReadableStream,
  ).toBe("function");
});

test("the Node and edge renderers write the same page", async () => {
  const node = require(workerRenderer()) as { renderToReadableStream: Render };
  const edge = require(
    workerRenderer().replace("server.node.production", "server.edge.production"),
  ) as { renderToReadableStream: Render };
  const fromNode = await html(node.renderToReadableStream, page);
  expect(fromNode).toContain("&amp;tag=&lt;y&gt;");
  expect(fromNode).toBe(await html(edge.renderToReadableStream, page));
});

/** The renderer as the Worker build has it: the plugin's transform applied, loaded as a module. */
function transformedRenderer(): { renderToReadableStream: Render } {
  const file = workerRenderer();
  const plugin = viteConfig.streamingRendererOnly();
  const transform = plugin.transform as (code: string, id: string) => string | null;
  const code = transform(readFileSync(file, "utf8"), file);
  if (!code) throw new Error("the plugin left React's Node renderer as it is");
  const loaded = new Module(file) as Module & { _compile(code: string, file: string): void };
  loaded.filename = file;
  loaded.paths = (
    Module as unknown as { _nodeModulePaths(dir: string): string[] }
  )._nodeModulePaths(dirname(file));
  loaded._compile(code, file);
  return loaded.exports as { renderToReadableStream: Render };
}

/** Text that arrives later, inside a Suspense boundary (what streaming and outlining act on). */
function later(text: string, ms: number) {
  const arriving = new Promise<string>((resolve) => setTimeout(() => resolve(text), ms));
  // (the element made here, not in Later: React's development build, which `react` is under
  // Vitest, cannot make elements while the production renderer renders)
  const Later = () => use(arriving);
  return h("p", null, h(Later));
}

test("strings gathered before they become bytes: the same page, streamed the same way", async () => {
  const node = require(workerRenderer()) as { renderToReadableStream: Render };
  const gathered = transformedRenderer();
  // a page, then one with boundaries that resolve later, one of them larger than React's
  // progressive chunk (12,800 bytes, counted in UTF-8: the non-ASCII text counts 3 or 4 a character)
  const streamed = () =>
    h(
      "main",
      null,
      page,
      // ready at once, but past the progressive chunk only when counted in bytes: streamed apart
      h(Suspense, { fallback: h("i", null, "…") }, h("p", null, "€".repeat(5000))),
      h(Suspense, { fallback: h("i", null, "…") }, later("small ✓", 5)),
      h(Suspense, { fallback: h("i", null, "…") }, later("ü€𝒳".repeat(2000), 10)),
      h(Suspense, { fallback: h("i", null, "…") }, later("a".repeat(13_000), 15)),
    );
  for (const tree of [() => page, streamed]) {
    const expected = await html(node.renderToReadableStream, tree());
    const actual = await html(gathered.renderToReadableStream, tree());
    expect(actual).toBe(expected);
  }
  expect(await html(gathered.renderToReadableStream, streamed())).toContain("<template");
});

test("a React release that changes what the transform names fails the build", () => {
  expect(() => viteConfig.stringsGathered("function writeChunk(destination, chunk) {}")).toThrow(
    /React's Node renderer changed: "function completeWriting\(destination\) \{" is not there once/,
  );
});

// The Worker build renders pages with React's renderer for Node instead of the one for edge
// runtimes (streamingRendererOnly in vite.config.ts): in workerd the edge build's TextEncoder call
// per written string was a fifth of the Worker's CPU on /notes (docs/decisions/043-notes-list-cpu.md).
// The swap is only sound while both renderers write the same bytes for the same tree.
import { createRequire } from "node:module";
import { createElement as h } from "react";
import { expect, test } from "vitest";

type Render = (
  element: ReturnType<typeof h>,
  options?: { nonce?: string },
) => Promise<ReadableStream<Uint8Array>>;

const require = createRequire(import.meta.url);

// vite.config.ts belongs to another TypeScript project (tsconfig.tooling.json): loaded by URL.
const viteConfig = (await import(new URL("../../vite.config.ts", import.meta.url).href)) as {
  streamingRendererOnly: () => { resolveId: unknown };
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

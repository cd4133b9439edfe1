// The build's static files (build/client), which Cloudflare serves without running the Worker:
// public/_headers lets a browser keep the content-hashed ones under /assets/ for a year, so a page
// load does not revalidate every script and the stylesheet again; everything else keeps
// Cloudflare's revalidating default. None is sniffed as another type than its own. React, React DOM
// and React Router arrive in one file of their own (vite.config.ts: FRAMEWORK_CHUNK), which a
// release of the app's code alone leaves as browsers cached it.
import { describe, expect, it } from "vitest";
import { get } from "./support/app";

const IMMUTABLE = "public, max-age=31536000, immutable";

describe("static assets", () => {
  it("every script and stylesheet a page loads is content-hashed and cached for a year", async () => {
    const { body } = await get("/");
    const assets = [...body.matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)].map((m) => m[1] ?? "");
    expect(assets.some((path) => path.endsWith(".js"))).toBe(true);
    expect(assets.some((path) => path.endsWith(".css"))).toBe(true);
    for (const path of new Set(assets)) {
      expect(path).toMatch(/-[\w-]{8}\.(?:js|css)$/);
      const { response } = await get(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("Cache-Control"), path).toBe(IMMUTABLE);
      expect(response.headers.get("X-Content-Type-Options"), path).toBe("nosniff");
    }
  });

  it("a file whose name has no hash, and the page itself, are not cached for a year", async () => {
    for (const path of ["/favicon.svg", "/"]) {
      const { response } = await get(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("Cache-Control") ?? "", path).not.toContain("immutable");
    }
    const favicon = (await get("/favicon.svg")).response;
    expect(favicon.headers.get("Cache-Control")).toContain("must-revalidate");
    expect(favicon.headers.get("X-Content-Type-Options")).toBe("nosniff");
  });

  it("the framework is one chunk every page loads, and no other script a page loads carries it", async () => {
    // Strings only their code has: React's element type, React DOM's root key, React Router's
    // hand-over from the server (window.__reactRouterContext).
    const FRAMEWORK_CODE = [
      "react.transitional.element",
      "__reactContainer$",
      "__reactRouterContext",
    ];
    const frameworks = new Set<string>();
    for (const page of ["/", "/sign-in"]) {
      const { body } = await get(page);
      const scripts = new Set(
        [...body.matchAll(/(?:href|src)="(\/assets\/[^"]+\.js)"/g)].map((m) => m[1] ?? ""),
      );
      const framework = [...scripts].filter((path) =>
        /^\/assets\/framework-[\w-]{8}\.js$/.test(path),
      );
      expect(framework, page).toHaveLength(1);
      frameworks.add(framework[0] ?? "");
      for (const path of scripts) {
        const code = (await get(path)).body;
        for (const marker of FRAMEWORK_CODE) {
          expect(code.includes(marker), `${marker} in ${path}`).toBe(framework.includes(path));
        }
      }
    }
    expect(frameworks.size).toBe(1);
  });

  it("the headers file is applied, not served", async () => {
    const { response, body } = await get("/_headers");
    expect(response.status).toBe(404);
    expect(body).not.toContain("max-age=31536000");
  });
});

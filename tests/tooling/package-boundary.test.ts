// The local backend is a package (packages/supabase-local) with a public API: the app, its tests,
// the benchmarks and the scripts import it by its name, never a path inside it. Every import of
// every TypeScript file outside packages/ is read (static, type-only, dynamic, re-exports,
// `new URL(…, import.meta.url)` and worker-thread paths) and resolved against the file's folder.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseSync } from "oxc-parser";
import { describe, expect, test } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PACKAGES = join(ROOT, "packages");
const SCANNED = ["app", "workers", "tests", "scripts", "bench"];
/** Files at the root that import code too. */
const ROOT_FILES = ["vite.config.ts", "vitest.config.ts", "react-router.config.ts"];

function sources(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sources(path);
    return /\.(ts|tsx|mts|js|mjs)$/.test(entry.name) ? [path] : [];
  });
}

/** The module specifiers a file names: imports, re-exports, import() and new URL("…", import.meta.url). */
function specifiers(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const { module } = parseSync(file, text);
  const named = [
    ...module.staticImports.map((i) => i.moduleRequest.value),
    ...module.staticExports.flatMap((e) => e.entries.flatMap((x) => x.moduleRequest?.value ?? [])),
    ...module.dynamicImports.map((i) =>
      text.slice(i.moduleRequest.start + 1, i.moduleRequest.end - 1),
    ),
  ];
  const urls = [...text.matchAll(/new URL\(\s*["'`]([^"'`]+)["'`]\s*,\s*import\.meta\.url/g)].map(
    (m) => m[1] as string,
  );
  return [...named, ...urls];
}

/** Whether a specifier written in `file` reaches into packages/<name>/ by path. */
function reachesIntoPackage(file: string, specifier: string): boolean {
  if (specifier.startsWith("@edge-notes/supabase-local/")) return true; // a subpath: not exported
  if (!specifier.startsWith(".") && !specifier.startsWith("/")) return false;
  const target = resolve(dirname(file), specifier);
  return target === PACKAGES || target.startsWith(`${PACKAGES}/`);
}

function offenders(files: string[]): string[] {
  return files.flatMap((file) =>
    specifiers(file)
      .filter((specifier) => reachesIntoPackage(file, specifier))
      .map((specifier) => `${relative(ROOT, file)}: ${specifier}`),
  );
}

describe("the local backend's package boundary", () => {
  const files = [
    ...SCANNED.flatMap((dir) => sources(join(ROOT, dir))),
    ...ROOT_FILES.map((name) => join(ROOT, name)).filter(existsSync),
  ];

  test("no file outside packages/ imports a path inside a package", () => {
    expect(files.length).toBeGreaterThan(50);
    expect(offenders(files)).toEqual([]);
  });

  test("the app's tests, scripts and benchmarks use it by name", () => {
    const byName = files.filter((file) => specifiers(file).includes("@edge-notes/supabase-local"));
    expect(byName.map((file) => relative(ROOT, file))).toEqual(
      expect.arrayContaining([
        "tests/setup/local-backend.ts",
        "scripts/dev.ts",
        "scripts/gen-types.ts",
        "bench/backend.ts",
      ]),
    );
  });

  test("the check catches deep imports, however they are written", () => {
    const file = join(ROOT, "tests", "support", "example.ts");
    for (const specifier of [
      "../../packages/supabase-local/src/server.ts",
      "../../packages/supabase-local/src/db/",
      "../../packages",
      "@edge-notes/supabase-local/src/keys.ts",
    ]) {
      expect(reachesIntoPackage(file, specifier), specifier).toBe(true);
    }
    for (const specifier of ["@edge-notes/supabase-local", "./backend.ts", "../fixtures/a.sql"]) {
      expect(reachesIntoPackage(file, specifier), specifier).toBe(false);
    }
    expect(
      specifiers(join(ROOT, "scripts", "dev.ts")).some((s) => s === "@edge-notes/supabase-local"),
    ).toBe(true);
  });
});

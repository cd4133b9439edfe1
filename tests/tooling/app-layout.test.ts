// The app's layout (docs/decisions/009): every file directly in app/routes or a feature folder is a
// route of app/routes.ts, a feature's other files sit in its parts/, and what app/lib and
// app/components hold never reaches into a feature. A newcomer can then tell a route from a
// helper by where it is, and the shared folders stay shared.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseSync } from "oxc-parser";
import { describe, expect, test } from "vitest";

const APP = fileURLToPath(new URL("../../app/", import.meta.url));
const ROUTES = join(APP, "routes");

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "+types" ? [] : files(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

/** The route modules app/routes.ts names, relative to app/. */
const routeModules = new Set(
  [...readFileSync(join(APP, "routes.ts"), "utf8").matchAll(/"(routes\/[^"]+)"/g)].map(
    (match) => match[1] as string,
  ),
);

function relativeImports(file: string): string[] {
  const { module } = parseSync(file, readFileSync(file, "utf8"));
  return [
    ...module.staticImports.map((i) => i.moduleRequest.value),
    ...module.staticExports.flatMap((e) => e.entries.flatMap((x) => x.moduleRequest?.value ?? [])),
  ]
    .filter((specifier) => specifier.startsWith("."))
    .map((specifier) => relative(APP, resolve(dirname(file), specifier)));
}

describe("the app's layout", () => {
  test("app/routes.ts names route modules that exist", () => {
    const existing = new Set(files(ROUTES).map((file) => relative(APP, file)));
    expect([...routeModules].filter((module) => !existing.has(module))).toEqual([]);
  });

  test("every file outside a parts/ folder in app/routes is a route", () => {
    const loose = files(ROUTES)
      .map((file) => relative(APP, file))
      .filter((file) => !file.split("/").includes("parts") && !routeModules.has(file));
    expect(loose).toEqual([]);
  });

  test("app/lib and app/components import nothing from app/routes", () => {
    const shared = [...files(join(APP, "lib")), ...files(join(APP, "components"))];
    const reaching = shared.flatMap((file) =>
      relativeImports(file)
        .filter((target) => target.startsWith("routes/"))
        .map((target) => `${relative(APP, file)} -> ${target}`),
    );
    expect(reaching).toEqual([]);
  });

  test("no module imports a route module (routes are entry points)", () => {
    const routes = [...routeModules].map((module) => module.replace(/\.tsx?$/, ""));
    const importing = files(APP).flatMap((file) =>
      relativeImports(file)
        .filter((target) => routes.includes(target.replace(/\.tsx?$/, "")))
        .map((target) => `${relative(APP, file)} -> ${target}`),
    );
    expect(importing).toEqual([]);
  });
});

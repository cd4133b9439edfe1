// The package's shape, checked from its import graph (every relative import of every module in
// src/, type-only and dynamic ones included): no cycles anywhere, a folder per subsystem, and each
// folder imports only what the rules below let it, as supabase/auth separates internal/api
// (handlers) from internal/models (data) and miniflare keeps what crosses a thread in a folder of
// its own.
//
//   index.ts, backend.ts      the public API and the factory: the only modules at the top
//   cli/                      the command line (bin/supabase-local.js runs it)
//   boot/                     loaded before any TypeScript: JavaScript only
//   project/                  the project's paths, config, keys, migrations: imports nothing else
//   database/                 the Database class, its engine, data directory, snapshot
//   database/thread/          what the database thread loads: JavaScript only, nothing outside
//   http/                     the HTTP app, the gateway, JWT, local-only, client address
//   auth/api/routes.ts        the one route table: the only importer of the handlers
//   auth/api/*.ts             one handler module per endpoint family, never each other
//   auth/*/                   what handlers share (errors, request parsing, tokens, emails, ...)
//   auth/models/*.ts          data: the only SQL, no Request/Response, nothing above
//   provider/, mail/, rest/   services of their own: they never import Auth
//   realtime/                 a service: never imports Auth or the data API
//   storage/                  a service: never imports Auth, the data API or Realtime
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { moduleImports } from "./support/imports.ts";

const SRC = fileURLToPath(new URL("../src/", import.meta.url));

interface Import {
  /** The imported module, relative to src/ (e.g. "auth/models/users.ts"). JSDoc `@import`s of a
   * JavaScript module are comments, types only, and not listed. */
  target: string;
  typeOnly: boolean;
}

function modules(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return modules(path);
    return /\.[jt]s$/.test(entry.name) ? [relative(SRC, path)] : [];
  });
}

/** Every relative import of a module: import/export declarations and import() calls. */
function importsOf(file: string): Import[] {
  return moduleImports(file, readFileSync(join(SRC, file), "utf8"))
    .filter((i) => i.specifier.startsWith("."))
    .map((i) => ({ target: normalize(join(dirname(file), i.specifier)), typeOnly: i.typeOnly }));
}

const files = modules();
const graph = new Map(files.map((file) => [file, importsOf(file)]));

/** The import edges whose importer and target match, as "importer -> target". */
function edges(from: (file: string) => boolean, to: (target: string) => boolean): string[] {
  return [...graph].flatMap(([file, imports]) =>
    from(file) ? imports.filter((i) => to(i.target)).map((i) => `${file} -> ${i.target}`) : [],
  );
}

/** Every import cycle (as a path that ends where it started), found by depth-first search. */
function cycles(deps: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (file: string, path: string[]) => {
    if (state.get(file) === "done") return;
    if (state.get(file) === "visiting") {
      found.push([...path.slice(path.indexOf(file)), file]);
      return;
    }
    state.set(file, "visiting");
    for (const next of deps.get(file) ?? []) visit(next, [...path, file]);
    state.set(file, "done");
  };
  for (const file of deps.keys()) visit(file, []);
  return found;
}

const isHandler = (f: string) => f.startsWith("auth/api/") && f !== "auth/api/routes.ts";
const isModel = (f: string) => f.startsWith("auth/models/");

describe("the package's import graph", () => {
  test("every relative import resolves to a module of src/", () => {
    const unresolved = [...graph].flatMap(([file, imports]) =>
      imports
        .filter((i) => /\.[jt]s$/.test(i.target) && !graph.has(i.target))
        .map((i) => `${file} -> ${i.target}`),
    );
    expect(unresolved).toEqual([]);
    expect(files.length).toBeGreaterThan(40);
  });

  test("has no import cycles (type-only imports count too)", () => {
    const deps = new Map([...graph].map(([file, imports]) => [file, imports.map((i) => i.target)]));
    expect(cycles(deps).map((c) => c.join(" -> "))).toEqual([]);
  });

  test("the cycle check finds a cycle when there is one", () => {
    const deps = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts"]],
      ["d.ts", ["a.ts"]],
    ]);
    expect(cycles(deps)).toEqual([["a.ts", "b.ts", "c.ts", "a.ts"]]);
    expect(cycles(new Map([["a.ts", ["a.ts"]]]))).toEqual([["a.ts", "a.ts"]]);
    expect(
      cycles(
        new Map([
          ["a.ts", ["b.ts"]],
          ["b.ts", []],
        ]),
      ),
    ).toEqual([]);
  });
});

/** What loading `file` loads (itself included), type-only imports left out. */
function loadedBy(file: string, loaded = new Set<string>()): Set<string> {
  if (loaded.has(file)) return loaded;
  loaded.add(file);
  for (const i of graph.get(file) ?? []) if (!i.typeOnly) loadedBy(i.target, loaded);
  return loaded;
}

describe("JavaScript all the way down", () => {
  // A thread that loads a TypeScript module starts Node's type stripper first: 65 ms of every
  // database open (database/thread/worker.js says more).
  test("the database thread loads no TypeScript", () => {
    const loaded = loadedBy("database/thread/worker.js");
    expect(loaded.has("database/thread/postgres-port.js")).toBe(true);
    expect([...loaded].filter((file) => !file.endsWith(".js"))).toEqual([]);
  });

  // They are in place before any TypeScript loads, so they cannot be TypeScript themselves.
  test.each(["boot/compile-cache.js", "boot/typescript-cache.js"])(
    "%s loads no TypeScript",
    (cache) => {
      const loaded = loadedBy(cache);
      expect(loaded.has("boot/cache-dir.js")).toBe(true);
      expect([...loaded].filter((file) => !file.endsWith(".js"))).toEqual([]);
    },
  );
});

describe("what a start loads", () => {
  // Loaded once the backend serves (loadAfterStart in http/app.ts), never during a start (each
  // would add its import time to every start): @simplewebauthn/server 300 ms, qrcode 40 ms.
  const ON_FIRST_USE = ["@simplewebauthn/server", "@simplewebauthn/server/helpers", "qrcode"];

  test("libraries only some requests need are imported dynamically", () => {
    const loadedAtStart = files.flatMap((file) =>
      moduleImports(file, readFileSync(join(SRC, file), "utf8"))
        .filter((i) => ON_FIRST_USE.includes(i.specifier) && !i.typeOnly && !i.dynamic)
        .map((i) => `${file} -> ${i.specifier}`),
    );
    expect(loadedAtStart).toEqual([]);
  });
});

describe("Auth: handlers apart from models", () => {
  test("only the route table imports the handlers, and handlers never import each other", () => {
    expect(edges((f) => f !== "auth/api/routes.ts", isHandler)).toEqual([]);
  });

  test("the route table is the Auth API's only entry, mounted by auth/index.ts", () => {
    expect(
      edges(
        (f) => f !== "auth/index.ts",
        (t) => t === "auth/api/routes.ts",
      ),
    ).toEqual([]);
  });

  test("models import only models and the error table", () => {
    expect(edges(isModel, (t) => !isModel(t) && t !== "auth/errors.ts")).toEqual([]);
  });

  test("models never touch a Request or a Response", () => {
    const offending = files.filter(
      (f) => isModel(f) && /\b(Request|Response)\b/.test(readFileSync(join(SRC, f), "utf8")),
    );
    expect(offending).toEqual([]);
  });

  test("only models run SQL: elsewhere the query helpers are imported for their types only", () => {
    const queries = [...graph].flatMap(([file, imports]) =>
      isModel(file)
        ? []
        : imports
            .filter((i) => i.target === "auth/models/db.ts" && !i.typeOnly)
            .map((i) => `${file} -> ${i.target}`),
    );
    expect(queries).toEqual([]);
    const handlersWithSql = files.filter(
      (f) =>
        f.startsWith("auth/") &&
        !isModel(f) &&
        /\.(query|exec)\(|\b(select|insert into|update auth\.|delete from)\b/i.test(
          readFileSync(join(SRC, f), "utf8"),
        ),
    );
    expect(handlersWithSql).toEqual([]);
  });
});

describe("services apart from Auth", () => {
  test("the OAuth provider page, the mail inbox and the data API never import Auth", () => {
    const separate = (f: string) =>
      f.startsWith("provider/") || f.startsWith("mail/") || f.startsWith("rest/");
    expect(edges(separate, (t) => t.startsWith("auth/"))).toEqual([]);
  });

  test("Realtime never imports Auth or the data API", () => {
    expect(
      edges(
        (f) => f.startsWith("realtime/"),
        (t) => t.startsWith("auth/") || t.startsWith("rest/"),
      ),
    ).toEqual([]);
  });

  test("Storage never imports Auth, the data API or Realtime", () => {
    expect(
      edges(
        (f) => f.startsWith("storage/"),
        (t) => t.startsWith("auth/") || t.startsWith("rest/") || t.startsWith("realtime/"),
      ),
    ).toEqual([]);
  });

  test("the data API imports nothing outside rest/", () => {
    expect(
      edges(
        (f) => f.startsWith("rest/"),
        (t) => !t.startsWith("rest/"),
      ),
    ).toEqual([]);
  });
});

/** Whether `file` sits in `folder` (a folder of src/ with a trailing slash, or "" for the top). */
const inFolder = (folder: string) => (file: string) =>
  folder === "" ? !file.includes("/") : file.startsWith(folder);
const SERVICES = ["auth/", "rest/", "realtime/", "storage/", "mail/", "provider/"];
const isService = (f: string) => SERVICES.some((s) => f.startsWith(s));

describe("a folder per subsystem", () => {
  test("the top of src/ holds only the public API and the factory", () => {
    const entries = readdirSync(SRC, { withFileTypes: true });
    expect(entries.filter((e) => e.isFile()).map((e) => e.name)).toEqual([
      "backend.ts",
      "index.ts",
    ]);
  });

  // boot/ runs before Node can load TypeScript; the database thread would start Node's type
  // stripper for any TypeScript it loads (65 ms of every open, database/thread/worker.js says more).
  test.each(["boot/", "database/thread/"])(
    "%s is JavaScript only and imports only itself",
    (folder) => {
      const own = files.filter(inFolder(folder));
      expect(own.length).toBeGreaterThan(0);
      expect(own.filter((f) => !f.endsWith(".js"))).toEqual([]);
      expect(edges(inFolder(folder), (t) => !t.startsWith(folder))).toEqual([]);
    },
  );

  test("project/ (paths, config, keys, migrations) imports nothing outside it", () => {
    expect(edges(inFolder("project/"), (t) => !t.startsWith("project/"))).toEqual([]);
  });

  test("database/ imports only itself, project/ and boot/: no HTTP, no service", () => {
    const allowed = ["database/", "project/", "boot/"];
    expect(
      edges(inFolder("database/"), (t) => !allowed.some((folder) => t.startsWith(folder))),
    ).toEqual([]);
  });

  test("only the factory imports the HTTP app, and only as it starts (dynamically) or for types", () => {
    expect(
      edges(
        (f) => f !== "backend.ts",
        (t) => t === "http/app.ts",
      ),
    ).toEqual([]);
    const backend = moduleImports("backend.ts", readFileSync(join(SRC, "backend.ts"), "utf8"));
    expect(
      backend.filter((i) => i.specifier === "./http/app.ts" && !i.dynamic && !i.typeOnly),
    ).toEqual([]);
  });

  test("http/ never imports the factory, the command line or the public entry", () => {
    expect(
      edges(
        inFolder("http/"),
        (t) => t === "backend.ts" || t === "index.ts" || t.startsWith("cli/"),
      ),
    ).toEqual([]);
  });

  test("services reach http/ only for the gateway's context, JWTs, request and file bodies", () => {
    const shared = ["http/context.ts", "http/jwt.ts", "http/request-body.ts", "http/node-body.ts"];
    expect(edges(isService, (t) => t.startsWith("http/") && !shared.includes(t))).toEqual([]);
  });

  test("services never import the factory, the command line, the public entry or the database", () => {
    expect(
      edges(
        isService,
        (t) =>
          t === "backend.ts" ||
          t === "index.ts" ||
          t.startsWith("cli/") ||
          t.startsWith("database/"),
      ),
    ).toEqual([]);
  });

  test("the command line is imported by the public entry alone (its start errors)", () => {
    expect(
      edges(
        (f) => !f.startsWith("cli/") && f !== "index.ts",
        (t) => t.startsWith("cli/"),
      ),
    ).toEqual([]);
  });
});

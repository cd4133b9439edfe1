// The data API's pipeline flows one way: request -> ApiRequest (parse) -> Plan (plan) -> Query
// (sql) -> Response (execute). No stage imports a later one or the parser it follows, and
// planning only reads the ApiRequest it is given.
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { RestError } from "../../src/rest/errors.ts";
import { parseRequest } from "../../src/rest/parse.ts";
import { planRequest } from "../../src/rest/plan.ts";
import type { Relation, RoutineDef, SchemaCache } from "../../src/rest/schema-cache.ts";
import { querySql } from "../../src/rest/sql.ts";
import { moduleImports } from "../support/imports.ts";

const DIR = new URL("../../src/rest/", import.meta.url);

/** What each module of src/rest may import from its own folder. */
const ALLOWED: Record<string, string[]> = {
  "errors.ts": [],
  "api-request.ts": ["errors.ts"],
  "schema-cache.ts": [],
  "schema-watch.ts": [],
  "db-config.ts": [],
  "fuzzy.ts": [],
  "parse.ts": ["api-request.ts", "errors.ts"],
  "routines.ts": ["api-request.ts", "errors.ts", "fuzzy.ts", "schema-cache.ts"],
  "plan.ts": ["api-request.ts", "errors.ts", "fuzzy.ts", "routines.ts", "schema-cache.ts"],
  "sql.ts": ["api-request.ts", "errors.ts", "plan.ts", "schema-cache.ts"],
  "execute.ts": ["errors.ts", "plan.ts", "sql.ts"],
  "index.ts": [
    "db-config.ts",
    "errors.ts",
    "parse.ts",
    "plan.ts",
    "sql.ts",
    "execute.ts",
    "schema-cache.ts",
    "schema-watch.ts",
  ],
};

/** Every module's imports inside src/rest (type-only, dynamic and re-exports included). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of readdirSync(DIR).filter((f) => f.endsWith(".ts"))) {
    const text = readFileSync(new URL(file, DIR), "utf8");
    const imported = moduleImports(file, text)
      .map((i) => i.specifier)
      .filter((name) => name.startsWith("."))
      .map((name) => {
        expect(name, `${file} imports ${name}`).toMatch(/^\.\/[\w-]+\.ts$/);
        return name.slice(2);
      });
    graph.set(file, [...new Set(imported)].sort());
  }
  return graph;
}

describe("one-way pipeline", () => {
  const graph = importGraph();

  test("every module of src/rest has its place in the pipeline", () => {
    expect([...graph.keys()].sort()).toEqual(Object.keys(ALLOWED).sort());
  });

  test("planning, SQL and execution never import the parser", () => {
    for (const stage of ["plan.ts", "sql.ts", "execute.ts"])
      expect(graph.get(stage), stage).not.toContain("parse.ts");
    expect(graph.get("plan.ts")).not.toContain("sql.ts");
    expect(graph.get("plan.ts")).not.toContain("execute.ts");
    expect(graph.get("sql.ts")).not.toContain("execute.ts");
  });

  test("each module imports only what comes before it", () => {
    for (const [file, imports] of graph)
      for (const target of imports)
        expect(ALLOWED[file], `${file} must not import ${target}`).toContain(target);
  });

  test("no import cycles", () => {
    const done = new Set<string>();
    const visit = (file: string, path: string[]) => {
      if (path.includes(file)) throw new Error(`import cycle: ${[...path, file].join(" -> ")}`);
      if (done.has(file)) return;
      for (const next of graph.get(file) ?? []) visit(next, [...path, file]);
      done.add(file);
    };
    for (const file of graph.keys()) visit(file, []);
    expect(done.size).toBe(graph.size);
  });
});

// ---------------------------------------------------------------- the stages' contract

function relation(name: string, cols: string[]): Relation {
  return {
    schema: "public",
    name,
    isView: false,
    columns: new Map(
      cols.map((c) => [c, { name: c, type: "text", nullable: true, hasDefault: false }]),
    ),
    primaryKey: ["id"],
    uniques: [["id"]],
  };
}

const items = relation("items", ["id", "name"]);
const listItems: RoutineDef = {
  schema: "public",
  name: "list_items",
  args: [{ name: "prefix", type: "text", hasDefault: true, variadic: false }],
  returnsSet: true,
  returnType: "items",
  returnKind: "composite",
  returnRelation: { schema: "public", name: "items" },
  volatility: "stable",
  callable: true,
};
const cache: SchemaCache = {
  relations: new Map([["public.items", items]]),
  foreignKeys: [],
  routines: new Map([["public.list_items", [listItems]]]),
};

const parse = (
  method: string,
  path: string,
  params: [string, string][],
  headers: Record<string, string> = {},
  body?: string,
) =>
  parseRequest(
    { method, path, params, headers: new Headers(headers), body },
    { schemas: ["public"] },
  );

/** The ApiRequest as plain data, to compare before and after planning. */
const snapshot = (value: unknown) =>
  JSON.stringify(value, (_k, v) => (v instanceof Map ? [...v] : v));

describe("stages", () => {
  test("GET /rpc: planning picks arguments and filters from the parsed params, changing nothing", () => {
    const api = parse(
      "GET",
      "/rpc/list_items",
      [
        ["prefix", "a"],
        ["name", "eq.apple"],
        ["order", "id.desc"],
      ],
      { range: "2-4", accept: "application/vnd.pgrst.object+json" },
    );
    const before = snapshot(api);
    const plan = planRequest(api, cache, api.schema, api.payload, { maxRows: 2 });
    expect(snapshot(api)).toBe(before);
    expect(api.scopes.get("")?.conditions).toEqual([]);
    if (plan.kind !== "call") throw new Error(plan.kind);
    expect(plan.payload).toEqual({ prefix: "a" });
    expect(plan.root?.conditions).toMatchObject([
      { type: "filter", field: { name: "name" }, op: "eq", value: { value: "apple" } },
    ]);
    // Range 2-4 is 3 rows from offset 2, capped by max_rows
    expect(plan.root).toMatchObject({ limit: 2, offset: 2 });
    expect(plan.response).toMatchObject({
      media: "object",
      unwrap: true,
      exactlyOne: true,
      status: { kind: "rows", offset: 2 },
    });
    const sql = querySql(plan);
    expect(sql.params).toContain("apple");
    expect(sql.params).toContain(JSON.stringify({ prefix: "a" }));
  });

  test("a GET /rpc param that does not parse as a filter is an argument (PostgREST's rule)", () => {
    expect(() =>
      planRequest(parse("GET", "/rpc/list_items", [["prefix", "not-a-filter"]]), cache),
    ).not.toThrow();
    const api = parse("GET", "/rpc/list_items", [["name", "not-a-filter"]]);
    expect(() => planRequest(api, cache)).toThrow(
      "Could not find the function public.list_items(name) in the schema cache",
    );
  });

  test("the ApiRequest is frozen: a stage cannot change what was asked", () => {
    const api = parse("GET", "/items", [["id", "eq.1"]]);
    const root = api.scopes.get("");
    expect(Object.isFrozen(api)).toBe(true);
    expect(Object.isFrozen(root)).toBe(true);
    expect(() => (root?.conditions as unknown[]).push({})).toThrow(TypeError);
  });

  test("the body is parsed with the request; a write's answer is decided by the plan", () => {
    const api = parse(
      "POST",
      "/items",
      [],
      { prefer: "return=headers-only, count=exact" },
      '{"id":"7","name":"x"}',
    );
    expect(api.payload).toEqual({ id: "7", name: "x" });
    const plan = planRequest(api, cache);
    if (plan.kind !== "mutate") throw new Error(plan.kind);
    expect(plan.returning).toBe(true);
    expect(plan.root.outputs).toEqual([
      { kind: "column", field: { name: "id", json: [] }, name: "id" },
    ]);
    expect(plan.response).toMatchObject({
      preferenceApplied: "return=headers-only, count=exact",
      status: {
        kind: "write",
        status: 201,
        body: false,
        emptyStatus: 201,
        range: false,
        count: true,
        location: { path: "/items", keys: ["id"] },
      },
    });
    expect(() => parse("POST", "/items", [], {}, "[1]x")).toThrow(/Empty or invalid json/);
    expect(() => parse("PATCH", "/items", [], {}, "")).toThrow(/Empty or invalid json/);
  });

  test("the profile is checked against the exposed schemas while parsing", () => {
    expect(parse("GET", "/items", [], { "accept-profile": "public" }).schema).toBe("public");
    expect(() => parse("GET", "/items", [], { "accept-profile": "secret" })).toThrow(
      /Invalid schema: secret/,
    );
  });
});

// The URL -> request parser, without a database.
import { describe, expect, test } from "vitest";
import { RestError } from "../../src/rest/errors.ts";
import {
  parseAccept,
  parseFilter,
  parseLogic,
  parseOrder,
  parsePreferences,
  parseRequest,
  parseSelect,
} from "../../src/rest/parse.ts";

const f = (name: string) => ({ name, json: [] });

describe("select", () => {
  test("columns, aliases, casts, json paths", () => {
    expect(parseSelect("id,n:name::text,data->a->>b,x:data->0")).toEqual([
      { type: "column", field: f("id"), alias: undefined, cast: undefined },
      { type: "column", field: f("name"), alias: "n", cast: "text" },
      {
        type: "column",
        field: {
          name: "data",
          json: [
            { arrow: "->", key: "a" },
            { arrow: "->>", key: "b" },
          ],
        },
        alias: undefined,
        cast: undefined,
      },
      {
        type: "column",
        field: { name: "data", json: [{ arrow: "->", key: 0 }] },
        alias: "x",
        cast: undefined,
      },
    ]);
  });

  test("embeds with alias, hints, inner, spread, nesting, quoted names", () => {
    expect(parseSelect('a:users!author_fk!inner(id,...org(name)),"my col"')).toEqual([
      {
        type: "embed",
        name: "users",
        alias: "a",
        hint: "author_fk",
        join: "inner",
        spread: false,
        select: [
          { type: "column", field: f("id"), alias: undefined, cast: undefined },
          {
            type: "embed",
            name: "org",
            alias: undefined,
            hint: undefined,
            join: "left",
            spread: true,
            select: [{ type: "column", field: f("name"), alias: undefined, cast: undefined }],
          },
        ],
      },
      { type: "column", field: f("my col"), alias: undefined, cast: undefined },
    ]);
  });

  test.each(["id,", "a(", "a:", "x::", "a()b", ",", "a->", "...a", "a(b))"])(
    "%j is PGRST100",
    (s) => {
      expect(() => parseSelect(s)).toThrow(RestError);
      try {
        parseSelect(s);
      } catch (e) {
        expect((e as RestError).code).toBe("PGRST100");
        expect((e as RestError).message).toMatch(/^"failed to parse select parameter \(/);
      }
    },
  );

  test("aggregates: count(), col.fn(), casts before and after, aliases", () => {
    expect(parseSelect("count(),n:count()::text")).toEqual([
      { type: "column", field: f("*"), alias: undefined, aggregate: { fn: "count" } },
      { type: "column", field: f("*"), alias: "n", aggregate: { fn: "count", cast: "text" } },
    ]);
    expect(parseSelect("total:stars::int.sum()::text,stars.max()")).toMatchObject([
      { field: f("stars"), alias: "total", cast: "int", aggregate: { fn: "sum", cast: "text" } },
      { field: f("stars"), aggregate: { fn: "max" } },
    ]);
  });
});

describe("filters", () => {
  test("operators, negation, quantifiers, lists, fts", () => {
    expect(parseFilter(f("a"), "not.eq.1")).toMatchObject({
      negate: true,
      op: "eq",
      value: { kind: "scalar", value: "1" },
    });
    expect(parseFilter(f("a"), 'in.(1,"2,3",)')).toMatchObject({
      value: { kind: "list", values: ["1", "2,3", ""] },
    });
    expect(parseFilter(f("a"), "like(any).{a*,b*}")).toMatchObject({
      quantifier: "any",
      value: { value: "{a*,b*}" },
    });
    expect(parseFilter(f("a"), "wfts(english).a b")).toMatchObject({
      op: "wfts",
      value: { kind: "fts", language: "english", query: "a b" },
    });
    expect(parseFilter(f("a"), "is.NULL")).toMatchObject({ value: { kind: "is", value: "null" } });
    expect(parseFilter(f("a"), "eq.a.b.c")).toMatchObject({ value: { value: "a.b.c" } });
  });

  test.each(["", "eq", "eqq.1", "is.maybe", "in.1,2", "in.(1,2", "not.not.eq.1", "like(some).{a}"])(
    "%j is PGRST100",
    (v) => {
      expect(() => parseFilter(f("a"), v)).toThrow(RestError);
    },
  );

  test("logic trees nest, negate and keep quoted commas", () => {
    expect(parseLogic("or", true, '(a.eq.1,not.and(b.gt.2,c.in.(x,y)),d.eq."p,q")')).toMatchObject({
      op: "or",
      negate: true,
      children: [
        { type: "filter", op: "eq" },
        {
          type: "logic",
          op: "and",
          negate: true,
          children: [{ op: "gt" }, { op: "in", value: { values: ["x", "y"] } }],
        },
        { type: "filter", value: { value: "p,q" } },
      ],
    });
  });

  test.each([
    "(a.eq.1",
    "a.eq.1)",
    "()",
    "(a.eq.1,)",
    "(and(a.eq.1)",
    `(${"and(".repeat(40)}a.eq.1${")".repeat(40)})`,
  ])("%j is PGRST100", (v) => {
    expect(() => parseLogic("or", false, v)).toThrow(RestError);
  });
});

describe("order, preferences, accept", () => {
  test("order terms", () => {
    expect(parseOrder("a.desc.nullslast,b,rel(c).asc,d->>e.nullsfirst")).toEqual([
      { relation: undefined, field: f("a"), direction: "desc", nulls: "last" },
      { relation: undefined, field: f("b") },
      { relation: "rel", field: f("c"), direction: "asc" },
      {
        relation: undefined,
        field: { name: "d", json: [{ arrow: "->>", key: "e" }] },
        nulls: "first",
      },
    ]);
    expect(() => parseOrder("a.sideways")).toThrow(RestError);
  });

  test("Prefer", () => {
    expect(
      parsePreferences(
        "return=representation, count=exact,resolution=merge-duplicates,missing=default,bogus=1",
      ),
    ).toMatchObject({
      return: "representation",
      count: "exact",
      resolution: "merge-duplicates",
      missing: "default",
      invalid: ["bogus=1"],
    });
    // entries compared whole, the first of a kind wins; handling=strict is the plan's to enforce
    expect(
      parsePreferences(
        "handling=strict, return = minimal, count=exact,count=planned, max-affected=5",
      ),
    ).toEqual({
      handling: "strict",
      count: "exact",
      maxAffected: 5,
      invalid: ["return = minimal"],
    });
  });

  test("Accept", () => {
    expect(parseAccept("application/vnd.pgrst.object+json;nulls=stripped")).toEqual({
      media: "object",
      stripNulls: true,
    });
    expect(parseAccept("text/csv")).toEqual({ media: "csv", stripNulls: false });
    expect(parseAccept(null)).toEqual({ media: "json", stripNulls: false });
    expect(() => parseAccept("image/png")).toThrow(/None of these media types/);
  });
});

describe("requests", () => {
  const req = (
    method: string,
    path: string,
    params: [string, string][] = [],
    headers: Record<string, string> = {},
  ) => parseRequest({ method, path, params, headers: new Headers(headers) });

  test("scopes: embedded filters, orders, limits and logic", () => {
    const r = req("GET", "/posts", [
      ["select", "*,comments(*)"],
      ["comments.order", "id.desc"],
      ["comments.limit", "2"],
      ["comments.or", "(a.eq.1,b.eq.2)"],
      ["comments.text", "eq.x"],
      ["id", "gt.1"],
    ]);
    expect(r.scopes.get("comments")).toMatchObject({
      limit: 2,
      order: [{ direction: "desc" }],
      conditions: [{ type: "logic" }, { type: "filter" }],
    });
    expect(r.scopes.get("")?.conditions).toHaveLength(1);
  });

  test("actions, rpc, profiles, bad paths and methods", () => {
    expect(req("POST", "/t").action).toBe("insert");
    expect(req("PATCH", "/t").action).toBe("update");
    expect(req("DELETE", "/t").action).toBe("delete");
    expect(req("GET", "/rpc/f", [["a", "1"]]).rawParams).toEqual([["a", "1"]]);
    expect(req("GET", "/t", [], { "accept-profile": "x" }).profile).toBe("x");
    expect(req("POST", "/t", [], { "content-profile": "y" }).profile).toBe("y");
    expect(() => req("GET", "/a/b")).toThrow(/Invalid path/);
    expect(() => req("TRACE", "/t")).toThrow(/Unsupported HTTP method/);
    expect(() => req("PATCH", "/rpc/f")).toThrow(/Cannot use the PATCH method on RPC/);
    expect(() => req("GET", "/t", [["limit", "-1"]])).toThrow(RestError);
  });
});

// The plan -> SQL builder, without a database: identifiers quoted, values bound.
import { describe, expect, test } from "vitest";
import { parseRequest } from "../../src/rest/parse.ts";
import { planRequest } from "../../src/rest/plan.ts";
import type { Relation, SchemaCache } from "../../src/rest/schema-cache.ts";
import { arrayLiteral, ident, planSql } from "../../src/rest/sql.ts";

function relation(name: string, cols: string[], pk = ["id"]): Relation {
  return {
    schema: "public",
    name,
    isView: false,
    columns: new Map(
      cols.map((c) => [c, { name: c, type: "text", nullable: true, hasDefault: false }]),
    ),
    primaryKey: pk,
    uniques: [pk],
  };
}

const cache: SchemaCache = {
  relations: new Map([
    ["public.posts", relation("posts", ["id", "author_id", "title", "data"])],
    ["public.users", relation("users", ["id", "name"])],
  ]),
  foreignKeys: [
    {
      name: "posts_author_id_fkey",
      schema: "public",
      table: "posts",
      columns: ["author_id"],
      refSchema: "public",
      refTable: "users",
      refColumns: ["id"],
    },
  ],
  routines: new Map(),
};

const build = (params: [string, string][], method = "GET", body?: unknown, prefer?: string) => {
  const api = parseRequest({
    method,
    path: "/posts",
    params,
    headers: new Headers(prefer ? { prefer } : {}),
  });
  return planSql(planRequest(api, cache, "public", body), body, {
    stripNulls: false,
    count: false,
    representation: prefer === "return=representation" || method === "GET",
  });
};

describe("sql", () => {
  test("identifiers are quoted with doubled quotes", () => {
    expect(ident('we"ird')).toBe('"we""ird"');
    expect(() => ident("a\u0000")).toThrow();
  });

  test("array literals escape quotes and backslashes", () => {
    expect(arrayLiteral(['a"b', "c\\d", "e,f"])).toBe('{"a\\"b","c\\\\d","e,f"}');
  });

  test("values only ever appear as parameters", () => {
    const evil = `x'); DROP TABLE posts; --`;
    const sql = build([
      ["select", 'id,"t\\"x":title,data->>k,users(name)'],
      ["title", `eq.${evil}`],
      ["or", `(id.in.(1,"${evil}"),data->>k.like."*${evil}")`],
      ["order", "data->>k.desc"],
      ["limit", "5"],
    ]);
    expect(sql.text).not.toContain("DROP");
    expect(sql.params).toContain(evil);
    expect(sql.params).toContain("5");
    expect(sql.text).toContain('AS "t""x"');
    expect(sql.text).toContain('"posts"."data"->>$');
  });

  test("embeds are lateral joins correlated on the foreign key", () => {
    const sql = build([["select", "title,author:users(name)"]]);
    expect(sql.text).toMatch(
      /LEFT JOIN LATERAL \(SELECT _s AS "r" FROM \(SELECT "users_\d+"\."name" AS "name" FROM "public"\."users" AS "users_\d+" WHERE "users_\d+"\."id" = "posts"\."author_id"\) _s\)/,
    );
  });

  test("mutations bind the payload as one JSON parameter", () => {
    const ins = build([], "POST", [{ title: "a'b" }], "return=representation");
    expect(ins.text).toMatch(
      /^WITH "pgrst_mut" AS \(INSERT INTO "public"\."posts" AS "posts" \("title"\) SELECT "title" FROM json_populate_recordset\(NULL::"public"\."posts", \$1::json\)/,
    );
    expect(ins.params[0]).toBe(JSON.stringify([{ title: "a'b" }]));
    const del = build([["id", "eq.1"]], "DELETE");
    expect(del.text).toBe('DELETE FROM "public"."posts" AS "posts" WHERE "posts"."id" = $1');
  });
});

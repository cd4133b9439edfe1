// Fuzzing the query language: random and mutated query strings. The parser+planner either
// produce a plan or throw a RestError (never anything else), and every SQL they produce parses:
// it is EXPLAINed in a rolled-back transaction and must not fail with a syntax or protocol error.
import { describe, expect, test } from "vitest";
import { RestError } from "../../src/rest/errors.ts";
import { parseRequest } from "../../src/rest/parse.ts";
import { planRequest } from "../../src/rest/plan.ts";
import { loadSchemaCache } from "../../src/rest/schema-cache.ts";
import { planSql } from "../../src/rest/sql.ts";
import { localBackend as backend } from "./support/backend.ts";

const ITERATIONS = 1500;

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const SEEDS: [string, string][] = [
  ["select", "id,title,author:rest_profiles(username),rest_comments(text,rest_profiles(id))"],
  ["select", "t:title::text,meta->k->>x,...rest_profiles(username),rest_labels!inner(name)"],
  ["or", "(title.eq.a,and(stars.gt.1,body.not.is.null),tags.cs.{a,b})"],
  ["and", '(title.in.(a,"b,c"),search.fts(english).fox)'],
  ["order", "title.desc.nullslast,rest_profiles(username).asc"],
  ["title", "like.*abc*"],
  ["stars", "not.in.(1,2,3)"],
  ["meta->>n", "eq.one"],
  ["rest_comments.text", "eq.x"],
  ["rest_comments.order", "id.desc"],
  ["rest_comments.limit", "2"],
  ["limit", "3"],
  ["offset", "1"],
  ["tags", "ov.{a,c}"],
  ["body", "isdistinct.x"],
  ["title", "ilike(any).{a*,b*}"],
];
const ALPHABET = [
  "(",
  ")",
  ",",
  ".",
  ":",
  "!",
  '"',
  "*",
  "->",
  "->>",
  "::",
  "{",
  "}",
  "not.",
  "eq.",
  "in.",
  "or",
  "and",
  "id",
  "title",
  "rest_comments",
  "'",
  "\\",
  " ",
  "%",
  "...",
  "$1",
  ";",
  "--",
  "é",
  "\u0000",
];

function mutate(s: string, r: () => number): string {
  const chars = [...s];
  const n = 1 + Math.floor(r() * 4);
  for (let i = 0; i < n; i++) {
    const at = Math.floor(r() * (chars.length + 1));
    const op = r();
    const piece = ALPHABET[Math.floor(r() * ALPHABET.length)] as string;
    if (op < 0.4) chars.splice(at, 0, piece);
    else if (op < 0.7) chars.splice(at, 1);
    else chars.splice(at, 1, piece);
  }
  return chars.join("");
}

function randomString(r: () => number): string {
  let s = "";
  const len = Math.floor(r() * 30);
  for (let i = 0; i < len; i++) s += ALPHABET[Math.floor(r() * ALPHABET.length)];
  return s;
}

describe("fuzz", () => {
  test(`${ITERATIONS} random and mutated queries: RestError or SQL that parses`, async () => {
    const b = await backend();
    const cache = await loadSchemaCache(b.db, ["public"]);
    const r = rng(20261122);
    let planned = 0;
    let rejected = 0;
    for (let i = 0; i < ITERATIONS; i++) {
      const params: [string, string][] = [];
      const count = 1 + Math.floor(r() * 3);
      for (let k = 0; k < count; k++) {
        const [key, value] = SEEDS[Math.floor(r() * SEEDS.length)] as [string, string];
        const which = r();
        params.push(
          which < 0.3
            ? [key, mutate(value, r)]
            : which < 0.4
              ? [mutate(key, r), value]
              : which < 0.45
                ? [key, randomString(r)]
                : [key, value],
        );
      }
      const m = r();
      const method = m < 0.7 ? "GET" : m < 0.8 ? "DELETE" : "PATCH";
      const body = method === "PATCH" ? (r() < 0.5 ? {} : { title: "x", stars: 1 }) : undefined;
      let sql: { text: string; params: (string | null)[] } | undefined;
      try {
        const api = parseRequest({ method, path: "/rest_notes", params, headers: new Headers() });
        const plan = planRequest(api, cache, "public", body);
        sql = planSql(plan, body, {
          stripNulls: false,
          count: r() < 0.3,
          representation: r() < 0.6,
        });
      } catch (e) {
        if (!(e instanceof RestError))
          throw new Error(`non-RestError for ${JSON.stringify(params)}: ${e}`);
        expect(e.status, JSON.stringify(params)).toBeGreaterThanOrEqual(400);
        expect(e.status).toBeLessThan(500);
        rejected++;
        continue;
      }
      planned++;
      await b.db
        .transaction(async (tx) => {
          try {
            await tx.query(`EXPLAIN ${sql.text}`, sql.params);
          } catch (e) {
            const code = (e as { code?: string }).code ?? "";
            if (process.env.FUZZ_DEBUG) console.log("ERR", code, (e as Error).message);
            // semantic errors (unknown column, bad input for a type) are fine; syntax/protocol are not
            if (code === "42601" || code.startsWith("08") || code === "" || code.startsWith("XX"))
              throw new Error(
                `SQL failed (${code}) for ${JSON.stringify(params)}: ${(e as Error).message}\n${sql.text}`,
              );
          }
          await tx.rollback();
        })
        .catch((e) => {
          if (String(e).includes("SQL failed")) throw e;
        });
    }
    if (process.env.FUZZ_DEBUG) console.log({ planned, rejected });
    expect(planned).toBeGreaterThan(100);
    expect(rejected).toBeGreaterThan(100);
  }, 60_000);
});

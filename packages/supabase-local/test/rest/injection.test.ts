// Hostile input in every position of the query language: a 4xx with PostgREST's error body (or
// an empty/harmless result), never a 500, never another user's rows, never a state change.
import type { SupabaseClient } from "@supabase/supabase-js";
import { beforeAll, describe, expect, test } from "vitest";
import { type Backend, backend } from "./support/backend.ts";

let b: Backend;
let victim: { id: string; client: SupabaseClient };
let attacker: { id: string; client: SupabaseClient; token: string };

const PAYLOADS = [
  `'; DROP TABLE rest_notes; --`,
  `" OR 1=1 --`,
  `id"; DELETE FROM rest_notes; --`,
  `1) OR (1=1`,
  `$1`,
  `\\'`,
  `*/ SELECT pg_sleep(1) /*`,
  `title::text) FROM pg_shadow --`,
  `a\u0000b`,
  `(,),.,:,!,->>`,
];

/**
 * What an injected statement would change: this file's two users' rows, read with the service key
 * (a dropped table or a DELETE/UPDATE of every row shows here). Not the whole table: other test
 * files write their own rows to it at the same time.
 */
async function notesState() {
  const { data, error } = await b
    .client(b.serviceKey)
    .from("rest_notes")
    .select("id, owner, title, body, stars, meta")
    .in("owner", [victim.id, attacker.id])
    .order("id");
  return error ?? data;
}

async function raw(query: string, init: RequestInit = {}) {
  const headers = new Headers(init.headers);
  headers.set("apikey", b.anonKey);
  headers.set("Authorization", `Bearer ${attacker.token}`);
  const res = await b.fetch(`${b.url}/rest/v1/${query}`, { ...init, headers });
  const text = await res.text();
  return { status: res.status, text };
}

beforeAll(async () => {
  b = await backend();
  victim = await b.user();
  attacker = await b.user();
  await victim.client.from("rest_notes").insert({ title: "victim only", body: "private" });
});

describe.each(PAYLOADS)("payload %j", (payload) => {
  const enc = encodeURIComponent(payload);
  test.each([
    ["column name", `rest_notes?select=${enc}`],
    ["alias", `rest_notes?select=${enc}:title`],
    ["cast", `rest_notes?select=title::${enc}`],
    ["json path", `rest_notes?select=meta->>${enc}`],
    ["filter column", `rest_notes?${enc}=eq.1`],
    ["filter value", `rest_notes?title=eq.${enc}`],
    ["in list", `rest_notes?title=in.(${enc},"${enc}")`],
    ["like", `rest_notes?title=like.${enc}`],
    ["fts config", `rest_notes?search=fts(${enc}).x`],
    ["order", `rest_notes?order=${enc}`],
    ["order json", `rest_notes?order=meta->>${enc}.desc`],
    ["or tree", `rest_notes?or=(title.eq.${enc},body.eq.x)`],
    ["embed", `rest_notes?select=${enc}(*)`],
    ["embed hint", `rest_notes?select=rest_profiles!${enc}(*)`],
    ["embedded filter", `rest_notes?select=*,rest_comments(*)&rest_comments.${enc}=eq.1`],
    ["limit", `rest_notes?limit=${enc}`],
    ["table", `${enc}`],
    ["rpc name", `rpc/${enc}`],
    ["rpc arg", `rpc/rest_add?a=${enc}`],
    ["on_conflict", `rest_labels?on_conflict=${enc}`],
  ])("%s", async (_where, query) => {
    const before = await notesState();
    const r = await raw(query);
    expect(r.status).toBeGreaterThanOrEqual(200);
    expect(r.status).toBeLessThan(500);
    expect(r.text).not.toContain("victim only");
    if (r.status >= 400) {
      const body = JSON.parse(r.text);
      expect(Object.keys(body).sort()).toEqual(["code", "details", "hint", "message"]);
    }
    expect(await notesState()).toEqual(before);
  });

  test("insert/patch bodies and columns", async () => {
    const before = await notesState();
    const a = await raw(`rest_notes?columns=${enc}`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ title: payload }),
    });
    expect(a.status).toBeLessThan(500);
    const p = await raw(`rest_notes?title=eq.${enc}`, {
      method: "PATCH",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ [payload]: 1 }),
    });
    expect(p.status).toBe(400);
    expect(await notesState()).toEqual(before);
  });
});

describe("abuse", () => {
  test("a large in.() list is one bound array parameter", async () => {
    const values = Array.from({ length: 1500 }, (_, i) => `v${i}`);
    const { data, error } = await attacker.client
      .from("rest_notes")
      .select("id")
      .in("title", values);
    expect(error).toBeNull();
    expect(data).toEqual([]);
  });

  test("a huge in.() list never gets a 5xx (over HTTP the URL is refused as too long)", async () => {
    const values = Array.from({ length: 20000 }, (_, i) => `v${i}`).join(",");
    const r = await raw(`rest_notes?select=id&title=in.(${values})`);
    expect(r.status).toBeLessThan(500);
    if (r.status === 200) expect(JSON.parse(r.text)).toEqual([]);
    else expect(r.status).toBeGreaterThanOrEqual(400);
  });

  test.each([
    "(title.eq.a",
    "title.eq.a)",
    "(title.eq.a,and(body.eq.b)",
    "((((",
    "()",
    "(and())",
    '(title.eq."unterminated)',
    `(${"and(".repeat(100)}title.eq.a${")".repeat(100)})`,
  ])("unbalanced or malformed or=%s is PGRST100", async (tree) => {
    const r = await raw(`rest_notes?or=${encodeURIComponent(tree)}`);
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text).code).toBe("PGRST100");
  });

  test("malformed select strings are PGRST100", async () => {
    for (const s of [
      "id,",
      "rest_comments(",
      "a:",
      "title::",
      "*,rest_comments(id",
      ",,",
      "a->",
      "...id",
    ]) {
      const r = await raw(`rest_notes?select=${encodeURIComponent(s)}`);
      expect(r.status, s).toBe(400);
      expect(JSON.parse(r.text).code, s).toBe("PGRST100");
    }
  });

  test("deleting without a filter only touches rows the policy allows", async () => {
    await attacker.client.from("rest_notes").delete().neq("id", -1);
    const still = await victim.client.from("rest_notes").select("title");
    expect(still.data).toEqual([{ title: "victim only" }]);
  });
});

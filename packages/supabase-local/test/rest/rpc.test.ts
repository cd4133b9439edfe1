// Function calls resolved as PostgREST resolves them: overloads by argument names, a single
// unnamed parameter taking the whole body, PGRST202/PGRST203 with their exact bodies, counts,
// RETURNS TABLE results and read-only transactions.
import type { SupabaseClient } from "@supabase/supabase-js";
import { beforeAll, describe, expect, test } from "vitest";
import { type Backend, backend } from "./support/backend.ts";

let b: Backend;
let db: SupabaseClient;

beforeAll(async () => {
  b = await backend();
  db = b.client();
});

const post = (fn: string, body: BodyInit, contentType: string) =>
  b.fetch(`${b.url}/rest/v1/rpc/${fn}`, {
    method: "POST",
    headers: { apikey: b.anonKey, "Content-Type": contentType },
    body,
  });

describe("overloads", () => {
  test("are told apart by the argument names, defaults optional", async () => {
    expect((await db.rpc("rest_pick", { a: 1 })).data).toBe("a=1");
    expect((await db.rpc("rest_pick", { b: "x" })).data).toBe("b=x,c=c");
    expect((await db.rpc("rest_pick", { b: "x", c: "y" })).data).toBe("b=x,c=y");
    expect((await db.rpc("rest_pick", { a: 2 }, { get: true })).data).toBe("a=2");
    expect((await db.rpc("rest_pick", { b: "q" }, { get: true })).data).toBe("b=q,c=c");
  });

  test("other keys go to the single unnamed json parameter, whole", async () => {
    expect((await db.rpc("rest_pick", { z: [1, 2] })).data).toBe('json {"z":[1,2]}');
    expect((await db.rpc("rest_pick", { a: 1, zz: 2 })).data).toBe('json {"a":1,"zz":2}');
  });

  test("two overloads that fit are 300 PGRST203", async () => {
    const r = await db.rpc("rest_amb");
    expect(r.status).toBe(300);
    expect(r.error).toEqual({
      code: "PGRST203",
      message:
        "Could not choose the best candidate function between: public.rest_amb(x => integer), public.rest_amb(y => text)",
      details: null,
      hint: "Try renaming the parameters or the function itself in the database so function overloading can be resolved",
    });
    expect((await db.rpc("rest_amb", { y: "why" })).data).toBe("why");
  });

  test("one name, two types: 300 PGRST203 naming both", async () => {
    const r = await db.rpc("rest_same", { a: 1 });
    expect(r.status).toBe(300);
    expect(r.data).toBeNull();
    expect(r.error).toEqual({
      code: "PGRST203",
      message:
        "Could not choose the best candidate function between: public.rest_same(a => integer), public.rest_same(a => text)",
      details: null,
      hint: "Try renaming the parameters or the function itself in the database so function overloading can be resolved",
    });
  });
});

describe("a single unnamed parameter", () => {
  test("text takes a text/plain body, bytea an octet-stream body", async () => {
    const text = await post("rest_shout", "hello", "text/plain");
    expect(text.status).toBe(200);
    expect(await text.json()).toBe("HELLO");
    const bytes = await post(
      "rest_bytes",
      new Uint8Array([0, 1, 2, 255]),
      "application/octet-stream",
    );
    expect(await bytes.json()).toBe(4);
  });

  test("xml takes a text/xml body; json any JSON body, by POST only", async () => {
    const xml = await post("rest_doc", "<a>1</a>", "text/xml");
    expect(xml.status).toBe(200);
    expect(await xml.json()).toBe("<a>1</a>");
    const list = await post("rest_echo", "[1,2]", "application/json");
    expect(list.status).toBe(200);
    expect(await list.json()).toEqual([1, 2]);
    const got = await db.rpc("rest_echo", {}, { get: true });
    expect(got.status).toBe(404);
    expect(got.error).toEqual({
      code: "PGRST202",
      message:
        "Could not find the function public.rest_echo without parameters in the schema cache",
      details:
        "Searched for the function public.rest_echo without parameters, but no matches were found in the schema cache.",
      hint: "Perhaps you meant to call the function public.rest_echo()",
    });
  });

  test("a text/plain body for a function without a text parameter is PGRST202, no hint", async () => {
    const r = await post("rest_pick", "hello", "text/plain");
    expect(r.status).toBe(404);
    expect(await r.json()).toEqual({
      code: "PGRST202",
      message: "Could not find the function public.rest_pick in the schema cache",
      details:
        "Searched for the function public.rest_pick with a single unnamed text parameter, but no matches were found in the schema cache.",
      hint: null,
    });
  });
});

describe("PGRST202", () => {
  test("unknown arguments: the overloads' closest parameter list is the hint", async () => {
    const r = await db.rpc("rest_add", { a: 1, x: 1 });
    expect(r.status).toBe(404);
    expect(r.error).toEqual({
      code: "PGRST202",
      message: "Could not find the function public.rest_add(a, x) in the schema cache",
      details:
        "Searched for the function public.rest_add with parameters a, x or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.",
      hint: "Perhaps you meant to call the function public.rest_add(a, b)",
    });
  });

  test("by GET, the arguments are the params that are not filters (no close list: no hint)", async () => {
    const r = await db.rpc("rest_series", { m: 3 }, { get: true });
    expect(r.status).toBe(404);
    expect(r.error).toEqual({
      code: "PGRST202",
      message: "Could not find the function public.rest_series(m) in the schema cache",
      details:
        "Searched for the function public.rest_series with parameter m, but no matches were found in the schema cache.",
      hint: null,
    });
  });

  test("a misspelt name: the closest function of the schema is the hint", async () => {
    const r = await db.rpc("rest_serie", { n: 3 });
    expect(r.error).toEqual({
      code: "PGRST202",
      message: "Could not find the function public.rest_serie(n) in the schema cache",
      details:
        "Searched for the function public.rest_serie with parameter n or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.",
      hint: "Perhaps you meant to call the function public.rest_series",
    });
  });

  test("a function with two unnamed parameters cannot be called", async () => {
    const r = await db.rpc("rest_two");
    expect(r.status).toBe(404);
    expect(r.error).toMatchObject({
      code: "PGRST202",
      message: "Could not find the function public.rest_two without parameters in the schema cache",
      details:
        "Searched for the function public.rest_two without parameters or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.",
    });
  });
});

describe("results", () => {
  test("RETURNS TABLE without select: every column", async () => {
    const { data, error } = await db.rpc("rest_label_names").order("id");
    expect(error).toBeNull();
    expect(data).toEqual([
      { id: 1, label: "work" },
      { id: 2, label: "home" },
      { id: 3, label: "urgent" },
    ]);
  });

  test("one TABLE or INOUT column is still a row of columns, every column without select", async () => {
    const { data, error } = await db.rpc("rest_label_list").order("label");
    expect(error).toBeNull();
    expect(data).toEqual([{ label: "home" }, { label: "urgent" }, { label: "work" }]);
    expect(await db.rpc("rest_next", { n: 1 })).toMatchObject({
      status: 200,
      error: null,
      data: { n: 2 },
    });
  });

  test("Prefer: count=exact counts the function's rows (Content-Range, 206 for a part)", async () => {
    const all = await db.rpc("rest_series", { n: 5 }, { count: "exact" });
    expect(all).toMatchObject({ status: 200, count: 5, data: [1, 2, 3, 4, 5] });
    const part = await db.rpc("rest_series", { n: 5 }, { count: "exact" }).range(1, 2);
    expect(part).toMatchObject({ status: 206, count: 5, data: [2, 3] });
    const rows = await db.rpc("rest_label_names", {}, { count: "exact" }).select("id").limit(1);
    expect(rows).toMatchObject({ status: 206, count: 3, data: [{ id: 1 }] });
    const raw = await b.fetch(`${b.url}/rest/v1/rpc/rest_series?n=4&limit=2`, {
      headers: { apikey: b.anonKey, Prefer: "count=exact" },
    });
    expect(raw.headers.get("content-range")).toBe("0-1/4");
  });

  test("Prefer: count=exact on a scalar function: one row of one (Content-Range 0-0/1)", async () => {
    const r = await db.rpc("rest_add", { a: 1 }, { count: "exact" });
    expect(r).toMatchObject({ status: 200, count: 1, data: 2 });
    const raw = await b.fetch(`${b.url}/rest/v1/rpc/rest_add?a=2`, {
      headers: { apikey: b.anonKey, Prefer: "count=exact" },
    });
    expect(raw.status).toBe(200);
    expect(raw.headers.get("content-range")).toBe("0-0/1");
    expect(await raw.json()).toBe(3);
  });

  test("a stable function runs read-only, even by POST: 405 25006", async () => {
    const r = await b.client(b.serviceKey).rpc("rest_stable_touch", { note: 1 });
    expect(r.status).toBe(405);
    expect(r.error).toEqual({
      code: "25006",
      message: "cannot execute UPDATE in a read-only transaction",
      details: null,
      hint: null,
    });
  });
});

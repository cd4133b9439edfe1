// The PostgREST request language through the real supabase-js, feature by feature.
import type { SupabaseClient } from "@supabase/supabase-js";
import { beforeAll, describe, expect, test } from "vitest";
import { backend } from "./support/backend.ts";

let db: SupabaseClient;
let service: SupabaseClient;
let ids: number[];
let owner: string;

beforeAll(async () => {
  const b = await backend();
  const u = await b.user();
  db = u.client;
  owner = u.id;
  service = b.client(b.serviceKey);
  const { data, error } = await db
    .from("rest_notes")
    .insert([
      {
        title: "alpha",
        body: "the quick brown fox",
        stars: 3,
        tags: ["a", "b"],
        meta: { k: { x: 1 }, n: "one" },
      },
      { title: "beta", body: "jumps over", stars: 1, tags: ["b"], meta: { n: "two" } },
      { title: "gamma", body: null, stars: 5, tags: [], meta: {} },
      { title: "delta, with comma", body: "lazy dog", stars: 0, tags: ["c"], meta: {} },
    ])
    .select("id");
  if (error) throw new Error(error.message);
  ids = (data as { id: number }[]).map((r) => r.id);
  await db.from("rest_comments").insert([
    { note_id: ids[0], text: "first!" },
    { note_id: ids[0], text: "second" },
    { note_id: ids[1], text: "on beta" },
  ]);
  await db.from("rest_note_labels").insert([
    { note_id: ids[0], label_id: 1 },
    { note_id: ids[0], label_id: 3 },
    { note_id: ids[2], label_id: 2 },
  ]);
});

const titles = (data: unknown) => (data as { title: string }[]).map((r) => r.title);

describe("select", () => {
  test("columns, aliases, casts and JSON paths", async () => {
    const { data, error } = await db
      .from("rest_notes")
      .select("id, name:title, stars::text, x:meta->k->>x, n:meta->>n, meta->k")
      .eq("id", ids[0])
      .single();
    expect(error).toBeNull();
    expect(data).toEqual({ id: ids[0], name: "alpha", stars: "3", x: "1", n: "one", k: { x: 1 } });
  });

  test("many-to-one, one-to-many, many-to-many, nested", async () => {
    const { data, error } = await db
      .from("rest_notes")
      .select(
        "title, author:rest_profiles(username), rest_comments(text, rest_profiles(id)), rest_labels(name)",
      )
      .eq("id", ids[0])
      .order("text", { referencedTable: "rest_comments" })
      .order("name", { referencedTable: "rest_labels" })
      .single();
    expect(error).toBeNull();
    const row = data as unknown as {
      author: { username: string };
      rest_comments: { text: string; rest_profiles: { id: string } }[];
      rest_labels: { name: string }[];
    };
    expect(row.author.username).toMatch(/^user_/);
    expect(row.rest_comments).toEqual([
      { text: "first!", rest_profiles: { id: owner } },
      { text: "second", rest_profiles: { id: owner } },
    ]);
    expect(row.rest_labels).toEqual([{ name: "urgent" }, { name: "work" }]);
  });

  test("!inner on a nullable to-one keeps every row with a parent, null columns and all", async () => {
    // ann has no parent; the parents ann and ben have no mentor (a null column of the embed)
    const inner = await db
      .from("rest_people")
      .select("name, parent:parent_id!inner(name, mentor_id)")
      .order("id");
    expect(inner).toMatchObject({
      status: 200,
      error: null,
      data: [
        { name: "ben", parent: { name: "ann", mentor_id: null } },
        { name: "cy", parent: { name: "ann", mentor_id: null } },
        { name: "di", parent: { name: "ben", mentor_id: null } },
      ],
    });
    const found = await db
      .from("rest_people")
      .select("name, parent:parent_id(mentor_id)")
      .not("parent", "is", null)
      .order("id");
    expect(found.data?.map((r) => r.name)).toEqual(["ben", "cy", "di"]);
    const missing = await db
      .from("rest_people")
      .select("name, parent:parent_id(mentor_id)")
      .is("parent", null);
    expect(missing.data).toEqual([{ name: "ann", parent: null }]);
  });

  test("!inner drops parents without matches; filters on embedded resources", async () => {
    const inner = await db
      .from("rest_notes")
      .select("title, rest_comments!inner(text)")
      .eq("rest_comments.text", "on beta");
    expect(titles(inner.data)).toEqual(["beta"]);
    const left = await db
      .from("rest_notes")
      .select("title, rest_comments(text)")
      .eq("rest_comments.text", "on beta")
      .order("id");
    expect(
      (left.data as { rest_comments: unknown[] }[]).map((r) => r.rest_comments.length),
    ).toEqual([0, 1, 0, 0]);
    const none = await db
      .from("rest_notes")
      .select("title, rest_comments()")
      .is("rest_comments", null)
      .order("id");
    expect(titles(none.data)).toEqual(["gamma", "delta, with comma"]);
  });

  test("hints by foreign key name and column; spread", async () => {
    const byFk = await db
      .from("rest_notes")
      .select("title, rest_profiles!rest_notes_owner_fkey(username)")
      .eq("id", ids[1])
      .single();
    expect(byFk.error).toBeNull();
    const byColumn = await db
      .from("rest_notes")
      .select("title, owner(username)")
      .eq("id", ids[1])
      .single();
    expect((byColumn.data as unknown as { owner: { username: string } }).owner.username).toMatch(
      /^user_/,
    );
    const spread = await db
      .from("rest_notes")
      .select("title, ...rest_profiles(username)")
      .eq("id", ids[1])
      .single();
    expect(Object.keys(spread.data as object)).toEqual(["title", "username"]);
  });

  test("embedding through a view", async () => {
    const { data, error } = await db
      .from("rest_note_titles")
      .select("title, rest_profiles(id)")
      .eq("id", ids[2])
      .single();
    expect(error).toBeNull();
    expect(data).toEqual({ title: "gamma", rest_profiles: { id: owner } });
  });

  test("unknown relationship and ambiguous embedding errors", async () => {
    const r = await db.from("rest_notes").select("rest_labels_x(*)");
    expect(r.status).toBe(400);
    expect(r.error).toEqual({
      code: "PGRST200",
      message:
        "Could not find a relationship between 'rest_notes' and 'rest_labels_x' in the schema cache",
      details:
        "Searched for a foreign key relationship between 'rest_notes' and 'rest_labels_x' in the schema 'public', but no matches were found.",
      hint: "Perhaps you meant 'rest_labels' instead of 'rest_labels_x'.",
    });
    const hinted = await db.from("rest_notes").select("rest_labels!nope(*)");
    expect(hinted.error?.details).toBe(
      "Searched for a foreign key relationship between 'rest_notes' and 'rest_labels' using the hint 'nope' in the schema 'public', but no matches were found.",
    );
    const table = await db.from("rest_note").select();
    expect(table.error).toEqual({
      code: "PGRST205",
      message: "Could not find the table 'public.rest_note' in the schema cache",
      details: null,
      hint: "Perhaps you meant the table 'public.rest_notes'",
    });
  });
});

describe("filters", () => {
  const q = () => db.from("rest_notes").select("title").order("id");
  test.each([
    ["eq", () => q().eq("title", "beta"), ["beta"]],
    ["neq", () => q().neq("stars", 0).lt("stars", 4), ["alpha", "beta"]],
    [
      "gt/gte/lt/lte",
      () => q().gt("stars", 1).lte("stars", 5).gte("stars", 3).lt("stars", 5),
      ["alpha"],
    ],
    ["like", () => q().like("body", "%fox"), ["alpha"]],
    ["like/ilike in or", () => q().or("title.like.*pha,title.ilike.GAM*"), ["alpha", "gamma"]],
    ["ilike", () => q().ilike("title", "%ET%"), ["beta"]],
    [
      "match/imatch",
      () => q().filter("title", "match", "^[ab]").filter("title", "imatch", "^AL"),
      ["alpha"],
    ],
    ["is null / not", () => q().is("body", null), ["gamma"]],
    ["not.is.null", () => q().not("body", "is", null).gt("stars", 0), ["alpha", "beta"]],
    [
      "in with comma in a quoted value",
      () => q().in("title", ["beta", "delta, with comma"]),
      ["beta", "delta, with comma"],
    ],
    ["not in", () => q().not("title", "in", "(alpha,beta)"), ["gamma", "delta, with comma"]],
    ["cs", () => q().contains("tags", ["b"]), ["alpha", "beta"]],
    ["cd", () => q().containedBy("tags", ["a", "b"]), ["alpha", "beta", "gamma"]],
    ["ov", () => q().overlaps("tags", ["a", "c"]), ["alpha", "delta, with comma"]],
    ["cs on jsonb", () => q().contains("meta", { n: "two" }), ["beta"]],
    ["fts", () => q().textSearch("search", "quick & fox"), ["alpha"]],
    [
      "plfts",
      () => q().textSearch("search", "lazy dog", { type: "plain", config: "english" }),
      ["delta, with comma"],
    ],
    ["phfts", () => q().textSearch("search", "quick brown", { type: "phrase" }), ["alpha"]],
    ["wfts", () => q().textSearch("search", '"jumps over" -fox', { type: "websearch" }), ["beta"]],
    [
      "or with nested and/not",
      () => q().or("title.eq.gamma,and(stars.gt.0,title.not.eq.alpha)"),
      ["beta", "gamma"],
    ],
    ["like(any)", () => q().likeAnyOf("title", ["al%", "ga%"]), ["alpha", "gamma"]],
    ["json path filter", () => q().eq("meta->>n", "two"), ["beta"]],
    [
      "isdistinct",
      () => q().filter("body", "isdistinct", "jumps over").gt("stars", 2),
      ["alpha", "gamma"],
    ],
  ])("%s", async (_name, run, expected) => {
    const { data, error } = await run();
    expect(error).toBeNull();
    expect(titles(data)).toEqual(expected);
  });

  test("bad operator is PGRST100", async () => {
    const r = await db.from("rest_notes").select().filter("stars", "bogus", "1");
    expect(r.status).toBe(400);
    expect(r.error?.code).toBe("PGRST100");
    expect(r.error?.message).toBe('"failed to parse filter (bogus.1)" (line 1, column 1)');
  });

  test("invalid value for the column type is 22P02 (400)", async () => {
    const r = await db.from("rest_notes").select().eq("stars", "many");
    expect(r.status).toBe(400);
    expect(r.error?.code).toBe("22P02");
  });
});

describe("order, pagination, counts", () => {
  test("order with nulls and on an embedded to-one column", async () => {
    const a = await db
      .from("rest_notes")
      .select("body")
      .order("body", { ascending: false, nullsFirst: true });
    expect((a.data as { body: string | null }[]).map((r) => r.body)).toEqual([
      null,
      "the quick brown fox",
      "lazy dog",
      "jumps over",
    ]);
    const b = await db
      .from("rest_notes")
      .select("title, author:rest_profiles(username)")
      .order("author(username)")
      .order("stars", { ascending: false })
      .limit(2);
    expect(titles(b.data)).toEqual(["gamma", "alpha"]);
    const unselected = await db
      .from("rest_notes")
      .select("title, author:rest_profiles(id)")
      .order("author(username)")
      .order("stars", { ascending: false })
      .limit(2);
    expect(titles(unselected.data)).toEqual(["gamma", "alpha"]);
    const bad = await db
      .from("rest_notes")
      .select("title, rest_comments(text)")
      .order("rest_comments(text)");
    expect(bad.error?.code).toBe("PGRST118");
  });

  test("limit, offset, range and Content-Range with exact count", async () => {
    const r = await db
      .from("rest_notes")
      .select("title", { count: "exact" })
      .order("id")
      .range(1, 2);
    expect(titles(r.data)).toEqual(["beta", "gamma"]);
    expect(r.count).toBe(4);
    expect(r.status).toBe(206);
    const all = await db.from("rest_notes").select("title", { count: "exact" });
    expect(all.status).toBe(200);
    const head = await db.from("rest_notes").select("*", { count: "estimated", head: true });
    expect(head.count).toBe(4);
    expect(head.data).toBeNull();
    const embedded = await db
      .from("rest_notes")
      .select("title, rest_comments(text)")
      .eq("id", ids[0])
      .limit(1, { referencedTable: "rest_comments" })
      .single();
    expect((embedded.data as unknown as { rest_comments: unknown[] }).rest_comments).toHaveLength(
      1,
    );
  });

  test("range past the end is 416 PGRST103", async () => {
    const r = await db.from("rest_notes").select("title", { count: "exact" }).range(10, 12);
    expect(r.status).toBe(416);
    expect(r.error?.code).toBe("PGRST103");
    expect(r.error?.details).toBe("An offset of 10 was requested, but there are only 4 rows.");
  });

  test("planned count comes from the planner", async () => {
    const r = await db.from("rest_notes").select("id", { count: "planned" });
    expect(typeof r.count).toBe("number");
  });
});

describe("media types", () => {
  test("single, maybeSingle, csv", async () => {
    const many = await db.from("rest_notes").select("title").single();
    expect(many.status).toBe(406);
    expect(many.error?.code).toBe("PGRST116");
    expect(many.error?.details).toBe("The result contains 4 rows");
    const none = await db.from("rest_notes").select("title").eq("title", "zzz").maybeSingle();
    expect(none).toMatchObject({ data: null, error: null, status: 200 });
    const csv = await db
      .from("rest_notes")
      .select("id,title")
      .in("title", ["alpha", "delta, with comma"])
      .order("id")
      .csv();
    expect(csv.data).toBe(`id,title\n${ids[0]},alpha\n${ids[3]},"delta, with comma"`);
  });

  test("unknown Accept is 406 PGRST107", async () => {
    const b = await backend();
    const res = await b.fetch(`${b.url}/rest/v1/rest_notes`, {
      headers: { apikey: b.anonKey, Accept: "image/png" },
    });
    expect(res.status).toBe(406);
    expect((await res.json()).code).toBe("PGRST107");
  });
});

describe("mutations", () => {
  test("insert single and bulk with columns=, return minimal/representation", async () => {
    const minimal = await db.from("rest_notes").insert({ title: "m1" });
    expect(minimal).toMatchObject({ status: 201, data: null, error: null });
    // supabase-js sends columns=title,stars: a missing key is NULL (here: not null violation)...
    const nulls = await db.from("rest_notes").insert([{ title: "m2" }, { title: "m3", stars: 9 }]);
    expect(nulls.error?.code).toBe("23502");
    // ...unless Prefer: missing=default
    const bulk = await db
      .from("rest_notes")
      .insert([{ title: "m2" }, { title: "m3", stars: 9 }], { defaultToNull: false })
      .select("title, stars");
    expect(bulk.data).toEqual([
      { title: "m2", stars: 0 },
      { title: "m3", stars: 9 },
    ]);
    expect(bulk.status).toBe(201);
    // an object with none of the columns is all DEFAULT: here the not-null title refuses it (400),
    // never a 5xx from a parameter bound for nothing
    const bare = await db
      .from("rest_notes")
      .insert([{ title: "m4" }, {}], { defaultToNull: false });
    expect(bare.status).toBe(400);
    expect(bare.error?.code).toBe("23502");
    const empty = await service.from("rest_labels").insert([]).select();
    expect(empty).toMatchObject({ status: 201, data: [] });
    await db.from("rest_notes").delete().in("title", ["m1", "m2", "m3"]);
  });

  test("insert with an unknown column is PGRST204", async () => {
    const r = await db.from("rest_notes").insert({ title: "x", nope: 1 });
    expect(r.status).toBe(400);
    expect(r.error?.code).toBe("PGRST204");
    expect(r.error?.message).toBe(
      "Could not find the 'nope' column of 'rest_notes' in the schema cache",
    );
  });

  test("upsert merge and ignore duplicates, on_conflict", async () => {
    const a = await service.from("rest_labels").upsert({ id: 50, name: "fifty" }).select();
    expect(a.data).toEqual([{ id: 50, name: "fifty" }]);
    const merged = await service.from("rest_labels").upsert({ id: 50, name: "FIFTY" }).select();
    expect(merged.data).toEqual([{ id: 50, name: "FIFTY" }]);
    const ignored = await service
      .from("rest_labels")
      .upsert({ id: 51, name: "FIFTY" }, { onConflict: "name", ignoreDuplicates: true })
      .select();
    expect(ignored.data).toEqual([]);
    const dup = await service.from("rest_labels").insert({ id: 50, name: "again" });
    expect(dup.status).toBe(409);
    expect(dup.error?.code).toBe("23505");
    await service.from("rest_labels").delete().eq("id", 50);
  });

  test("update and delete with filters and return=representation", async () => {
    const u = await db
      .from("rest_notes")
      .update({ stars: 7 })
      .eq("title", "beta")
      .select("title, stars");
    expect(u.data).toEqual([{ title: "beta", stars: 7 }]);
    const minimal = await db.from("rest_notes").update({ stars: 1 }).eq("title", "beta");
    expect(minimal.status).toBe(204);
    const ins = await db.from("rest_notes").insert({ title: "doomed" }).select("id").single();
    const d = await db
      .from("rest_notes")
      .delete()
      .eq("id", (ins.data as { id: number }).id)
      .select("title");
    expect(d.data).toEqual([{ title: "doomed" }]);
  });

  test("foreign key violation is 409 23503; not null is 400 23502", async () => {
    const fk = await db.from("rest_comments").insert({ note_id: 999999, text: "x" });
    expect(fk.status).toBe(409);
    expect(fk.error?.code).toBe("23503");
    const nn = await db.from("rest_notes").insert({ body: "no title" });
    expect(nn.status).toBe(400);
    expect(nn.error?.code).toBe("23502");
  });

  test("JSON nested thousands deep is Postgres's 54001, as PostgREST answers it, and the API lives on", async () => {
    // PostgREST hands the body to Postgres, whose JSON parser stops at its stack depth limit
    // (54001; PostgREST answers class 54 with 500). Here the body never reaches Postgres: a value
    // this deep is too deep to write back out as a parameter, and is answered the same way.
    const b = await backend();
    const headers = {
      apikey: b.serviceKey,
      Authorization: `Bearer ${b.serviceKey}`,
      "Content-Type": "application/json",
    };
    const deep = `${"[".repeat(20_000)}${"]".repeat(20_000)}`;
    const res = await b.fetch(`${b.url}/rest/v1/rest_notes`, {
      method: "POST",
      headers,
      body: `{"title":"deep","meta":${deep}}`,
    });
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({
      code: "54001",
      message: "stack depth limit exceeded",
    });
    // an array whose first element is not an object never reaches Postgres (PostgREST's
    // payloadAttributes): 400 PGRST102, however deep
    const rows = await b.fetch(`${b.url}/rest/v1/rest_notes`, {
      method: "POST",
      headers,
      body: `[${deep}]`,
    });
    expect(rows.status).toBe(400);
    expect(await rows.json()).toMatchObject({
      code: "PGRST102",
      message: "All object keys must match",
    });
    const rpc = await b.fetch(`${b.url}/rest/v1/rpc/rest_add`, {
      method: "POST",
      headers,
      body: `{"a":${deep},"b":1}`,
    });
    expect(await rpc.json()).toMatchObject({ code: "54001" });
    const after = await b.fetch(`${b.url}/rest/v1/rest_notes?select=title&limit=1`, { headers });
    expect(after.status).toBe(200);
  });

  test("invalid JSON body is PGRST102", async () => {
    const b = await backend();
    const res = await b.fetch(`${b.url}/rest/v1/rest_notes`, {
      method: "POST",
      headers: {
        apikey: b.serviceKey,
        Authorization: `Bearer ${b.serviceKey}`,
        "Content-Type": "application/json",
      },
      body: "{nope",
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      code: "PGRST102",
      details: null,
      hint: null,
      message: "Empty or invalid json",
    });
  });
});

describe("rpc", () => {
  test("POST with named args, default args, scalar result", async () => {
    expect((await db.rpc("rest_add", { a: 2, b: 3 })).data).toBe(5);
    expect((await db.rpc("rest_add", { a: 2 })).data).toBe(3);
  });

  test("GET for stable/immutable functions with filters on a set result", async () => {
    expect((await db.rpc("rest_series", { n: 3 }, { get: true })).data).toEqual([1, 2, 3]);
    const notes = await db
      .rpc("rest_my_notes", {}, { get: true })
      .select("title")
      .gte("stars", 3)
      .order("title");
    expect(titles(notes.data)).toEqual(["alpha", "gamma"]);
    const one = await db.rpc("rest_first_note").select("title");
    expect(one.data).toEqual({ title: "alpha" });
  });

  test("RETURNS TABLE functions take select, filters and order", async () => {
    const all = await db.rpc("rest_label_names").select("label").order("label");
    expect(all.data).toEqual([{ label: "home" }, { label: "urgent" }, { label: "work" }]);
    const some = await db.rpc("rest_label_names", { prefix: "u" }, { get: true }).select("*");
    expect(some.data).toEqual([{ id: 3, label: "urgent" }]);
    const filtered = await db.rpc("rest_label_names").select("id").gt("id", 1).order("id");
    expect(filtered.data).toEqual([{ id: 2 }, { id: 3 }]);
  });

  test("RETURNS TABLE functions without ?select= answer every output column", async () => {
    const posted = await db.rpc("rest_label_names", { prefix: "u" });
    expect(posted.data).toEqual([{ id: 3, label: "urgent" }]);
    const none = await db.rpc("rest_label_names").order("id");
    expect(none.data).toEqual([
      { id: 1, label: "work" },
      { id: 2, label: "home" },
      { id: 3, label: "urgent" },
    ]);
  });

  test("GET on a volatile function is 405 (read-only transaction)", async () => {
    const r = await db.rpc("rest_touch", { note: ids[0] }, { get: true });
    expect(r.status).toBe(405);
    expect(r.error?.code).toBe("25006");
  });

  test("void is 204; RAISE is P0001 400 with hint", async () => {
    expect((await db.rpc("rest_touch", { note: ids[0] })).status).toBe(204);
    const r = await db.rpc("rest_fail", { msg: "boom" });
    expect(r.status).toBe(400);
    expect(r.error).toEqual({ code: "P0001", message: "boom", details: null, hint: "a hint" });
  });

  test("single unnamed json parameter receives the body", async () => {
    expect((await db.rpc("rest_echo", { any: [1, "two"] })).data).toEqual({ any: [1, "two"] });
  });

  test("unknown function or arguments is 404 PGRST202", async () => {
    const r = await db.rpc("rest_add", { x: 1 });
    expect(r.status).toBe(404);
    expect(r.error?.code).toBe("PGRST202");
    expect(r.error?.message).toBe(
      "Could not find the function public.rest_add(x) in the schema cache",
    );
  });
});

describe("schemas", () => {
  test("Accept-Profile picks an exposed schema; others are 406 PGRST106", async () => {
    const b = await backend();
    if (b.schemas.includes("rest_extra")) {
      const ok = await db.schema("rest_extra").from("things").select("name");
      expect(ok.data).toEqual([{ name: "extra" }]);
    } else {
      const other = b.schemas[1] as string;
      const r = await db.schema(other).from("rest_notes").select("id");
      expect(r.error?.code).toBe("PGRST205");
      expect(r.error?.message).toBe(
        `Could not find the table '${other}.rest_notes' in the schema cache`,
      );
    }
    const bad = await db.schema("auth").from("users").select();
    expect(bad.status).toBe(406);
    expect(bad.error).toEqual({
      code: "PGRST106",
      details: null,
      hint: `Only the following schemas are exposed: ${b.schemas.join(", ")}`,
      message: "Invalid schema: auth",
    });
  });
});

describe("edge cases", () => {
  test("PATCH with an empty object changes nothing", async () => {
    const before = await db.from("rest_notes").select("*").eq("title", "alpha").single();
    const r = await db.from("rest_notes").update({}).eq("title", "alpha").select("title");
    expect(r).toMatchObject({ status: 200, data: [], error: null });
    const after = await db.from("rest_notes").select("*").eq("title", "alpha").single();
    expect(after.data).toEqual(before.data);
  });

  test("insert with return=headers-only sets Location", async () => {
    const b = await backend();
    const res = await b.fetch(`${b.url}/rest/v1/rest_labels`, {
      method: "POST",
      headers: {
        apikey: b.serviceKey,
        Authorization: `Bearer ${b.serviceKey}`,
        "Content-Type": "application/json",
        Prefer: "return=headers-only",
      },
      body: JSON.stringify({ id: 77, name: "seventy-seven" }),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("location")).toBe("/rest_labels?id=eq.77");
    await service.from("rest_labels").delete().eq("id", 77);
  });

  test("tx=rollback is ignored, as by the CLI's PostgREST (db-tx-end commit): the write is kept", async () => {
    const b = await backend();
    const res = await b.fetch(`${b.url}/rest/v1/rest_labels?select=name`, {
      method: "POST",
      headers: {
        apikey: b.serviceKey,
        Authorization: `Bearer ${b.serviceKey}`,
        "Content-Type": "application/json",
        Prefer: "return=representation, tx=rollback",
      },
      body: JSON.stringify({ id: 78, name: "ghost" }),
    });
    expect(res.headers.get("preference-applied")).toBe("return=representation");
    expect(await res.json()).toEqual([{ name: "ghost" }]);
    expect((await service.from("rest_labels").select("id").eq("id", 78)).data).toEqual([
      { id: 78 },
    ]);
    await service.from("rest_labels").delete().eq("id", 78);
  });

  test("a bulk insert returns rows in the order they were sent, embeds included", async () => {
    const rows = Array.from({ length: 12 }, (_, i) => ({ title: `order ${i}` }));
    const r = await db.from("rest_notes").insert(rows).select("title, rest_profiles(id)");
    expect(titles(r.data)).toEqual(rows.map((x) => x.title));
    await db.from("rest_notes").delete().like("title", "order *");
  });

  test("stripNulls drops null fields", async () => {
    const r = await db.from("rest_notes").select("title, body").eq("title", "gamma").stripNulls();
    expect(r.data).toEqual([{ title: "gamma" }]);
  });
});

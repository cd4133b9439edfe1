// PostgREST's query language beyond plain embeds: aggregates (gated by db_aggregates_enabled),
// computed relationships, spread on to-many, CSV, self-references chosen by hint, upsert statuses,
// bulk inserts with defaults and column privileges on returned rows. An in-process backend of its
// own, since aggregates are switched on through the authenticator role.
import type { SupabaseClient } from "@supabase/supabase-js";
import { beforeAll, describe, expect, test } from "vitest";
import { readRequest } from "../../src/rest/parse.ts";
import { planRequest } from "../../src/rest/plan.ts";
import { loadSchemaCache } from "../../src/rest/schema-cache.ts";
import { querySql } from "../../src/rest/sql.ts";
import { type LocalBackend, localBackend, sign } from "./support/backend.ts";
import { eventually } from "./support/project.ts";

let b: LocalBackend;
let db: SupabaseClient;
let service: SupabaseClient;
let noteIds: number[];

beforeAll(async () => {
  b = await localBackend();
  const u = await b.user();
  db = u.client;
  service = b.client(b.serviceKey);
  const { data, error } = await db
    .from("rest_notes")
    .insert([
      { title: "n1", stars: 3 },
      { title: "n2", stars: 5 },
      { title: "n3", stars: 5 },
    ])
    .select("id");
  if (error) throw new Error(error.message);
  noteIds = (data as { id: number }[]).map((r) => r.id);
  await db.from("rest_comments").insert([
    { note_id: noteIds[0], text: "c1" },
    { note_id: noteIds[0], text: "c2" },
    { note_id: noteIds[1], text: "c3" },
  ]);
}, 60_000);

const raw = (path: string, headers: Record<string, string> = {}) =>
  b.fetch(`${b.url}/rest/v1${path}`, { headers: { apikey: b.serviceKey, ...headers } });

describe("aggregates", () => {
  test("are refused while db_aggregates_enabled is off: 400 PGRST123", async () => {
    const r = await db.from("rest_notes").select("count()");
    expect(r.status).toBe(400);
    expect(r.error).toEqual({
      code: "PGRST123",
      message: "Use of aggregate functions is not allowed",
      details: null,
      hint: null,
    });
  });

  test("with db_aggregates_enabled: grouping, aliases, casts, nested", async () => {
    await b.db.exec(`alter role authenticator set pgrst.db_aggregates_enabled = 'true';
      notify pgrst, 'reload config'`);
    await eventually(async () => {
      expect((await db.from("rest_notes").select("count()")).data).toEqual([{ count: 3 }]);
    });
    const grouped = await db
      .from("rest_notes")
      .select("stars, n:count(), total:stars.sum()::text")
      .order("stars");
    expect(grouped.data).toEqual([
      { stars: 3, n: 1, total: "3" },
      { stars: 5, n: 2, total: "10" },
    ]);
    const all = await db.from("rest_notes").select("stars.max(), stars.min(), stars.avg()::int");
    expect(all.data).toEqual([{ max: 5, min: 3, avg: 4 }]);
    const nested = await db
      .from("rest_notes")
      .select("title, rest_comments(count())")
      .order("title");
    expect(nested.data).toEqual([
      { title: "n1", rest_comments: [{ count: 2 }] },
      { title: "n2", rest_comments: [{ count: 1 }] },
      { title: "n3", rest_comments: [{ count: 0 }] },
    ]);
    await b.db.exec(`alter role authenticator reset pgrst.db_aggregates_enabled;
      notify pgrst, 'reload config'`);
    await eventually(async () => {
      expect((await db.from("rest_notes").select("count()")).error?.code).toBe("PGRST123");
    });
  });
});

describe("aggregates in a to-one spread (hoisted, as PostgREST v14 does)", () => {
  // The spread's aggregates are computed by the level above it (the root, or the nearest plain
  // embed), grouped by that level's other columns; count() counts the rows that have the related
  // row. Unaliased, an aggregate is named after its function.
  const body = async (path: string) => {
    const r = await raw(path);
    return { status: r.status, text: await r.text() };
  };

  test("lifted to the parent, grouped by its columns, through nested to-one spreads", async () => {
    await b.db.exec(`alter role authenticator set pgrst.db_aggregates_enabled = 'true';
      notify pgrst, 'reload config'`);
    try {
      await eventually(async () => {
        expect(await body("/rest_people?select=...parent_id(count(),id.sum())")).toEqual({
          status: 200,
          text: '[{"count":3,"sum":4}]',
        });
      });
      expect(
        await body("/rest_people?select=...parent_id(total:id.sum()::text,n:count())"),
      ).toEqual({ status: 200, text: '[{"total":"4","n":3}]' });
      expect(
        await body(
          "/rest_people?select=...parent_id(id.max(),count()),mentor_id&order=mentor_id.nullsfirst",
        ),
      ).toEqual({
        status: 200,
        text: '[{"mentor_id":null,"max":1,"count":1}, \n {"mentor_id":1,"max":2,"count":1}, \n {"mentor_id":2,"max":1,"count":1}]',
      });
      // grouped by the spread's own plain columns
      expect(await body("/rest_people?select=...parent_id(count(),name)&id=in.(2,3)")).toEqual({
        status: 200,
        text: '[{"count":2,"name":"ann"}]',
      });
      // a spread in a spread: up to the root
      expect(
        await body("/rest_people?select=...mentor_id(...parent_id(count(),name.max()))"),
      ).toEqual({ status: 200, text: '[{"count":1,"max":"ann"}]' });
      // up to the nearest plain embed, computed per parent row
      expect(
        await body(
          "/rest_people?select=name,kids:rest_people!parent_id(...mentor_id(count()))&id=eq.1",
        ),
      ).toEqual({ status: 200, text: '[{"name":"ann","kids":[{"count": 1}]}]' });
      // not into a to-many spread
      expect(
        await body("/rest_people?select=...rest_people!parent_id(...mentor_id(count()))"),
      ).toEqual({
        status: 400,
        text: JSON.stringify({
          code: "PGRST127",
          details: "Aggregates are not implemented for one-to-many or many-to-many spreads.",
          hint: null,
          message: "Feature not implemented",
        }),
      });
    } finally {
      await b.db.exec(`alter role authenticator reset pgrst.db_aggregates_enabled;
        notify pgrst, 'reload config'`);
    }
  });
});

describe("embedding", () => {
  test("computed relationships embed like tables (to-many and to-one)", async () => {
    const { data, error } = await db
      .from("rest_notes")
      .select("title, rest_latest_comments(text), owner:rest_note_owner(username)")
      .eq("id", noteIds[0])
      .single();
    expect(error).toBeNull();
    expect(data).toMatchObject({
      title: "n1",
      rest_latest_comments: [{ text: "c2" }, { text: "c1" }],
      owner: { username: expect.stringMatching(/^user_/) },
    });
  });

  test("spread on a to-many relationship: one array per column", async () => {
    const { data, error } = await db
      .from("rest_notes")
      .select("title, ...rest_comments(text, comment_id:id)")
      .eq("id", noteIds[0])
      .order("id", { referencedTable: "rest_comments" })
      .single();
    expect(error).toBeNull();
    const row = data as unknown as { title: string; text: string[]; comment_id: number[] };
    expect(row.title).toBe("n1");
    expect(row.text).toEqual(["c1", "c2"]);
    expect(row.comment_id).toHaveLength(2);
    const none = await db
      .from("rest_notes")
      .select("...rest_comments(text)")
      .eq("id", noteIds[2])
      .single();
    expect(none.data).toEqual({ text: [] });
  });

  test("a self-reference: the table's name is the children, the column the parent", async () => {
    const people = b.client();
    const ambiguous = await people.from("rest_people").select("name, rest_people(name)");
    expect(ambiguous.status).toBe(300);
    expect(ambiguous.error).toEqual({
      code: "PGRST201",
      message:
        "Could not embed because more than one relationship was found for 'rest_people' and 'rest_people'",
      details: [
        {
          cardinality: "one-to-many",
          embedding: "rest_people with rest_people",
          relationship:
            "rest_people_parent_id_fkey using rest_people(id) and rest_people(parent_id)",
        },
        {
          cardinality: "one-to-many",
          embedding: "rest_people with rest_people",
          relationship:
            "rest_people_mentor_id_fkey using rest_people(id) and rest_people(mentor_id)",
        },
      ],
      hint: "Try changing 'rest_people' to one of the following: 'rest_people!rest_people_parent_id_fkey', 'rest_people!rest_people_mentor_id_fkey'. Find the desired relationship in the 'details' key.",
    });
    const { data, error } = await people
      .from("rest_people")
      .select("name, parent:parent_id(name), mentees:rest_people!mentor_id(name)")
      .eq("id", 1)
      .single();
    expect(error).toBeNull();
    expect(data).toEqual({ name: "ann", parent: null, mentees: [{ name: "di" }] });
    const child = await people
      .from("rest_people")
      .select("name, parent:parent_id(name), children:rest_people!parent_id(name)")
      .eq("id", 2)
      .single();
    expect(child.data).toEqual({
      name: "ben",
      parent: { name: "ann" },
      children: [{ name: "di" }],
    });
  });
});

describe("response bodies, byte for byte as PostgREST builds them", () => {
  // PostgREST v14: the top level is json (json_agg of the rows: keys in select order, no spaces);
  // embedded objects and arrays are jsonb (row_to_json(…)::jsonb, json_agg(…)::jsonb), so their
  // keys come out shortest first, then bytewise, printed with jsonb's spacing; columns come
  // before embeds and spreads whatever the select order.
  const body = async (path: string, headers: Record<string, string> = {}) => {
    const r = await raw(path, headers);
    expect(r.status).toBe(200);
    return r.text();
  };

  test("a to-one embed: a jsonb object after the columns", async () => {
    expect(
      await body("/rest_people?select=parent:parent_id(parent_id,name,id),name,id&id=eq.4"),
    ).toBe('[{"name":"di","id":4,"parent":{"id": 2, "name": "ben", "parent_id": 1}}]');
    expect(
      await body(
        "/rest_people?select=id,parent:parent_id(a_long_key:id,zz:name,b:id,a:name)&id=eq.2",
      ),
    ).toBe('[{"id":2,"parent":{"a": "ann", "b": 1, "zz": "ann", "a_long_key": 1}}]');
    // a missing parent is null
    expect(await body("/rest_people?select=name,parent:parent_id(name)&id=eq.1")).toBe(
      '[{"name":"ann","parent":null}]',
    );
  });

  test("a to-many embed: a jsonb array, [] when empty; the object media type too", async () => {
    expect(
      await body(
        "/rest_people?select=kids:rest_people!parent_id(name,id),name&id=in.(1,3)&order=id&kids.order=id",
      ),
    ).toBe(
      '[{"name":"ann","kids":[{"id": 2, "name": "ben"}, {"id": 3, "name": "cy"}]}, \n {"name":"cy","kids":[]}]',
    );
    expect(
      await body("/rest_people?select=kids:rest_people!parent_id(name,id),name&id=eq.2", {
        Accept: "application/vnd.pgrst.object+json",
      }),
    ).toBe('{"name":"ben","kids":[{"id": 4, "name": "di"}]}');
  });

  test("nested embeds: jsonb all the way down", async () => {
    expect(
      await body(
        "/rest_people?select=name,parent:parent_id(mentees:rest_people!mentor_id(name,id),name)&id=eq.3",
      ),
    ).toBe('[{"name":"cy","parent":{"name": "ann", "mentees": [{"id": 4, "name": "di"}]}}]');
  });

  test("spreads: a to-one spread's columns at the top level, a to-many spread's jsonb arrays", async () => {
    expect(
      await body("/rest_people?select=...mentor_id(pname:name,boss:parent_id(name,id)),id&id=eq.3"),
    ).toBe('[{"id":3,"pname":"ben","boss":{"id": 1, "name": "ann"}}]');
    // inside the spread too, the columns come before the embeds
    expect(
      await body("/rest_people?select=id,...mentor_id(boss:parent_id(name),pname:name)&id=eq.3"),
    ).toBe('[{"id":3,"pname":"ben","boss":{"name": "ann"}}]');
    expect(
      await body(
        "/rest_people?select=...rest_people!parent_id(kid:name,kid_id:id),name&id=eq.1&rest_people.order=id",
      ),
    ).toBe('[{"name":"ann","kid":["ben", "cy"],"kid_id":[2, 3]}]');
  });

  test("nulls=stripped strips inside the embeds too, with json_strip_nulls's spacing", async () => {
    expect(
      await body("/rest_people?select=name,parent:parent_id(name,mentor_id)&id=eq.2", {
        Accept: "application/vnd.pgrst.array+json;nulls=stripped",
      }),
    ).toBe('[{"name":"ben","parent":{"name":"ann"}}]');
  });
});

describe("text/csv", () => {
  test("rows as PostgREST writes them: header, record text, no trailing newline", async () => {
    const r = await raw("/rest_people?select=id,name,parent_id&order=id", { Accept: "text/csv" });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(await r.text()).toBe("id,name,parent_id\n1,ann,\n2,ben,1\n3,cy,1\n4,di,2");
    const { data } = await service.from("rest_people").select("name").eq("id", 3).csv();
    expect(data).toBe("name\ncy");
  });

  test("CSV bodies insert rows; NULL is null", async () => {
    const r = await b.fetch(`${b.url}/rest/v1/rest_items?select=id,name,kind`, {
      method: "POST",
      headers: {
        apikey: b.serviceKey,
        "Content-Type": "text/csv",
        Prefer: "return=representation",
      },
      body: 'id,name,kind\n101,"a, b",NULL\n102,c,x',
    });
    expect(r.status).toBe(201);
    expect(await r.json()).toEqual([
      { id: 101, name: "a, b", kind: null },
      { id: 102, name: "c", kind: "x" },
    ]);
  });
});

describe("explain", () => {
  test("the plan media type is not available without db_plan_enabled: 406 PGRST107", async () => {
    const r = await raw("/rest_people?select=name", {
      Accept: "application/vnd.pgrst.plan+json",
    });
    expect(r.status).toBe(406);
    expect(await r.json()).toEqual({
      code: "PGRST107",
      message:
        'None of these media types are available: application/vnd.pgrst.plan+json; for="application/json"',
      details: null,
      hint: null,
    });
  });

  test("with db_plan_enabled: EXPLAIN of the statement, JSON or text, with options", async () => {
    await b.db.exec(`alter role authenticator set pgrst.db_plan_enabled = 'true';
      notify pgrst, 'reload config'`);
    try {
      let r: Response | undefined;
      await eventually(async () => {
        r = await raw("/rest_people?select=name&id=eq.1", {
          Accept: 'application/vnd.pgrst.plan+json; for="application/json"; options=analyze',
        });
        expect(r.status).toBe(200);
      });
      expect(r?.headers.get("content-type")).toBe(
        'application/vnd.pgrst.plan+json; for="application/json"; options=analyze; charset=utf-8',
      );
      const plan = (await r?.json()) as { Plan: { "Node Type": string; "Actual Rows": number } }[];
      expect(plan[0]?.Plan["Node Type"]).toBe("Aggregate");
      expect(plan[0]?.Plan["Actual Rows"]).toBe(1);
      const { data } = await service.from("rest_people").select("name").explain();
      expect(String(data)).toMatch(/^Aggregate {2}\(cost=/);
    } finally {
      await b.db.exec(`alter role authenticator reset pgrst.db_plan_enabled;
        notify pgrst, 'reload config'`);
    }
  });
});

describe("explain as Postgres prints it", () => {
  test("verbose carries Postgres' Query Identifier (compute_query_id, as Supabase's pg_stat_statements)", async () => {
    await b.db.exec(`alter role authenticator set pgrst.db_plan_enabled = 'true';
      notify pgrst, 'reload config'`);
    try {
      let r: Response | undefined;
      await eventually(async () => {
        r = await raw("/rest_people?select=name&id=eq.1", {
          Accept: 'application/vnd.pgrst.plan+text; for="application/json"; options=verbose',
        });
        expect(r.status).toBe(200);
      });
      expect(await (r as Response).text()).toMatch(/\nQuery Identifier: -?\d+\n$/);
      const { data } = await service
        .from("rest_people")
        .select("name")
        .explain({ verbose: true, format: "json" });
      expect((data as { "Query Identifier"?: unknown }[])[0]?.["Query Identifier"]).toEqual(
        expect.any(Number),
      );
    } finally {
      await b.db.exec(`alter role authenticator reset pgrst.db_plan_enabled;
        notify pgrst, 'reload config'`);
    }
  });

  test("a JSON plan is EXPLAIN's own text, then a newline", async () => {
    await b.db.exec(`alter role authenticator set pgrst.db_plan_enabled = 'true';
      notify pgrst, 'reload config'`);
    try {
      // a sequential scan (no index on name) starts at cost 0.00: Postgres prints two decimals
      const path = "/rest_people?select=name,id&name=eq.ann";
      const accept = 'application/vnd.pgrst.plan+json; for="application/json"';
      let r: Response | undefined;
      await eventually(async () => {
        r = await raw(path, { Accept: accept });
        expect(r.status).toBe(200);
      });
      const text = await (r as Response).text();
      expect(text).toContain('"Startup Cost": 0.00,');
      // the same statement, explained straight in Postgres: the same bytes
      const request = new Request(`${b.url}/rest/v1${path}`, { headers: { Accept: accept } });
      const api = await readRequest(request, "/rest_people", { schemas: ["public"] });
      const cache = await loadSchemaCache(b.db, ["public"]);
      const query = querySql(planRequest(api, cache, "public", api.payload, { planEnabled: true }));
      const printed = await b.db.query<{ "QUERY PLAN": string }>(query.text, query.params, {
        parsers: { 114: (t: string) => t },
      });
      expect(text).toBe(`${printed.rows[0]?.["QUERY PLAN"]}\n`);
    } finally {
      await b.db.exec(`alter role authenticator reset pgrst.db_plan_enabled;
        notify pgrst, 'reload config'`);
    }
  });
});

describe("writes", () => {
  test("upsert: 201 when a row is inserted, 200 when all were updated", async () => {
    const items = service.from("rest_items");
    const first = await items.upsert({ id: 1, name: "one" });
    expect(first.status).toBe(201);
    const again = await items.upsert({ id: 1, name: "uno" });
    expect(again.status).toBe(200);
    const mixed = await items
      .upsert([
        { id: 1, name: "eins" },
        { id: 2, name: "zwei" },
      ])
      .select("id, name");
    expect(mixed.status).toBe(201);
    expect(mixed.data).toEqual([
      { id: 1, name: "eins" },
      { id: 2, name: "zwei" },
    ]);
    const ignored = await items.upsert({ id: 2, name: "two" }, { ignoreDuplicates: true });
    expect(ignored.status).toBe(201);
  });

  test("upsert on a unique column: merge updates the row (200 with it), ignore keeps 201 []", async () => {
    const handles = service.from("rest_handles");
    const handle = `h${crypto.randomUUID().slice(0, 8)}`;
    const inserted = await handles.upsert({ handle }, { onConflict: "handle" }).select();
    expect(inserted).toMatchObject({ status: 201, error: null, data: [{ handle }] });
    const id = (inserted.data as { id: number }[])[0]?.id;
    const merged = await handles.upsert({ handle }, { onConflict: "handle" }).select();
    expect(merged).toMatchObject({ status: 200, error: null, data: [{ id, handle }] });
    const ignored = await handles
      .upsert({ handle }, { onConflict: "handle", ignoreDuplicates: true })
      .select();
    expect(ignored).toMatchObject({ status: 201, error: null, data: [] });
  });

  test("upsert with Prefer: missing=default: the same 201 or 200, absent keys take defaults", async () => {
    const items = service.from("rest_items");
    const options = { defaultToNull: false } as const;
    const inserted = await items.upsert([{ id: 21, name: "x" }], options).select("id, qty");
    expect(inserted.status).toBe(201);
    expect(inserted.data).toEqual([{ id: 21, qty: 1 }]);
    const updated = await items
      .upsert([{ id: 21, name: "y", qty: 3 }], options)
      .select("id, name, qty");
    expect(updated.status).toBe(200);
    expect(updated.data).toEqual([{ id: 21, name: "y", qty: 3 }]);
    const mixed = await items.upsert(
      [
        { id: 21, name: "z" },
        { id: 22, name: "new" },
      ],
      options,
    );
    expect(mixed.status).toBe(201);
  });

  test("bulk insert with Prefer: missing=default", async () => {
    const { data, error } = await service
      .from("rest_items")
      .insert(
        [
          { id: 11, name: "a" },
          { id: 12, name: "b", qty: 5, kind: null },
        ],
        { defaultToNull: false },
      )
      .select("id, qty, kind");
    expect(error).toBeNull();
    expect(data).toEqual([
      { id: 11, qty: 1, kind: "plain" },
      { id: 12, qty: 5, kind: null },
    ]);
  });

  test("a role with column-level SELECT gets back the columns it may read", async () => {
    const user = b.client(await sign({ role: "authenticated", sub: crypto.randomUUID() }));
    const { data, error } = await user
      .from("rest_secrets")
      .insert({ label: "mine" })
      .select("id, label");
    expect(error).toBeNull();
    expect(data).toEqual([{ id: expect.any(Number), label: "mine" }]);
    const star = await user.from("rest_secrets").insert({ label: "all" }).select();
    expect(star.status).toBe(403);
    expect(star.error?.code).toBe("42501");
  });

  test("RETURNING is the selected columns and the primary key, as PostgREST's; none without representation", async () => {
    const user = b.client(await sign({ role: "authenticated", sub: crypto.randomUUID() }));
    const secrets = await user.from("rest_secrets").insert({ label: "keyed" }).select("label");
    expect(secrets).toMatchObject({ status: 201, error: null, data: [{ label: "keyed" }] });
    // the key of rest_ballots is not readable: a minimal insert works, a returned one cannot
    const minimal = await user.from("rest_ballots").insert({ choice: "yes" });
    expect(minimal).toMatchObject({ status: 201, error: null, data: null });
    const denied = {
      status: 403,
      data: null,
      error: {
        code: "42501",
        message: "permission denied for table rest_ballots",
        details: null,
        hint: null,
      },
    };
    expect(await user.from("rest_ballots").insert({ choice: "no" }).select("choice")).toMatchObject(
      denied,
    );
    expect(
      await user
        .from("rest_ballots")
        .update({ choice: "maybe" })
        .eq("choice", "yes")
        .select("choice"),
    ).toMatchObject(denied);
    expect(
      await user.from("rest_ballots").update({ choice: "maybe" }).eq("choice", "yes"),
    ).toMatchObject({ status: 204, error: null });
  });
});

// Where PostgREST v14.12 (the version the Supabase CLI runs) reads a request differently from
// what a lenient reading would: the Prefer header (first of a kind wins, entries compared whole,
// tx= only where db-tx-end allows it, timezone=, max-affected), limit/offset and the Range header,
// order modifiers, Accept q-values, request bodies, the statuses a function may raise, and a
// scalar function's result read as the column pgrst_scalar. An in-process backend of its own:
// it adds functions and changes db-tx-end.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { parseRequest } from "../../src/rest/parse.ts";
import { type LocalBackend, localBackend } from "./support/backend.ts";
import { eventually } from "./support/project.ts";

let b: LocalBackend;

const FUNCTIONS = `
create function public.parity_raise(code text) returns int language plpgsql as $$
begin
  execute format('do $x$ begin raise sqlstate %L using message = %L; end $x$', code, 'raised');
  return 1;
end $$;
create function public.parity_pgrst(status text) returns int language plpgsql as $$
begin
  raise sqlstate 'PGRST' using message = '{"code":"X1","message":"chosen"}',
    detail = '{"status":' || status || ',"headers":{}}';
end $$;
create function public.parity_timezone() returns text language sql stable as $$
  select current_setting('TimeZone')
$$;
create function public.parity_headers() returns json language sql stable as $$
  select current_setting('request.headers', true)::json
$$;
grant execute on all functions in schema public to anon, authenticated, service_role;
notify pgrst, 'reload schema';
`;

beforeAll(async () => {
  b = await localBackend();
  await b.db.exec(FUNCTIONS);
  await eventually(async () => {
    expect((await rest("/rpc/parity_timezone")).status).toBe(200);
  });
}, 60_000);

afterAll(async () => {
  await b.db.exec(`alter role authenticator reset pgrst.db_tx_end; notify pgrst, 'reload config'`);
});

/** A request with the service key (RLS bypassed), JSON unless told otherwise. */
const rest = (path: string, init: RequestInit = {}) => {
  const headers = new Headers(init.headers);
  headers.set("apikey", b.serviceKey);
  headers.set("Authorization", `Bearer ${b.serviceKey}`);
  if (!headers.has("Content-Type")) headers.set("Content-Type", "application/json");
  return b.fetch(`${b.url}/rest/v1${path}`, { ...init, headers });
};

const labelIds = async (from: number) =>
  (
    (await (await rest(`/rest_labels?select=id&id=gte.${from}&order=id`)).json()) as {
      id: number;
    }[]
  ).map((r) => r.id);

describe("Prefer", () => {
  test("tx= is ignored while db-tx-end allows no override (the CLI's default): the write commits", async () => {
    const res = await rest("/rest_labels?select=name", {
      method: "POST",
      headers: { Prefer: "return=representation, tx=rollback" },
      body: JSON.stringify({ id: 101, name: "kept" }),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("preference-applied")).toBe("return=representation");
    expect(await labelIds(101)).toEqual([101]);
    await rest("/rest_labels?id=eq.101", { method: "DELETE" });
  });

  test("with db_tx_end = commit-allow-override, tx=rollback rolls back and is applied", async () => {
    await b.db.exec(`alter role authenticator set pgrst.db_tx_end = 'commit-allow-override';
      notify pgrst, 'reload config'`);
    const insert = (id: number) =>
      rest("/rest_labels?select=name", {
        method: "POST",
        headers: { Prefer: "return=representation, tx=rollback" },
        body: JSON.stringify({ id, name: `ghost ${id}` }),
      });
    await eventually(async () => {
      const res = await insert(102);
      expect(res.headers.get("preference-applied")).toBe("return=representation, tx=rollback");
      expect(await res.json()).toEqual([{ name: "ghost 102" }]);
    });
    expect(await labelIds(102)).toEqual([]);
    // db_tx_end = rollback: every request is rolled back, tx=commit may not override it
    await b.db.exec(`alter role authenticator set pgrst.db_tx_end = 'rollback';
      notify pgrst, 'reload config'`);
    await eventually(async () => {
      const res = await rest("/rest_labels", {
        method: "POST",
        headers: { Prefer: "tx=commit" },
        body: JSON.stringify({ id: 103, name: "rolled back" }),
      });
      expect(res.status).toBe(201);
      expect(res.headers.get("preference-applied")).toBeNull();
      expect(await labelIds(103)).toEqual([]);
    });
    await b.db.exec(
      `alter role authenticator reset pgrst.db_tx_end; notify pgrst, 'reload config'`,
    );
    await eventually(async () => {
      await rest("/rest_labels", { method: "POST", body: JSON.stringify({ id: 104, name: "x" }) });
      expect(await labelIds(104)).toEqual([104]);
    });
    await rest("/rest_labels?id=eq.104", { method: "DELETE" });
  });

  test("a preference given twice: the first wins", async () => {
    const res = await rest("/rest_labels", {
      method: "POST",
      headers: { Prefer: "return=minimal, return=representation, count=exact, count=planned" },
      body: JSON.stringify({ id: 105, name: "first wins" }),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("preference-applied")).toBe("return=minimal, count=exact");
    expect(await res.text()).toBe("");
    await rest("/rest_labels?id=eq.105", { method: "DELETE" });
  });

  test("handling=strict: `return = minimal` and an unknown timezone are 400 PGRST122", async () => {
    for (const [prefer, invalid] of [
      ["handling=strict, return = minimal", "return = minimal"],
      ["handling=strict, timezone=Mars/Olympus", "timezone=Mars/Olympus"],
    ]) {
      const res = await rest("/rest_labels?select=id", { headers: { Prefer: prefer as string } });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        code: "PGRST122",
        message: "Invalid preferences given with handling=strict",
        details: `Invalid preferences: ${invalid}`,
        hint: null,
      });
    }
  });

  test("a known timezone is the transaction's TimeZone, and applied", async () => {
    const res = await rest("/rpc/parity_timezone", {
      headers: { Prefer: "handling=strict, timezone=Asia/Tokyo" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("preference-applied")).toBe("handling=strict, timezone=Asia/Tokyo");
    expect(await res.json()).toBe("Asia/Tokyo");
  });

  test("max-affected is checked for updates, deletes and function calls, not reads or inserts", async () => {
    const strict = { Prefer: "handling=strict, max-affected=1" };
    const read = await rest("/rest_labels?select=id", { headers: strict });
    expect(read.status).toBe(200);
    expect(read.headers.get("preference-applied")).toBe("handling=strict");
    const insert = await rest("/rest_labels", {
      method: "POST",
      headers: strict,
      body: JSON.stringify([
        { id: 106, name: "m1" },
        { id: 107, name: "m2" },
      ]),
    });
    expect(insert.status).toBe(201);
    const over = await rest("/rest_labels?id=in.(106,107)", { method: "DELETE", headers: strict });
    expect(over.status).toBe(400);
    expect(await over.json()).toEqual({
      code: "PGRST124",
      message: "Query result exceeds max-affected preference constraint",
      details: "The query affects 2 rows",
      hint: null,
    });
    const remove = await rest("/rest_labels?id=in.(106,107)", {
      method: "DELETE",
      headers: { Prefer: "handling=strict, max-affected=2" },
    });
    expect(remove.status).toBe(204);
    expect(remove.headers.get("preference-applied")).toBe("handling=strict, max-affected=2");
    expect(await labelIds(106)).toEqual([]);
  });

  test("max-affected with handling=strict on a function not returning SETOF or TABLE: 400 PGRST128", async () => {
    const res = await rest("/rpc/rest_add?a=1", {
      headers: { Prefer: "handling=strict, max-affected=1" },
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      code: "PGRST128",
      message:
        "Function must return SETOF or TABLE when max-affected preference is used with handling=strict",
      details: null,
      hint: null,
    });
    const set = await rest("/rpc/rest_series?n=2", {
      headers: { Prefer: "handling=strict, max-affected=2" },
    });
    expect(set.status).toBe(200);
    expect(set.headers.get("preference-applied")).toBe("handling=strict, max-affected=2");
  });
});

describe("limit, offset, order, Range", () => {
  test("limit=-1 is 416 PGRST103; an unreadable limit or offset is ignored", async () => {
    const negative = await rest("/rest_labels?select=id&limit=-1");
    expect(negative.status).toBe(416);
    expect(await negative.json()).toEqual({
      code: "PGRST103",
      message: "Requested range not satisfiable",
      details: "Limit should be greater than or equal to zero.",
      hint: null,
    });
    for (const query of ["limit=abc", "limit=1e3", "offset=abc", "offset=-4"]) {
      const res = await rest(`/rest_labels?select=id&order=id&${query}`);
      expect(res.status, query).toBe(200);
      expect(await res.json(), query).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
    }
  });

  test("a direction after another, or after nulls ordering, is PGRST100", async () => {
    for (const order of ["id.asc.desc", "id.nullsfirst.asc"]) {
      const res = await rest(`/rest_labels?select=id&order=${order}`);
      expect(res.status, order).toBe(400);
      expect((await res.json()).code, order).toBe("PGRST100");
    }
  });

  test("Range is `first-last` only, and read by GET only", async () => {
    const unit = await rest("/rest_labels?select=id&order=id", { headers: { Range: "items=0-1" } });
    expect(unit.headers.get("content-range")).toBe("0-2/*");
    const head = await rest("/rest_labels?select=id&order=id", {
      method: "HEAD",
      headers: { Range: "0-1" },
    });
    expect(head.headers.get("content-range")).toBe("0-2/*");
    const get = await rest("/rest_labels?select=id&order=id", { headers: { Range: "0-1" } });
    expect(get.headers.get("content-range")).toBe("0-1/*");
  });
});

describe("content", () => {
  test("Accept is ordered by q, then by specificity", async () => {
    const byQ = await rest("/rest_labels?select=id&id=eq.1", {
      headers: { Accept: "text/csv;q=0.5, application/json" },
    });
    expect(byQ.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const specific = await rest("/rest_labels?select=id&id=eq.1", {
      headers: { Accept: "*/*, text/csv" },
    });
    expect(specific.headers.get("content-type")).toBe("text/csv; charset=utf-8");
  });

  test("PATCH: an empty body is PGRST102, an array of objects is accepted", async () => {
    const empty = await rest("/rest_labels?id=eq.1", { method: "PATCH", body: "" });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toEqual({
      code: "PGRST102",
      message: "Empty or invalid json",
      details: null,
      hint: null,
    });
    const array = await rest("/rest_labels?id=eq.1&select=name", {
      method: "PATCH",
      headers: { Prefer: "return=representation" },
      body: JSON.stringify([{ name: "work" }]),
    });
    expect(await array.json()).toEqual([{ name: "work" }]);
    expect(array.status).toBe(200);
  });

  test("a JSON scalar body is no rows (PostgREST reads it as an empty array)", async () => {
    const res = await rest("/rest_labels", {
      method: "POST",
      headers: { Prefer: "return=representation" },
      body: "5",
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual([]);
  });

  test("the parsed body is not frozen value by value (a large one would block for seconds)", () => {
    const api = parseRequest({
      method: "POST",
      path: "/t",
      params: [],
      headers: new Headers({ "content-type": "application/json" }),
      body: '[{"a":{"b":1}}]',
    });
    expect(Object.isFrozen(api)).toBe(true);
    expect(Object.isFrozen((api.payload as { a: object }[])[0]?.a)).toBe(false);
  });

  test("columns= names a column once however often it is given; on_conflict is Postgres's to check", async () => {
    const twice = await rest("/rest_labels?columns=id,name,id", {
      method: "POST",
      body: JSON.stringify({ id: 108, name: "twice" }),
    });
    expect(twice.status).toBe(201);
    const unknown = await rest("/rest_labels?on_conflict=nope", {
      method: "POST",
      headers: { Prefer: "resolution=merge-duplicates" },
      body: JSON.stringify({ id: 108, name: "twice" }),
    });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({
      code: "42703",
      message: 'column "nope" does not exist',
    });
    await rest("/rest_labels?id=eq.108", { method: "DELETE" });
  });

  test("request.headers leaves the Cookie header out (it is request.cookies)", async () => {
    const res = await rest("/rpc/parity_headers", { headers: { Cookie: "a=1", "X-Mine": "y" } });
    const headers = (await res.json()) as Record<string, string>;
    expect(headers["x-mine"]).toBe("y");
    expect(headers).not.toHaveProperty("cookie");
  });

  test("a path segment that is not UTF-8 names no table: 404 PGRST205", async () => {
    const res = await rest("/%FF");
    expect(res.status).toBe(404);
    expect((await res.json()).code).toBe("PGRST205");
  });
});

describe("statuses a function raises", () => {
  test("PTxyz and RAISE 'PGRST' with a status HTTP cannot carry: 500 with the error, never empty", async () => {
    for (const path of [
      "/rpc/parity_raise?code=PT999",
      "/rpc/parity_pgrst?status=0",
      "/rpc/parity_pgrst?status=99",
      "/rpc/parity_pgrst?status=1000",
    ]) {
      const res = await rest(path);
      expect(res.status, path).toBe(500);
      expect(await res.json(), path).toMatchObject({ message: expect.any(String) });
    }
    const pt = await rest("/rpc/parity_raise?code=PT999");
    expect(await pt.json()).toEqual({
      code: "PT999",
      message: "raised",
      details: null,
      hint: null,
    });
  });

  test("a status that is not a whole number is PGRST121; 204 has no body", async () => {
    const fraction = await rest("/rpc/parity_pgrst?status=204.5");
    expect(fraction.status).toBe(500);
    expect(await fraction.json()).toMatchObject({
      code: "PGRST121",
      details: `Invalid JSON value for DETAIL: '{"status":204.5,"headers":{}}'`,
    });
    const none = await rest("/rpc/parity_pgrst?status=204");
    expect(none.status).toBe(204);
    expect(await none.text()).toBe("");
  });
});

describe("a scalar function's result is the column pgrst_scalar", () => {
  test("filters, order and select apply to it; another column is Postgres's 42703", async () => {
    expect(await (await rest("/rpc/rest_series?n=5&order=pgrst_scalar.desc")).json()).toEqual([
      5, 4, 3, 2, 1,
    ]);
    expect(await (await rest("/rpc/rest_series?n=5&pgrst_scalar=gt.3")).json()).toEqual([4, 5]);
    expect(await (await rest("/rpc/rest_add?a=1&pgrst_scalar=eq.2")).json()).toBe(2);
    expect(await (await rest("/rpc/rest_add?a=1&pgrst_scalar=eq.3")).json()).toBeNull();
    const unknown = await rest("/rpc/rest_add?a=1&select=nope");
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({
      code: "42703",
      message: "column rest_add.nope does not exist",
    });
    const filter = await rest("/rpc/rest_series?n=3&nope=eq.1");
    expect(filter.status).toBe(400);
    expect((await filter.json()).code).toBe("42703");
  });
});

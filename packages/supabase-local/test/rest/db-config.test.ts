// The data API's in-database configuration: a project whose migrations set pgrst.* on the
// authenticator role (as Supabase projects do) starts unchanged, and the settings apply, override
// config.toml's [api], and reload on NOTIFY pgrst, 'reload config'.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { eventually, type Project, startProject } from "./support/project.ts";

let project: Project;

const MIGRATION = `
create table public.items (id int primary key, name text not null);
insert into public.items select g, 'item ' || g from generate_series(1, 10) g;

create schema utils;
grant usage on schema utils to anon, authenticated, service_role;
create function utils.twice(x int) returns int language sql immutable as $$ select x * 2 $$;
grant execute on function utils.twice(int) to anon, authenticated, service_role;
-- resolved through search_path at run time: utils must be on it
create function public.twice_via_path(x int) returns int language plpgsql stable as $$
begin
  return twice(x);
end $$;

create function public.check_request() returns void language plpgsql as $$
declare
  headers json := current_setting('request.headers', true)::json;
begin
  if headers->>'x-block' = 'teapot' then
    raise sqlstate 'PGRST' using
      message = '{"code":"123","message":"Blocked by the pre-request","details":"x-block","hint":"remove it"}',
      detail = '{"status":418,"headers":{"X-Powered-By":"tea"}}';
  end if;
  if headers->>'x-block' = 'plain' then
    raise exception 'not today' using hint = 'try tomorrow';
  end if;
  perform set_config('app.checked_as', current_user, true);
end $$;
create function public.checked_as() returns text language sql stable as $$
  select current_setting('app.checked_as', true)
$$;

alter role authenticator set pgrst.db_max_rows = '3';
alter role authenticator set pgrst.db_pre_request = 'public.check_request';
alter role authenticator set pgrst.db_extra_search_path = 'public, extensions, utils';
`;

beforeAll(async () => {
  project = await startProject({
    configToml: "[api]\nmax_rows = 5\n",
    migrations: { "20240101000000_pgrst_settings.sql": MIGRATION },
  });
}, 60_000);

afterAll(() => project?.close());

describe("the authenticator role", () => {
  test("is the real stack's login role, granted the API roles", async () => {
    const { rows } = await project.backend.db.query<Record<string, unknown>>(
      `select r.rolcanlogin, r.rolinherit,
              array(select g.rolname from pg_auth_members m join pg_roles g on g.oid = m.roleid
                     where m.member = r.oid order by 1) as granted
         from pg_roles r where r.rolname = 'authenticator'`,
    );
    expect(rows).toEqual([
      { rolcanlogin: true, rolinherit: false, granted: ["anon", "authenticated", "service_role"] },
    ]);
  });
});

describe("pgrst.* settings", () => {
  test("db_max_rows overrides config.toml's max_rows", async () => {
    const { data, error } = await project.client().from("items").select("id").order("id");
    expect(error).toBeNull();
    expect(data).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
  });

  test("db_pre_request runs in the request's transaction, as the request's role", async () => {
    const { data, error } = await project.client().rpc("checked_as");
    expect(error).toBeNull();
    expect(data).toBe("anon");
  });

  test("a pre-request RAISE SQLSTATE 'PGRST' chooses the whole answer", async () => {
    const res = await project.rest("/items?select=id", { headers: { "x-block": "teapot" } });
    expect(res.status).toBe(418);
    expect(res.headers.get("x-powered-by")).toBe("tea");
    expect(await res.json()).toEqual({
      code: "123",
      message: "Blocked by the pre-request",
      details: "x-block",
      hint: "remove it",
    });
  });

  test("a pre-request exception is the request's error", async () => {
    const res = await project.rest("/items?select=id", { headers: { "x-block": "plain" } });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      code: "P0001",
      message: "not today",
      details: null,
      hint: "try tomorrow",
    });
  });

  test("db_extra_search_path is the search_path after the request's schema", async () => {
    const { data, error } = await project.client().rpc("twice_via_path", { x: 21 });
    expect(error).toBeNull();
    expect(data).toBe(42);
  });

  test("NOTIFY pgrst, 'reload config' applies changed settings; file config is the fallback", async () => {
    await project.sql(`alter role authenticator reset pgrst.db_max_rows;
      alter role authenticator set pgrst.db_extra_search_path = 'public';
      notify pgrst, 'reload config'`);
    await eventually(async () => {
      const { data } = await project.client().from("items").select("id").order("id");
      expect(data).toHaveLength(5);
    });
    const { error } = await project.client().rpc("twice_via_path", { x: 1 });
    expect(error).toMatchObject({
      code: "42883",
      message: "function twice(integer) does not exist",
    });
    // a setting for this database wins over one for every database
    await project.sql(`alter role authenticator set pgrst.db_max_rows = '4';
      alter role authenticator in database ${await currentDatabase()} set pgrst.db_max_rows = '2';
      notify pgrst, 'reload config'`);
    await eventually(async () => {
      const { data } = await project.client().from("items").select("id").order("id");
      expect(data).toEqual([{ id: 1 }, { id: 2 }]);
    });
  });
});

async function currentDatabase(): Promise<string> {
  const { rows } = await project.backend.db.query<{ d: string }>("select current_database() as d");
  return `"${rows[0]?.d}"`;
}

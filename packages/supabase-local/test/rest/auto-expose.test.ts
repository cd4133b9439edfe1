// config.toml [api] auto_expose_new_tables, as the Supabase CLI 3.1.0 applies it: unset or true,
// what `postgres` creates in public is reachable by the API roles through their default
// privileges; false revokes those on a fresh database before the first migration, so only what a
// migration GRANTs is reachable (a hosted project with "Default privileges for new entities" off).
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { createClient } from "@supabase/supabase-js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { PUBLISHABLE_KEY } from "../../../../tests/support/backend.ts";
import { createLocalBackend, type LocalBackend } from "../../src/backend.ts";
import { openDatabase } from "../../src/database/open.ts";
import { baseSnapshot, snapshotCacheDir } from "../../src/database/snapshot.ts";
import { loadConfig } from "../../src/project/config.ts";
import { applyMigrations } from "../../src/project/migrations.ts";
import { withBaseSnapshot } from "../support/base-snapshot.ts";

const MIGRATION = `
create table public.open_items (id serial primary key, label text);
create table public.granted_items (id serial primary key, label text);
grant select on public.granted_items to anon;
create function public.hello() returns text language sql as $$ select 'hello' $$;
insert into public.open_items (label) values ('open');
insert into public.granted_items (label) values ('granted');
`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "auto-expose-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A project of one migration, with `api` as config.toml's [api] table. */
async function project(api: string) {
  const root = await mkdtemp(join(dir, "p-"));
  await mkdir(join(root, "supabase", "migrations"), { recursive: true });
  await writeFile(join(root, "supabase", "config.toml"), `project_id = "t"\n\n[api]\n${api}\n`);
  await writeFile(join(root, "supabase", "migrations", "20240101000000_items.sql"), MIGRATION);
  return { root, migrationsDir: join(root, "supabase", "migrations") };
}

/** What each API role may do with the migration's objects (Postgres's own privilege checks). */
async function privileges(db: PGlite) {
  const { rows } = await db.query<Record<string, unknown>>(
    `select r.role,
            has_table_privilege(r.role, 'public.open_items', 'select') as open_select,
            has_table_privilege(r.role, 'public.open_items', 'insert') as open_insert,
            has_sequence_privilege(r.role, 'public.open_items_id_seq', 'usage') as sequence_usage,
            has_table_privilege(r.role, 'public.granted_items', 'select') as granted_select,
            has_function_privilege(r.role, 'public.hello()', 'execute') as execute
       from unnest(array['anon', 'authenticated', 'service_role']) as r(role) order by r.role`,
  );
  return rows;
}

const everything = {
  open_select: true,
  open_insert: true,
  sequence_usage: true,
  granted_select: true,
  execute: true,
};

describe("[api] auto_expose_new_tables", () => {
  test("config.toml: unset is true, as the CLI 3.1.0 reads it", async () => {
    const unset = await project("");
    const off = await project("auto_expose_new_tables = false");
    const on = await project("auto_expose_new_tables = true");
    const read = (root: string) =>
      loadConfig({ projectDir: root, warn: () => {} }).api.autoExposeNewTables;
    expect([read(unset.root), read(on.root), read(off.root)]).toEqual([true, true, false]);
  });

  test("unset or true: the API roles reach what the migrations create", async () => {
    const p = await project("");
    const db = await openDatabase(undefined, {
      snapshot: await baseSnapshot(snapshotCacheDir(process.cwd())),
    });
    try {
      await applyMigrations(db, { migrationsDir: p.migrationsDir, autoExposeNewTables: true });
      expect(await privileges(db)).toEqual(
        ["anon", "authenticated", "service_role"].map((role) => ({ role, ...everything })),
      );
    } finally {
      await db.close();
    }
  });

  test("false: only what a migration grants; functions keep Postgres's EXECUTE for PUBLIC", async () => {
    const p = await project("");
    const db = await openDatabase(undefined, {
      snapshot: await baseSnapshot(snapshotCacheDir(process.cwd())),
    });
    try {
      await applyMigrations(db, { migrationsDir: p.migrationsDir, autoExposeNewTables: false });
      const none = { open_select: false, open_insert: false, sequence_usage: false };
      expect(await privileges(db)).toEqual([
        { role: "anon", ...none, granted_select: true, execute: true },
        { role: "authenticated", ...none, granted_select: false, execute: true },
        { role: "service_role", ...none, granted_select: false, execute: true },
      ]);
      // The CLI revokes the roles' own default grant on functions; PUBLIC's is Postgres's.
      const { rows } = await db.query<{ grantees: string[] }>(
        `select array_agg(coalesce(g.rolname, 'PUBLIC') order by g.rolname) as grantees
           from pg_proc p, aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
           left join pg_roles g on g.oid = a.grantee
          where p.oid = 'public.hello()'::regprocedure and a.privilege_type = 'EXECUTE'`,
      );
      expect(rows[0]?.grantees).toEqual(["postgres", "PUBLIC"]);

      // Like the CLI, only a fresh database: a later start with the setting changed keeps them.
      await writeFile(
        join(p.migrationsDir, "20240102000000_more.sql"),
        "create table public.later_items (id int primary key);",
      );
      await applyMigrations(db, { migrationsDir: p.migrationsDir, autoExposeNewTables: true });
      const later = await db.query<{ ok: boolean }>(
        "select has_table_privilege('anon', 'public.later_items', 'select') as ok",
      );
      expect(later.rows).toEqual([{ ok: false }]);
    } finally {
      await db.close();
    }
  });

  describe("through the data API", () => {
    let backend: LocalBackend;
    beforeAll(async () => {
      const p = await project("auto_expose_new_tables = false");
      await withBaseSnapshot(p.root);
      backend = await createLocalBackend({ projectDir: p.root, host: false, seed: false });
    }, 60_000);
    afterAll(() => backend?.close());

    test("false: a table without a grant is refused (42501); one with a grant answers", async () => {
      const anon = createClient(backend.url, PUBLISHABLE_KEY, {
        auth: { persistSession: false },
        global: { fetch: (input, init) => backend.fetch(new Request(input, init)) },
      });
      const open = await anon.from("open_items").select("label");
      expect(open.error).toMatchObject({
        code: "42501",
        message: "permission denied for table open_items",
      });
      expect(open.status).toBe(401);
      const granted = await anon.from("granted_items").select("label");
      expect(granted.error).toBeNull();
      expect(granted.data).toEqual([{ label: "granted" }]);
    });
  });
});

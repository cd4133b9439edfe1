// A new Supabase project's extensions and search path: pgcrypto and uuid-ossp in schema
// `extensions`, and the postgres role's search_path `"$user", public, extensions`, so that a seed
// (run as postgres) calls crypt(), gen_salt() and uuid_generate_v4() without a schema. The API
// roles get no search_path setting: the data API adds `extensions` from [api] extra_search_path.
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { projectCacheDir } from "../src/boot/cache-dir.js";
import { extensionFiles } from "../src/database/extensions.ts";
import { createLocalBackend, type LocalBackend } from "../src/index.ts";
import { withBaseSnapshot } from "./support/base-snapshot.ts";

let project: string;
let backend: LocalBackend;

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), "extensions-project-"));
  const cacheDir = join(project, "cache");
  await mkdir(join(project, "supabase", "migrations"), { recursive: true });
  await withBaseSnapshot(project, cacheDir);
  await writeFile(
    join(project, "supabase", "migrations", "20240101000000_people.sql"),
    "create table public.people (id uuid primary key default uuid_generate_v4(), hash text);",
  );
  await writeFile(
    join(project, "supabase", "seed.sql"),
    "insert into public.people (hash) values (crypt('secret', gen_salt('bf', 4)));",
  );
  backend = await createLocalBackend({ projectDir: project, host: false, cacheDir });
}, 120_000);

afterAll(async () => {
  await backend?.close();
  rmSync(project, { recursive: true, force: true });
});

test("a seed calls crypt() and gen_salt() unqualified, a migration uuid_generate_v4()", async () => {
  const { rows } = await backend.db.query<{ ok: boolean }>(
    "select hash = extensions.crypt('secret', hash) as ok from public.people",
  );
  expect(rows).toEqual([{ ok: true }]);
});

test("pgcrypto and uuid-ossp are in schema extensions", async () => {
  const { rows } = await backend.db.query<{ extname: string; schema: string }>(
    `select extname, extnamespace::regnamespace::text as schema from pg_extension
     where extname in ('pgcrypto', 'uuid-ossp') order by extname`,
  );
  expect(rows).toEqual([
    { extname: "pgcrypto", schema: "extensions" },
    { extname: "uuid-ossp", schema: "extensions" },
  ]);
});

test("postgres's and supabase_auth_admin's search_path are Supabase's; the API roles have none of their own", async () => {
  const { rows } = await backend.db.query<{ role: string; config: string[] }>(
    `select s.setrole::regrole::text as role, s.setconfig as config from pg_db_role_setting s
     where s.setdatabase = 0 and exists (select from unnest(s.setconfig) c where c like 'search\\_path=%')
     order by 1`,
  );
  expect(rows).toEqual([
    { role: "postgres", config: ['search_path="$user", public, extensions'] },
    { role: "supabase_auth_admin", config: ["search_path=auth"] },
  ]);
  expect((await backend.db.query<{ search_path: string }>("show search_path")).rows).toEqual([
    { search_path: '"$user", public, extensions' },
  ]);
});

test("the extensions' files are unpacked once into the cache, and the same files come from it", async () => {
  const digest = (files: Awaited<ReturnType<typeof extensionFiles>>) =>
    files.map((f) => [f.path, createHash("sha256").update(f.data).digest("hex")]);
  const first = await extensionFiles();
  expect(first.map((f) => f.path)).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/pgcrypto\.so$/),
      expect.stringMatching(/uuid-ossp\.so$/),
    ]),
  );
  const cached = await readdir(join(projectCacheDir(process.cwd()), "extensions"));
  // a tar per bundle (pgcrypto, uuid-ossp), named by its hash
  expect(cached.filter((name) => /^[0-9a-f]{32}\.tar$/.test(name)).length).toBeGreaterThanOrEqual(
    2,
  );
  expect(digest(await extensionFiles())).toEqual(digest(first));
});

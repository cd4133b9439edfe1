// A new Supabase project's extensions and search path: pgcrypto and uuid-ossp in schema
// `extensions`, and the postgres role's search_path `"$user", public, extensions`, so that a seed
// (run as postgres) calls crypt(), gen_salt() and uuid_generate_v4() without a schema. The API
// roles get no search_path setting: the data API adds `extensions` from [api] extra_search_path.
// The other extensions of Supabase's image that PGlite builds (pgvector among them) are available
// to a migration's `create extension`, as on a hosted project, and work through the data API.
import { createHash } from "node:crypto";
import { rmSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { afterAll, beforeAll, expect, test } from "vitest";
import { PUBLISHABLE_KEY } from "../../../tests/support/backend.ts";
import { projectCacheDir } from "../src/boot/cache-dir.js";
import { extensionFiles } from "../src/database/extensions.ts";
import { createLocalBackend, type LocalBackend } from "../src/index.ts";
import { temporaryProject } from "./support/base-snapshot.ts";

let project: string;
let backend: LocalBackend;

/** A migration as Supabase's guides write one for semantic search, with moddatetime and pg_trgm. */
const DOCUMENTS_MIGRATION = `
create extension if not exists vector with schema extensions;
create extension if not exists moddatetime with schema extensions;
create extension if not exists pg_trgm with schema extensions;

create table public.documents (
  id bigint generated always as identity primary key,
  owner uuid not null default auth.uid() references auth.users on delete cascade,
  title text not null,
  embedding extensions.vector(3) not null,
  updated_at timestamptz not null default now()
);
create index on public.documents using hnsw (embedding extensions.vector_cosine_ops);
create index on public.documents using gin (title extensions.gin_trgm_ops);
create trigger documents_updated_at before update on public.documents
  for each row execute procedure extensions.moddatetime(updated_at);
alter table public.documents enable row level security;
create policy "own documents" on public.documents for all to authenticated
  using (owner = (select auth.uid())) with check (owner = (select auth.uid()));
grant select, insert, update, delete on public.documents to authenticated;

create function public.match_documents(query_embedding extensions.vector(3), match_count int)
returns table (id bigint, title text, similarity float8)
language sql stable security invoker set search_path = ''
as $$
  select d.id, d.title, 1 - (d.embedding operator(extensions.<=>) query_embedding)
    from public.documents d
   order by d.embedding operator(extensions.<=>) query_embedding
   limit match_count;
$$;
`;

/** Every extension of Supabase's Postgres image that PGlite has a build of, and Vault and pg_net
 * (built here). */
const AVAILABLE = [
  "amcheck",
  "autoinc",
  "bloom",
  "btree_gin",
  "btree_gist",
  "citext",
  "cube",
  "dict_int",
  "dict_xsyn",
  "earthdistance",
  "file_fdw",
  "fuzzystrmatch",
  "hstore",
  "insert_username",
  "intarray",
  "isn",
  "lo",
  "ltree",
  "moddatetime",
  "pageinspect",
  "pg_buffercache",
  "pg_freespacemap",
  "pg_net",
  "pg_stat_statements",
  "pg_surgery",
  "pg_trgm",
  "pg_visibility",
  "pg_walinspect",
  "pgcrypto",
  "plpgsql",
  "refint",
  "seg",
  "supabase_vault",
  "tablefunc",
  "tcn",
  "tsm_system_rows",
  "tsm_system_time",
  "unaccent",
  "uuid-ossp",
  "vector",
];

/** A user of the project, signed up and signed in through supabase-js. */
async function signedIn(): Promise<SupabaseClient> {
  const client = createClient(backend.url, PUBLISHABLE_KEY, {
    auth: { persistSession: false, autoRefreshToken: false },
    global: { fetch: (input, init) => backend.fetch(new Request(input, init)) },
  });
  const email = `reader-${crypto.randomUUID()}@example.com`;
  const { data, error } = await client.auth.signUp({ email, password: "correct-horse-battery" });
  expect(error).toBeNull();
  expect(data.session).not.toBeNull();
  return client;
}

beforeAll(async () => {
  let cacheDir: string;
  ({ project, cacheDir } = await temporaryProject("extensions-project", {
    "migrations/20240101000000_people.sql":
      "create table public.people (id uuid primary key default uuid_generate_v4(), hash text);",
    "migrations/20240102000000_documents.sql": DOCUMENTS_MIGRATION,
    "seed.sql": "insert into public.people (hash) values (crypt('secret', gen_salt('bf', 4)));",
  }));
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
      expect.stringMatching(/vector\.so$/),
      expect.stringMatching(/moddatetime\.so$/),
      expect.stringMatching(/vector\.control$/),
    ]),
  );
  // each file once, though four extensions share spi's bundle
  expect(new Set(first.map((f) => f.path)).size).toBe(first.length);
  const cached = await readdir(join(projectCacheDir(process.cwd()), "extensions"));
  // a tar per bundle, named by its hash
  expect(cached.filter((name) => /^[0-9a-f]{32}\.tar$/.test(name)).length).toBeGreaterThanOrEqual(
    34,
  );
  expect(digest(await extensionFiles())).toEqual(digest(first));
});

test("every extension of Supabase's image that PGlite builds is available, and only those", async () => {
  const { rows } = await backend.db.query<{ name: string }>(
    "select name from pg_available_extensions order by name",
  );
  expect(rows.map((row) => row.name)).toEqual(AVAILABLE);
  await expect(backend.db.exec("create extension postgis")).rejects.toThrow(
    /extension "postgis" is not available/,
  );
});

test("each of them can be created, and its library loads", async () => {
  // in a transaction rolled back: the project's database keeps only what its migrations made
  await backend.db.transaction(async (tx) => {
    for (const name of AVAILABLE)
      await tx.exec(`create extension if not exists "${name}" with schema extensions cascade`);
    const { rows } = await tx.query<Record<string, unknown>>(
      `select extensions.levenshtein('kitten', 'sitting') as levenshtein,
              extensions.unaccent('Hôtel') as unaccent,
              'a.b.c'::extensions.ltree operator(extensions.@>) 'a.b.c.d'::extensions.ltree as ltree,
              'A'::extensions.citext = 'a'::extensions.citext as citext,
              extensions.hstore('k', 'v') operator(extensions.->) 'k' as hstore`,
    );
    expect(rows).toEqual([
      { levenshtein: 3, unaccent: "Hotel", ltree: true, citext: true, hstore: "v" },
    ]);
    await tx.rollback();
  });
});

test("a migration made with pgvector, moddatetime and pg_trgm: semantic search through the data API, under RLS", async () => {
  const ada = await signedIn();
  const inserted = await ada
    .from("documents")
    .insert([
      { title: "north", embedding: [1, 0, 0] },
      { title: "north-east", embedding: [1, 1, 0] },
      { title: "up", embedding: [0, 0, 1] },
    ])
    .select("title, embedding");
  expect(inserted.error).toBeNull();
  // the data API answers a vector as PostgREST does: its text
  expect(inserted.data).toEqual([
    { title: "north", embedding: "[1,0,0]" },
    { title: "north-east", embedding: "[1,1,0]" },
    { title: "up", embedding: "[0,0,1]" },
  ]);

  const matched = await ada.rpc("match_documents", {
    query_embedding: [0.9, 0.1, 0],
    match_count: 2,
  });
  expect(matched.error).toBeNull();
  expect(matched.data.map((row: { title: string }) => row.title)).toEqual(["north", "north-east"]);
  expect(matched.data[0].similarity).toBeCloseTo(0.9939, 3);

  // a filter on a vector column compares vectors, as PostgREST's does
  const exact = await ada.from("documents").select("title").eq("embedding", "[1,1,0]");
  expect(exact).toMatchObject({ error: null, data: [{ title: "north-east" }] });

  // the same query as a string, and another user's search finds none of Ada's documents
  const grace = await signedIn();
  const theirs = await grace.rpc("match_documents", {
    query_embedding: "[0.9,0.1,0]",
    match_count: 5,
  });
  expect(theirs).toMatchObject({ error: null, data: [] });

  // a vector of the wrong dimension is Postgres's 22000, a 400, not a 500
  const wrong = await ada.from("documents").insert({ title: "flat", embedding: [1, 0] });
  expect(wrong.status).toBe(400);
  expect(wrong.error).toMatchObject({ code: "22000", message: "expected 3 dimensions, not 2" });

  // moddatetime keeps updated_at; pg_trgm's operator filters through an RPC-free select
  const before = await ada.from("documents").select("id, updated_at").eq("title", "up").single();
  const updated = await ada
    .from("documents")
    .update({ title: "upward" })
    .eq("id", before.data?.id)
    .select("updated_at")
    .single();
  expect(updated.error).toBeNull();
  expect(Date.parse(updated.data?.updated_at)).toBeGreaterThan(Date.parse(before.data?.updated_at));
});

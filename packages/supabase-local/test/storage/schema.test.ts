// The `storage` schema exists before a project's migrations, as on the CLI (Storage's tenant
// migrations up to 0060): buckets and objects with upstream's columns and RLS on, the helpers
// policies use, and deletes in SQL refused (protect_delete).
import type { PGlite } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openDatabase } from "../../src/database/open.ts";
import { baseSnapshot, snapshotCacheDir } from "../../src/database/snapshot.ts";

let db: PGlite;
beforeAll(async () => {
  db = await openDatabase(undefined, {
    snapshot: await baseSnapshot(snapshotCacheDir(process.cwd())),
  });
}, 60_000);
afterAll(() => db?.close());

const columns = async (table: string) =>
  (
    await db.query<{ column_name: string }>(
      `select column_name from information_schema.columns
       where table_schema = 'storage' and table_name = $1 order by ordinal_position`,
      [table],
    )
  ).rows.map((r) => r.column_name);

describe("the storage schema", () => {
  test("buckets and objects have upstream's columns and RLS on", async () => {
    expect(await columns("buckets")).toEqual([
      "id",
      "name",
      "owner",
      "created_at",
      "updated_at",
      "public",
      "avif_autodetection",
      "file_size_limit",
      "allowed_mime_types",
      "owner_id",
      "type",
    ]);
    expect(await columns("objects")).toEqual([
      "id",
      "bucket_id",
      "name",
      "owner",
      "created_at",
      "updated_at",
      "last_accessed_at",
      "metadata",
      "path_tokens",
      "version",
      "owner_id",
      "user_metadata",
    ]);
    const { rows } = await db.query<{ relname: string; relrowsecurity: boolean }>(
      "select relname, relrowsecurity from pg_class where relnamespace = 'storage'::regnamespace and relkind = 'r' order by relname",
    );
    expect(rows).toEqual([
      { relname: "buckets", relrowsecurity: true },
      { relname: "buckets_vectors", relrowsecurity: true },
      { relname: "objects", relrowsecurity: true },
      { relname: "s3_multipart_uploads", relrowsecurity: true },
      { relname: "s3_multipart_uploads_parts", relrowsecurity: true },
      { relname: "vector_indexes", relrowsecurity: true },
    ]);
  });

  test("foldername(), filename() and extension() split a key as upstream's", async () => {
    const { rows } = await db.query(
      `select storage.foldername('a/b/c.tar.gz') as folders, storage.filename('a/b/c.tar.gz') as file,
              storage.extension('a/b/c.tar.gz') as ext, storage.foldername('top.txt') as none`,
    );
    expect(rows[0]).toEqual({ folders: ["a", "b"], file: "c.tar.gz", ext: "gz", none: [] });
  });

  test("a policy written for hosted Supabase is accepted, and a delete in SQL is refused", async () => {
    await db.exec(`
      insert into storage.buckets (id, name) values ('schema-test', 'schema-test');
      insert into storage.objects (bucket_id, name) values ('schema-test', 'a/one.txt');
      create policy "schema test" on storage.objects for select to authenticated
        using (bucket_id = 'schema-test' and (storage.foldername(name))[1] = auth.uid()::text);
    `);
    await expect(
      db.query("delete from storage.objects where bucket_id = 'schema-test'"),
    ).rejects.toThrow(
      "Direct deletion from storage tables is not allowed. Use the Storage API instead.",
    );
    await expect(db.query("delete from storage.buckets where id = 'schema-test'")).rejects.toThrow(
      "Direct deletion from storage tables is not allowed",
    );
    const grants = await db.query<{ grantee: string }>(
      `select distinct grantee from information_schema.role_table_grants
       where table_schema = 'storage' and table_name = 'objects' and privilege_type = 'DELETE'
       order by grantee`,
    );
    expect(grants.rows.map((r) => r.grantee)).toEqual(
      expect.arrayContaining(["anon", "authenticated", "postgres", "service_role"]),
    );
  });
});

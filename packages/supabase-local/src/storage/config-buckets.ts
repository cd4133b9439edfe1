// config.toml's [storage.buckets.<name>], as the CLI seeds them after a fresh start or a reset
// (internal/seed/buckets: UpsertBuckets, then UpsertObjects): each bucket is created, or its
// public, file_size_limit and allowed_mime_types updated when it exists; then every file under
// its objects_path is uploaded as `<bucket>/<path relative to objects_path>`, replacing what is
// there (x-upsert), with Cache-Control max-age=3600 and a type from the file's extension. As the
// service role: no policy applies.
import { createReadStream } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { basename, join, relative, sep } from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import type { StorageBucketConfig } from "../project/config.ts";
import * as buckets from "./buckets.ts";
import { asOwner, SERVICE_ROLE } from "./caller.ts";
import type { FileStore } from "./file-store.ts";
import * as objects from "./objects.ts";

export async function seedBuckets(
  db: PGlite,
  files: FileStore,
  config: { buckets: Record<string, StorageBucketConfig>; fileSizeLimit: number },
): Promise<void> {
  const names = Object.keys(config.buckets);
  if (names.length === 0) return;
  const limits = { globalFileSizeLimit: config.fileSizeLimit };
  const existing = await asOwner(db, async (tx) => {
    const { rows } = await tx.query<{ id: string; name: string }>(
      "select id, name from storage.buckets",
    );
    return new Map(rows.map((r) => [r.name, r.id]));
  });
  for (const [name, bucket] of Object.entries(config.buckets)) {
    const settings = {
      public: bucket.public,
      // the CLI sends 0 for "no limit"; the API reads 0 as none too
      fileSizeLimit: bucket.fileSizeLimit || null,
      allowedMimeTypes: bucket.allowedMimeTypes,
    };
    const id = existing.get(name);
    if (id) await buckets.updateBucket(db, SERVICE_ROLE, id, settings, limits);
    else await buckets.createBucket(db, SERVICE_ROLE, { name, ...settings }, limits);
  }
  for (const [name, bucket] of Object.entries(config.buckets)) {
    if (!bucket.objectsPath) continue;
    for (const path of await filesUnder(bucket.objectsPath)) {
      // loaded for the first file (mime-db's table is 30 ms of a start that has none to upload)
      const { lookup } = await import("mime-types");
      const rel = relative(bucket.objectsPath, path);
      const key = rel === "" ? basename(path) : rel.split(sep).join("/");
      const written = await files.write(createReadStream(path), Number.POSITIVE_INFINITY);
      await objects.completeUpload(
        db,
        files,
        { bucketId: id(name), name: key, upsert: true },
        written,
        {
          mimeType: lookup(path) || "application/octet-stream",
          cacheControl: "max-age=3600",
        },
      );
    }
  }
  function id(name: string): string {
    return existing.get(name) ?? name;
  }
}

/** Every regular file under `path` (or `path` itself when it is a file), in a stable order. */
async function filesUnder(path: string): Promise<string[]> {
  const info = await stat(path).catch(() => undefined);
  if (!info) return [];
  if (info.isFile()) return [path];
  const entries = await readdir(path, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

// Storage at /storage/v1 (decision 029): the routes (routes.ts) over the object and bucket logic
// (objects.ts, buckets.ts: as the caller, so RLS decides) and the file store on disk
// (file-store.ts), with image transformations (transforms.ts), resumable uploads (tus.ts) and the
// S3 endpoint (s3/).
// Mounted by http/app.ts behind the same rules as every API (the Host allow-list, CORS, the
// gateway); createLocalBackend seeds config.toml's buckets on a fresh database.
import type { PGlite } from "@electric-sql/pglite";
import type { Hono } from "hono";
import type { Config } from "../project/config.ts";
import { seedBuckets } from "./config-buckets.ts";
import { FileStore } from "./file-store.ts";
import { knownVersions } from "./objects.ts";
import { storageRoutes } from "./routes.ts";
import type { S3Keys } from "./s3/routes.ts";
import { preloadSharp } from "./transforms.ts";

export interface StorageOptions {
  db: PGlite;
  /** Where the bytes live: beside the database (Database.storageDir). */
  directory: string;
  /** This install's URL-signing key (project/keys.ts loadStorageUrlKey). */
  urlKey: Uint8Array;
  config: Config["storage"];
  /** What the S3 endpoint checks signatures and session tokens with (s3/routes.ts). */
  s3Keys: S3Keys;
}

export interface Storage {
  /** The routes of /storage/v1, for app.route(). */
  routes: Hono;
  /**
   * What a fresh start does (the CLI after `supabase start` or `db reset`): config.toml's buckets
   * created or updated, their objects_path uploaded.
   */
  seed(): Promise<void>;
  /** Bytes no row names any more (an upload or delete cut short by a crash) removed. */
  sweep(): Promise<void>;
  /** Its thread ended (the backend closes). */
  close(): Promise<void>;
}

let tusModule: Promise<typeof import("./tus.ts")> | undefined;

/**
 * tus.ts, loaded on the first resumable upload, or once the backend serves (preloadStorage), not
 * with the backend: @tus/server and its file store take 70 to 90 ms (120 ms of CPU) to load, on the
 * cores the database's start is using.
 */
function tus(): Promise<typeof import("./tus.ts")> {
  tusModule ??= import("./tus.ts");
  return tusModule;
}

/**
 * Loads what only some Storage requests need (resumable uploads, image transformations): http/app.ts
 * calls this once the backend serves. A request that comes first waits for the loading; a failure
 * to load is reported to it.
 */
export function preloadStorage(): void {
  tus().catch(() => {});
  preloadSharp();
}

export function createStorage(options: StorageOptions): Storage {
  const { db, config } = options;
  const files = new FileStore(options.directory);
  let resumable: ReturnType<typeof import("./tus.ts").createResumable> | undefined;
  return {
    routes: storageRoutes({
      db,
      files,
      urlKey: options.urlKey,
      fileSizeLimit: config.fileSizeLimit,
      imageTransformation: config.imageTransformation.enabled,
      vector: config.vector,
      s3: config.s3Protocol.enabled ? options.s3Keys : undefined,
      resumable: async (request, caller, signed) => {
        resumable ??= (await tus()).createResumable({
          db,
          files,
          fileSizeLimit: config.fileSizeLimit,
          urlKey: options.urlKey,
        });
        return resumable(request, caller, signed);
      },
    }),
    seed: () => seedBuckets(db, files, config),
    sweep: () => files.sweep(() => knownVersions(db)),
    close: () => files.close(),
  };
}

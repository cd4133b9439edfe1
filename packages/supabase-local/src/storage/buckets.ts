// Buckets, as upstream's Storage class and its database layer handle them: every read and write
// as the caller (RLS on storage.buckets decides: with no policy, only the secret key or
// service_role creates buckets), the checks upstream makes first (name, size limit, MIME types),
// and its answers (NoSuchBucket, BucketAlreadyExists, ResourceNotEmpty).
import type { PGlite, Transaction } from "@electric-sql/pglite";
import { asCaller, asOwner, type Caller, testPermission } from "./caller.ts";
import { ERRORS, StorageError } from "./errors.ts";
import type { FileStore } from "./file-store.ts";
import { mustBeValidBucketName, mustBeValidMimeTypes, parseFileSizeToBytes } from "./names.ts";

export interface BucketRow {
  id: string;
  name: string;
  owner: string | null;
  public: boolean;
  type?: string;
  file_size_limit: number | null;
  allowed_mime_types: string[] | null;
  created_at: Date;
  updated_at: Date;
}

/** Upstream's STORAGE_EMPTY_BUCKET_MAX: a bucket with more objects is not emptied by the API. */
const EMPTY_BUCKET_MAX = 200_000;

const COLUMNS =
  "id, name, owner, public, created_at, updated_at, file_size_limit::float8 as file_size_limit, allowed_mime_types";

/** A bucket as upstream's response schema prints it (an owner that is null prints as ""). */
export function bucketJson(row: BucketRow): Record<string, unknown> {
  return { ...row, owner: row.owner ?? "" };
}

export interface BucketInput {
  id?: string;
  name: string;
  public?: boolean;
  fileSizeLimit?: number | string | null;
  allowedMimeTypes?: string[] | null;
}

export interface BucketLimits {
  /** [storage] file_size_limit: no bucket may allow more. */
  globalFileSizeLimit: number;
}

/** Upstream's ICEBERG_BUCKET_DETECTION_SUFFIX default: a name no bucket may be created with. */
const RESERVED_BUCKET_SUFFIX = "--table-s3";

export async function createBucket(
  db: PGlite,
  caller: Caller,
  input: BucketInput,
  limits: BucketLimits,
): Promise<void> {
  if (input.name.trim() !== input.name) throw ERRORS.invalidBucketName();
  mustBeValidBucketName(input.name);
  // upstream's reserved suffix: its analytics (Iceberg) buckets'
  if (input.name.endsWith(RESERVED_BUCKET_SUFFIX)) throw ERRORS.invalidBucketName();
  const fileSizeLimit = sizeLimit(input.fileSizeLimit, limits);
  const allowed = allowedMimeTypes(input.allowedMimeTypes);
  try {
    await asCaller(db, caller, (tx) =>
      tx.query(
        `insert into storage.buckets (id, name, owner, owner_id, public, file_size_limit, allowed_mime_types, type)
         values ($1, $2, $3, $4, $5, $6, $7, 'STANDARD')`,
        [
          input.id || input.name,
          input.name,
          isUuid(caller.owner) ? caller.owner : null,
          caller.owner ?? null,
          input.public ?? false,
          fileSizeLimit ?? null,
          allowed ?? null,
        ],
      ),
    );
  } catch (error) {
    if (error instanceof StorageError && error.code === "ResourceAlreadyExists")
      throw ERRORS.bucketAlreadyExists();
    throw error;
  }
}

export async function getBucket(db: PGlite, caller: Caller, id: string): Promise<BucketRow> {
  const rows = await asCaller(db, caller, (tx) => findBucket(tx, id));
  if (!rows) throw ERRORS.noSuchBucket();
  return rows;
}

export interface ListOptions {
  limit?: number;
  offset?: number;
  sortColumn?: string;
  sortOrder?: string;
  search?: string;
}

export async function listBuckets(
  db: PGlite,
  caller: Caller,
  options: ListOptions,
): Promise<BucketRow[]> {
  const column = ["id", "name", "created_at", "updated_at"].includes(options.sortColumn ?? "")
    ? options.sortColumn
    : undefined;
  const order = options.sortOrder === "desc" ? "desc" : "asc";
  const params: unknown[] = [];
  let sql = `select id, name, public, owner, created_at, updated_at,
      file_size_limit::float8 as file_size_limit, allowed_mime_types, 'STANDARD' as type
    from storage.buckets`;
  if (options.search) {
    params.push(`%${options.search.replace(/[\\%_]/g, "\\$&")}%`);
    sql += ` where name ilike $${params.length}`;
  }
  if (column) sql += ` order by ${column} ${order}`;
  if (options.limit !== undefined) {
    params.push(options.limit);
    sql += ` limit $${params.length}`;
  }
  if (options.offset !== undefined) {
    params.push(options.offset);
    sql += ` offset $${params.length}`;
  }
  return asCaller(db, caller, async (tx) => {
    const { rows } = await tx.query<BucketRow>(sql, params);
    return rows;
  });
}

export interface BucketUpdate {
  public?: boolean;
  fileSizeLimit?: number | string | null;
  allowedMimeTypes?: string[] | null;
}

export async function updateBucket(
  db: PGlite,
  caller: Caller,
  id: string,
  update: BucketUpdate,
  limits: BucketLimits,
): Promise<void> {
  mustBeValidBucketName(id);
  if (Object.values(update).every((v) => v === undefined)) throw ERRORS.noContentProvided();
  const sets: string[] = [];
  const params: unknown[] = [id];
  const set = (column: string, value: unknown) => {
    params.push(value);
    sets.push(`${column} = $${params.length}`);
  };
  if (update.public !== undefined) set("public", update.public);
  if (update.fileSizeLimit !== undefined)
    set("file_size_limit", sizeLimit(update.fileSizeLimit, limits) ?? null);
  if (update.allowedMimeTypes !== undefined)
    set("allowed_mime_types", allowedMimeTypes(update.allowedMimeTypes) ?? null);
  const { affectedRows } = await asCaller(db, caller, (tx) =>
    tx.query(`update storage.buckets set ${sets.join(", ")} where id = $1`, params),
  );
  if (!affectedRows) throw ERRORS.noSuchBucket();
}

/** Deletes an empty bucket: it must exist and hold no object (seen as the owner), then the
 * delete itself is the caller's. */
export async function deleteBucket(db: PGlite, caller: Caller, id: string): Promise<void> {
  const exists = await asOwner(db, async (tx) => {
    const bucket = await findBucket(tx, id);
    if (!bucket) return false;
    const { rows } = await tx.query("select 1 from storage.objects where bucket_id = $1 limit 1", [
      id,
    ]);
    if (rows.length > 0) throw ERRORS.bucketNotEmpty();
    return true;
  });
  if (!exists) throw ERRORS.noSuchBucket();
  const { affectedRows } = await asCaller(db, caller, (tx) =>
    tx.query("delete from storage.buckets where id = $1", [id]),
  );
  if (!affectedRows) throw ERRORS.noSuchBucket();
}

/**
 * Empties a bucket as upstream does: the caller must see the bucket and be allowed to delete its
 * first object (tested, rolled back); then every object is removed (upstream queues that job; here
 * it is done before answering), rows first, then their bytes.
 */
export async function emptyBucket(
  db: PGlite,
  caller: Caller,
  id: string,
  files: FileStore,
): Promise<void> {
  await getBucket(db, caller, id);
  const { rows } = await asCaller(db, caller, (tx) =>
    tx.query<{ name: string }>(
      `select name from storage.objects where bucket_id = $1 order by name limit ${EMPTY_BUCKET_MAX + 1}`,
      [id],
    ),
  );
  if (rows.length > EMPTY_BUCKET_MAX) throw ERRORS.unableToEmptyBucket();
  const first = rows[0];
  if (!first) return;
  await testPermission(db, caller, async (tx) => {
    const { affectedRows } = await tx.query(
      "delete from storage.objects where bucket_id = $1 and name = $2",
      [id, first.name],
    );
    if (!affectedRows) throw ERRORS.noSuchKey();
  });
  const removed = await asOwner(db, async (tx) => {
    const deleted = await tx.query<{ version: string | null }>(
      "delete from storage.objects where bucket_id = $1 returning version",
      [id],
    );
    return deleted.rows.map((r) => r.version);
  });
  await files.remove(removed);
}

/** A bucket by id, as the transaction's role sees it. */
export async function findBucket(tx: Transaction, id: string): Promise<BucketRow | undefined> {
  const { rows } = await tx.query<BucketRow>(
    `select ${COLUMNS} from storage.buckets where id = $1`,
    [id],
  );
  return rows[0];
}

function sizeLimit(value: number | string | null | undefined, limits: BucketLimits) {
  if (value === null || value === undefined) return value;
  const bytes = typeof value === "string" ? parseFileSizeToBytes(value) : value;
  if (bytes > limits.globalFileSizeLimit) throw ERRORS.entityTooLarge();
  return bytes;
}

function allowedMimeTypes(value: string[] | null | undefined) {
  if (!value) return value;
  const types = value.filter((t) => t);
  mustBeValidMimeTypes(types);
  return types;
}

export function isUuid(value: string | undefined): value is string {
  return (
    value !== undefined &&
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-5][0-9a-f]{3}-[089ab][0-9a-f]{3}-[0-9a-f]{12}$/i.test(value)
  );
}

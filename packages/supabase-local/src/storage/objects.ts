// Objects, as upstream's ObjectStorage and Uploader handle them: each operation asks the database
// as the caller, so the project's policies on storage.objects decide exactly what Postgres decides
// for that statement (an upload's insert; an upsert's insert ... on conflict do update, which
// needs select, insert and update; a remove's delete ... returning, which needs select and
// delete), and what upstream does as its superuser (finishing an upload that was allowed, reading
// an object of a public bucket or behind a signed URL) runs as the database owner. Bytes go to the
// file store outside any transaction: the database is never held while a file streams.
import type { PGlite, Transaction } from "@electric-sql/pglite";
import { type BucketRow, findBucket, isUuid } from "./buckets.ts";
import { asCaller, asOwner, type Caller, testPermission } from "./caller.ts";
import { ERRORS, StorageError } from "./errors.ts";
import type { FileStore, Written } from "./file-store.ts";
import { mustBeValidBucketName, mustBeValidKey } from "./names.ts";

export interface ObjectRow {
  id: string;
  bucket_id: string;
  name: string;
  owner: string | null;
  owner_id: string | null;
  version: string | null;
  metadata: ObjectMetadata | null;
  user_metadata: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
  last_accessed_at: Date;
}

/** What storage.objects.metadata holds, as upstream writes it. */
export interface ObjectMetadata {
  eTag: string;
  size: number;
  mimetype: string;
  cacheControl: string;
  lastModified: string;
  contentLength: number;
  httpStatusCode: number;
  /** The upload's X-Robots-Tag (x-robots-tag.ts), when it had one. */
  xRobotsTag?: string;
}

const OBJECT_COLUMNS =
  "id, bucket_id, name, owner, owner_id, version, metadata, user_metadata, created_at, updated_at, last_accessed_at";

/** An object as upstream's response schema prints it (null strings print as ""). */
export function objectJson(row: ObjectRow): Record<string, unknown> {
  return {
    name: row.name,
    bucket_id: row.bucket_id,
    owner: row.owner ?? "",
    owner_id: row.owner_id ?? "",
    version: row.version ?? "",
    id: row.id,
    updated_at: row.updated_at,
    created_at: row.created_at,
    last_accessed_at: row.last_accessed_at,
    metadata: row.metadata,
    user_metadata: row.user_metadata,
  };
}

export async function findObject(
  tx: Transaction,
  bucketId: string,
  name: string,
): Promise<ObjectRow | undefined> {
  const { rows } = await tx.query<ObjectRow>(
    `select ${OBJECT_COLUMNS} from storage.objects where bucket_id = $1 and name = $2`,
    [bucketId, name],
  );
  return rows[0];
}

/** A bucket as the database owner sees it (its limits, whether it is public). */
export async function bucketForObjects(db: PGlite, bucketId: string): Promise<BucketRow> {
  mustBeValidBucketName(bucketId);
  const bucket = await asOwner(db, (tx) => findBucket(tx, bucketId));
  if (!bucket) throw ERRORS.noSuchBucket();
  return bucket;
}

/**
 * The object a download, HEAD or info asks for, as upstream's getObject finds it: a caller
 * without a valid token reaches public buckets only; a public bucket's objects are read as the
 * owner, a private one's as the caller (RLS: none visible is NoSuchKey).
 */
export async function objectForRead(
  db: PGlite,
  caller: Caller,
  bucketId: string,
  name: string,
  options: { publicOnly?: boolean } = {},
): Promise<ObjectRow> {
  const bucket = await asOwner(db, (tx) => findBucket(tx, bucketId));
  if (!bucket || ((!caller.authenticated || options.publicOnly) && !bucket.public))
    throw ERRORS.noSuchBucket();
  mustBeValidKey(name);
  const row = bucket.public
    ? await asOwner(db, (tx) => findObject(tx, bucketId, name))
    : await asCaller(db, caller, (tx) => findObject(tx, bucketId, name));
  if (!row) throw ERRORS.noSuchKey();
  return row;
}

/**
 * An object read as the caller whatever its bucket (upstream's authenticated render finds it so):
 * RLS decides even in a public bucket, and what the caller cannot see, or a bucket that does not
 * exist, is NoSuchKey.
 */
export async function objectAsCaller(
  db: PGlite,
  caller: Caller,
  bucketId: string,
  name: string,
): Promise<ObjectRow> {
  mustBeValidKey(name);
  const row = await asCaller(db, caller, (tx) => findObject(tx, bucketId, name));
  if (!row) throw ERRORS.noSuchKey();
  return row;
}

/** The object behind a signed URL (its token already verified): read as the owner. */
export async function objectByOwner(db: PGlite, bucketId: string, name: string) {
  const row = await asOwner(db, (tx) => findObject(tx, bucketId, name));
  if (!row) throw ERRORS.noSuchKey();
  return row;
}

export interface UploadTarget {
  bucketId: string;
  name: string;
  /** The JWT's sub the object is owned by. */
  owner?: string;
  upsert: boolean;
  userMetadata?: Record<string, unknown>;
}

/**
 * An upsert's owner columns, as upstream's upsertObject and updateObject write them: a column the
 * writer has no value for (the service role has no `sub`; a `sub` not a UUID has no `owner`) is
 * left as it was, so a service-role overwrite keeps the object its owner's.
 */
const KEEP_OWNER =
  "owner = coalesce(excluded.owner, storage.objects.owner), owner_id = coalesce(excluded.owner_id, storage.objects.owner_id)";

/**
 * Whether the caller may write this object (upstream's canUpload): the insert, or for an upsert
 * the insert ... on conflict do update, made as the caller and rolled back. An existing object
 * without upsert is KeyAlreadyExists.
 */
export async function canUpload(
  db: PGlite,
  caller: Caller,
  target: UploadTarget,
  metadata: Partial<ObjectMetadata>,
): Promise<void> {
  mustBeValidKey(target.name);
  // sent back as Content-Type and Cache-Control on every download: a value no header may carry
  // (a line break, a NUL, a character past Latin-1; a form field or TUS metadata can hold one)
  // would fail each of them
  if (metadata.mimetype !== undefined && !isHeaderValue(metadata.mimetype))
    throw ERRORS.invalidMimeType(metadata.mimetype);
  if (metadata.cacheControl !== undefined && !isHeaderValue(metadata.cacheControl))
    throw ERRORS.invalidParameter("cacheControl");
  try {
    await testPermission(db, caller, (tx) =>
      tx.query(
        `insert into storage.objects (bucket_id, name, owner, owner_id, metadata, user_metadata, version)
         values ($1, $2, $3, $4, $5, $6, '1')
         ${target.upsert ? `on conflict (name, bucket_id) do update set metadata = excluded.metadata, user_metadata = excluded.user_metadata, version = excluded.version, ${KEEP_OWNER}` : ""}`,
        [
          target.bucketId,
          target.name,
          isUuid(target.owner) ? target.owner : null,
          target.owner ?? null,
          metadata,
          target.userMetadata ?? null,
        ],
      ),
    );
  } catch (error) {
    if (error instanceof StorageError && error.code === "ResourceAlreadyExists")
      throw ERRORS.keyAlreadyExists();
    throw error;
  }
}

function isHeaderValue(value: string): boolean {
  return /^[\t\x20-\x7e\x80-\xff]*$/.test(value);
}

/**
 * Records an uploaded version (upstream's completeUpload, as its superuser: the caller was
 * allowed before the bytes came): the row is inserted or updated under a lock on the key, and the
 * version it replaced loses its bytes once the row no longer names them.
 */
export async function completeUpload(
  db: PGlite,
  files: FileStore,
  target: UploadTarget,
  written: Written,
  file: { mimeType: string; cacheControl: string; xRobotsTag?: string },
): Promise<ObjectRow> {
  const metadata: ObjectMetadata = {
    eTag: written.eTag,
    size: written.size,
    mimetype: file.mimeType,
    cacheControl: file.cacheControl,
    lastModified: written.lastModified.toISOString(),
    contentLength: written.size,
    httpStatusCode: 200,
    ...(file.xRobotsTag ? { xRobotsTag: file.xRobotsTag } : {}),
  };
  let replaced: string | null = null;
  try {
    const row = await asOwner(db, async (tx) => {
      await tx.query("select pg_advisory_xact_lock(hashtext($1))", [
        `${target.bucketId}/${target.name}`,
      ]);
      const current = await findObject(tx, target.bucketId, target.name);
      replaced = current?.version ?? null;
      const { rows } = await tx.query<ObjectRow>(
        `insert into storage.objects (bucket_id, name, owner, owner_id, metadata, user_metadata, version)
         values ($1, $2, $3, $4, $5, $6, $7)
         on conflict (name, bucket_id) do update set metadata = excluded.metadata,
           user_metadata = excluded.user_metadata, version = excluded.version, ${KEEP_OWNER}
         returning ${OBJECT_COLUMNS}`,
        [
          target.bucketId,
          target.name,
          isUuid(target.owner) ? target.owner : null,
          target.owner ?? null,
          metadata,
          target.userMetadata ?? {},
          written.version,
        ],
      );
      return rows[0] as ObjectRow;
    });
    await files.remove([replaced]);
    return row;
  } catch (error) {
    await files.remove([written.version]);
    throw error;
  }
}

/**
 * Removes objects by name (storage-js remove()): deleted as the caller, so only those its
 * policies let it see and delete go; their bytes are removed after the rows. Returns the rows.
 */
export async function removeObjects(
  db: PGlite,
  caller: Caller,
  files: FileStore,
  bucketId: string,
  names: string[],
): Promise<ObjectRow[]> {
  mustBeValidBucketName(bucketId);
  const rows = await asCaller(db, caller, async (tx) => {
    const { rows } = await tx.query<ObjectRow>(
      `delete from storage.objects where bucket_id = $1 and name = any($2::text[])
       returning ${OBJECT_COLUMNS}`,
      [bucketId, names],
    );
    return rows;
  });
  await files.remove(rows.map((r) => r.version));
  return rows;
}

/** Removes one object (DELETE /object/:bucket/*): it must exist; the delete is the caller's. */
export async function removeObject(
  db: PGlite,
  caller: Caller,
  files: FileStore,
  bucketId: string,
  name: string,
): Promise<void> {
  mustBeValidKey(name);
  const existing = await asOwner(db, (tx) => findObject(tx, bucketId, name));
  if (!existing) throw ERRORS.noSuchKey();
  const rows = await asCaller(db, caller, async (tx) => {
    const result = await tx.query<{ version: string | null }>(
      "delete from storage.objects where bucket_id = $1 and name = $2 returning version",
      [bucketId, name],
    );
    return result.rows;
  });
  if (rows.length === 0) throw ERRORS.accessDenied();
  await files.remove(rows.map((r) => r.version));
}

export interface MoveRequest {
  bucketId: string;
  sourceKey: string;
  destinationBucket: string;
  destinationKey: string;
}

/**
 * Moves an object (upstream's moveObject): the caller must see the source and be allowed to
 * update it into its new name (tested as the caller: RLS on the old and the new row, and the
 * destination's uniqueness), then the row moves with its bytes unchanged.
 */
export async function moveObject(
  db: PGlite,
  caller: Caller,
  move: MoveRequest,
): Promise<ObjectRow> {
  mustBeValidKey(move.destinationKey);
  const update = (tx: Transaction) =>
    tx.query<ObjectRow>(
      `update storage.objects set name = $3, bucket_id = $4,
         owner = coalesce($5, owner), owner_id = coalesce($6, owner_id),
         last_accessed_at = now()
       where bucket_id = $1 and name = $2 returning ${OBJECT_COLUMNS}`,
      [
        move.bucketId,
        move.sourceKey,
        move.destinationKey,
        move.destinationBucket,
        isUuid(caller.owner) ? caller.owner : null,
        caller.owner ?? null,
      ],
    );
  await testPermission(db, caller, async (tx) => {
    if (!(await findObject(tx, move.bucketId, move.sourceKey))) throw ERRORS.noSuchKey();
    if ((await update(tx)).rows.length === 0) throw ERRORS.noSuchKey();
  });
  return asOwner(db, async (tx) => {
    const { rows } = await update(tx);
    if (!rows[0]) throw ERRORS.noSuchKey();
    return rows[0];
  });
}

export interface CopyRequest extends MoveRequest {
  upsert: boolean;
  copyMetadata: boolean;
  metadata?: { cacheControl?: string; mimetype?: string };
  userMetadata?: Record<string, unknown>;
}

/**
 * Copies an object (upstream's copyObject): the caller must see the source (RLS) and be allowed
 * to write the destination (as an upload), then the bytes are copied to a new version.
 */
export async function copyObject(
  db: PGlite,
  caller: Caller,
  files: FileStore,
  copy: CopyRequest,
): Promise<ObjectRow> {
  mustBeValidKey(copy.destinationKey);
  const source = await asCaller(db, caller, (tx) => findObject(tx, copy.bucketId, copy.sourceKey));
  if (!source?.version) throw ERRORS.noSuchKey();
  // Without copyMetadata, the request's cacheControl and mimetype replace the source's; a field it
  // leaves out keeps the source's value (upstream's preserveUnspecifiedFileMetadata, on for this
  // route since v1.67.6), rather than being dropped.
  const metadata: ObjectMetadata = { ...(source.metadata ?? ({} as ObjectMetadata)) };
  if (!copy.copyMetadata) {
    if (copy.metadata?.cacheControl !== undefined)
      metadata.cacheControl = copy.metadata.cacheControl;
    if (copy.metadata?.mimetype !== undefined) metadata.mimetype = copy.metadata.mimetype;
  }
  const userMetadata = copy.copyMetadata ? (source.user_metadata ?? undefined) : copy.userMetadata;
  const target: UploadTarget = {
    bucketId: copy.destinationBucket,
    name: copy.destinationKey,
    owner: caller.owner,
    upsert: copy.upsert,
    userMetadata,
  };
  await canUpload(db, caller, target, metadata);
  const version = await files.copy(source.version);
  return completeUpload(
    db,
    files,
    target,
    {
      version,
      size: metadata.size,
      eTag: metadata.eTag,
      lastModified: new Date(),
    },
    // upstream's copy keeps the source's metadata, its X-Robots-Tag with it
    {
      mimeType: metadata.mimetype,
      cacheControl: metadata.cacheControl,
      xRobotsTag: metadata.xRobotsTag,
    },
  );
}

export interface SearchOptions {
  prefix: string;
  limit?: number;
  offset?: number;
  search?: string;
  sortBy?: { column?: string; order?: string };
}

/** list() (POST /object/list/:bucket): storage.search() as the caller. */
export async function searchObjects(
  db: PGlite,
  caller: Caller,
  bucketId: string,
  options: SearchOptions,
): Promise<unknown[]> {
  mustBeValidBucketName(bucketId);
  let prefix = options.prefix;
  if (prefix.length > 0 && !prefix.endsWith("/")) prefix = `${prefix}/`;
  const search = options.search ?? "";
  return asCaller(db, caller, async (tx) => {
    const { rows } = await tx.query(
      "select * from storage.search($1, $2, $3, $4, $5, $6, $7, $8)",
      [
        prefix,
        bucketId,
        options.limit ?? 100,
        // the level listed is where prefix || search ends (upstream since v1.70.5);
        // storage.search works it out itself and keeps this argument for its signature
        (prefix + search).split("/").length,
        options.offset ?? 0,
        search,
        options.sortBy?.column ?? "name",
        options.sortBy?.order ?? "asc",
      ],
    );
    return rows;
  });
}

/** Which of `names` the caller can see (a batch of signed URLs signs only those). */
export async function visibleNames(
  db: PGlite,
  caller: Caller,
  bucketId: string,
  names: string[],
): Promise<Set<string>> {
  const rows = await asCaller(db, caller, async (tx) => {
    const result = await tx.query<{ name: string }>(
      "select name from storage.objects where bucket_id = $1 and name = any($2::text[])",
      [bucketId, names],
    );
    return result.rows;
  });
  return new Set(rows.map((r) => r.name));
}

/** Whether the caller can see one object (a signed URL is made only for what it can read). */
export async function mustSee(
  db: PGlite,
  caller: Caller,
  bucketId: string,
  name: string,
): Promise<void> {
  mustBeValidKey(name);
  const row = await asCaller(db, caller, (tx) => findObject(tx, bucketId, name));
  if (!row) throw ERRORS.noSuchKey();
}

/** Which of `names` are objects of the bucket, whoever may see them (read as the owner). */
export async function existingNames(
  db: PGlite,
  bucketId: string,
  names: string[],
): Promise<string[]> {
  return asOwner(db, async (tx) => {
    const { rows } = await tx.query<{ name: string }>(
      "select name from storage.objects where bucket_id = $1 and name = any($2::text[])",
      [bucketId, names],
    );
    return rows.map((r) => r.name);
  });
}

/** Every version a row names, an object's or an S3 upload's part (the file store keeps only
 * those: FileStore.sweep). */
export async function knownVersions(db: PGlite): Promise<Set<string>> {
  const { rows } = await db.query<{ version: string }>(
    `select version from storage.objects where version is not null
     union all select version from storage.s3_multipart_uploads_parts`,
  );
  return new Set(rows.map((r) => r.version));
}

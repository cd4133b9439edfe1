// Vector buckets (/storage/v1/vector, storage-js's `storage.vectors`), as the Storage the CLI runs
// serves them on pgvector (upstream's VectorStoreManager and PgVectorStore, v1.70.6): buckets and
// their indexes are rows of storage.buckets_vectors and storage.vector_indexes; each index is a
// table of its own in schema storage_vectors (key, a halfvec embedding, jsonb metadata) with an
// HNSW index for its distance metric. Upstream keeps those tables in a database of their own; here
// they are in the project's one database, in a schema the data API does not expose, and pgvector
// is created in `extensions` the first time an index needs it (or used where a migration put it).
// Everything runs as the database owner: only the service role reaches these routes.
import { createHash } from "node:crypto";
import type { PGlite, Transaction } from "@electric-sql/pglite";
import { asOwner } from "./caller.ts";
import { ERRORS, StorageError } from "./errors.ts";
import { filterKeys, translateFilter } from "./vector-filter.ts";

/** [storage.vector]'s limits. */
export interface VectorLimits {
  maxBuckets: number;
  maxIndexes: number;
}

/** Upstream's limits (protocols/vector/limits.ts, the pgvector adapter, the store manager). */
export const MAX_DIMENSIONS = 4_000;
export const MAX_QUERY_TOP_K = 100;
export const MAX_LIST_RESULTS = 1_000;
export const MAX_SEGMENT_COUNT = 16;
export const MAX_PUT_VECTORS = 500;
export const MAX_GET_VECTOR_KEYS = 100;
export const MAX_DELETE_VECTOR_KEYS = 500;
export const MAX_VECTOR_KEY_LENGTH = 1_024;
const MAX_FILTERABLE_METADATA_BYTES = 2_048;
const MAX_TOTAL_METADATA_BYTES = 40 * 1_024;
const MAX_METADATA_KEYS = 50;
const DEFAULT_HNSW_EF_SEARCH = 40;

type Metadata = Record<string, unknown>;

export interface VectorIndexInput {
  vectorBucketName: string;
  indexName: string;
  dataType: string;
  dimension: number;
  distanceMetric: string;
  metadataConfiguration?: { nonFilterableMetadataKeys: string[] };
}

export interface PutVector {
  key: string;
  data: { float32: number[] };
  metadata?: Metadata;
}

interface IndexRow {
  name: string;
  bucket_id: string;
  data_type: string;
  dimension: number;
  distance_metric: string;
  metadata_configuration: { nonFilterableMetadataKeys?: unknown } | null;
  created_at: Date;
  /** The schema pgvector is in, quoted (read with the index: its table's types are there). */
  vector_schema: string;
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

// ---- buckets

export async function createBucket(db: PGlite, name: string, limits: VectorLimits): Promise<void> {
  await asOwner(db, async (tx) => {
    await lock(tx, "global", "__vector_bucket_count__");
    const count = await scalar(tx, "select count(*)::int as n from storage.buckets_vectors");
    if (count >= limits.maxBuckets) {
      if (await bucketExists(tx, name)) throw ERRORS.vectorConflict("vector bucket", name);
      throw ERRORS.vectorMaxBuckets(limits.maxBuckets);
    }
    await tx
      .query("insert into storage.buckets_vectors (id) values ($1)", [name])
      .catch(conflictAs("vector bucket", name));
  });
}

/** Deletes an empty bucket; a bucket that does not exist is not an error (upstream's). */
export async function deleteBucket(db: PGlite, name: string): Promise<void> {
  await asOwner(db, async (tx) => {
    await lock(tx, "bucket", name);
    await lock(tx, "global", "__vector_bucket_count__");
    const indexes = await scalar(
      tx,
      "select count(*)::int as n from storage.vector_indexes where bucket_id = $1",
      [name],
    );
    if (indexes > 0) throw ERRORS.vectorBucketNotEmpty(name);
    await tx.query("delete from storage.buckets_vectors where id = $1", [name]);
  });
}

export async function getBucket(db: PGlite, name: string) {
  const { rows } = await db.query<{ id: string; created_at: Date }>(
    "select id, created_at from storage.buckets_vectors where id = $1",
    [name],
  );
  const bucket = rows[0];
  if (!bucket) throw ERRORS.vectorNotFound(name);
  return {
    vectorBucket: { vectorBucketName: bucket.id, creationTime: seconds(bucket.created_at) },
  };
}

export async function listBuckets(
  db: PGlite,
  options: { maxResults: number; nextToken?: string; prefix?: string },
) {
  const max = Math.min(options.maxResults, 500);
  const { rows } = await db.query<{ id: string; created_at: Date }>(
    `select id, created_at from storage.buckets_vectors
      where ($1::text is null or id like $1) and ($2::text is null or id > $2)
      order by id limit $3`,
    [likePrefix(options.prefix), options.nextToken || null, max + 1],
  );
  const page = rows.slice(0, max);
  return {
    vectorBuckets: page.map((b) => ({
      vectorBucketName: b.id,
      creationTime: seconds(b.created_at),
    })),
    nextToken: rows.length > max ? page[page.length - 1]?.id : undefined,
  };
}

// ---- indexes

export async function createIndex(db: PGlite, input: VectorIndexInput, limits: VectorLimits) {
  const { vectorBucketName: bucket, indexName: name, dimension } = input;
  if (!Number.isInteger(dimension) || dimension < 1 || dimension > MAX_DIMENSIONS)
    throw ERRORS.invalidParameter(
      "dimension",
      `dimension must be an integer in [1, ${MAX_DIMENSIONS}] for this vector backend, got: ${dimension}`,
    );
  const opClass = input.distanceMetric === "euclidean" ? "halfvec_l2_ops" : "halfvec_cosine_ops";
  await asOwner(db, async (tx) => {
    await lock(tx, "bucket", bucket);
    if (!(await bucketExists(tx, bucket))) throw ERRORS.vectorNotFound(bucket);
    const count = await scalar(
      tx,
      "select count(*)::int as n from storage.vector_indexes where bucket_id = $1",
      [bucket],
    );
    if (count >= limits.maxIndexes) {
      if (await findIndex(tx, bucket, name)) throw ERRORS.vectorConflict("vector index", name);
      throw ERRORS.vectorMaxIndexes(limits.maxIndexes);
    }
    await tx
      .query(
        `insert into storage.vector_indexes
           (bucket_id, data_type, name, dimension, distance_metric, metadata_configuration)
         values ($1, $2, $3, $4, $5, $6)`,
        [
          bucket,
          input.dataType,
          name,
          dimension,
          input.distanceMetric,
          input.metadataConfiguration ?? null,
        ],
      )
      .catch(conflictAs("vector index", name));
    const vector = await pgvector(tx);
    const table = tableName(bucket, name);
    // a type modifier takes no parameter: the dimension is an integer checked above
    await tx.exec(`
      create table storage_vectors.${table} (
        key text primary key,
        embedding ${vector}.halfvec(${dimension}) not null,
        metadata jsonb not null default '{}'::jsonb
      );
      create index ${table}_hnsw on storage_vectors.${table}
        using hnsw (embedding ${vector}.${opClass});
    `);
  });
}

export async function deleteIndex(db: PGlite, bucket: string, name: string): Promise<void> {
  await asOwner(db, async (tx) => {
    await lock(tx, "bucket", bucket);
    if (!(await findIndex(tx, bucket, name))) throw ERRORS.vectorNotFound(name);
    await tx.query("delete from storage.vector_indexes where bucket_id = $1 and name = $2", [
      bucket,
      name,
    ]);
    await tx.exec(`drop table if exists storage_vectors.${tableName(bucket, name)}`);
  });
}

export async function getIndex(db: PGlite, bucket: string, name: string) {
  const index = await mustFindIndex(db, bucket, name);
  return {
    index: {
      indexName: index.name,
      dataType: index.data_type,
      dimension: index.dimension,
      distanceMetric: index.distance_metric,
      metadataConfiguration: index.metadata_configuration,
      vectorBucketName: index.bucket_id,
      creationTime: seconds(index.created_at),
    },
  };
}

export async function listIndexes(
  db: PGlite,
  bucket: string,
  options: { maxResults: number; nextToken?: string; prefix?: string },
) {
  const max = Math.min(options.maxResults, 500);
  const { rows } = await db.query<{ name: string; bucket_id: string; created_at: Date }>(
    `select name, bucket_id, created_at from storage.vector_indexes
      where bucket_id = $1 and ($2::text is null or name like $2) and ($3::text is null or name > $3)
      order by name limit $4`,
    [bucket, likePrefix(options.prefix), options.nextToken || null, max + 1],
  );
  const page = rows.slice(0, max);
  return {
    indexes: page.map((i) => ({
      indexName: i.name,
      vectorBucketName: i.bucket_id,
      creationTime: seconds(i.created_at),
    })),
    nextToken: rows.length > max ? page[page.length - 1]?.name : undefined,
  };
}

// ---- vectors

export async function putVectors(db: PGlite, bucket: string, name: string, vectors: PutVector[]) {
  const seen = new Set<string>();
  for (const vector of vectors) {
    if (seen.has(vector.key))
      throw ERRORS.invalidParameter("vectors", "Request must not contain duplicate keys");
    seen.add(vector.key);
  }
  const index = await mustFindIndex(db, bucket, name);
  const nonFilterable = nonFilterableKeys(index);
  const rows = vectors.map((vector) => {
    checkMetadataLimits(vector, nonFilterable);
    return {
      key: vector.key,
      embedding: `[${vector.data.float32.join(",")}]`,
      metadata: validMetadata(vector.metadata, vector.key),
    };
  });
  rows.sort((a, b) => a.key.localeCompare(b.key));
  const vector = index.vector_schema;
  await asVectors(db, name, (tx) =>
    tx.query(
      `insert into storage_vectors.${tableName(bucket, name)} (key, embedding, metadata)
       select key, embedding::${vector}.halfvec, metadata
         from jsonb_to_recordset($1::jsonb) as x(key text, embedding text, metadata jsonb)
       on conflict (key) do update set embedding = excluded.embedding, metadata = excluded.metadata`,
      [JSON.stringify(rows)],
    ),
  );
  return {};
}

export async function getVectors(
  db: PGlite,
  bucket: string,
  name: string,
  options: { keys: string[]; returnData: boolean; returnMetadata: boolean },
) {
  await mustFindIndex(db, bucket, name);
  const { rows } = await asVectors(db, name, (tx) =>
    tx.query<{ key: string; embedding: string; metadata: Metadata }>(
      `select key, embedding::text as embedding, metadata
         from storage_vectors.${tableName(bucket, name)} where key = any($1::text[])`,
      [options.keys],
    ),
  );
  return { vectors: rows.map((row) => vectorJson(row, options)) };
}

export async function listVectors(
  db: PGlite,
  bucket: string,
  name: string,
  options: {
    maxResults?: number;
    nextToken?: string;
    returnData: boolean;
    returnMetadata: boolean;
    segmentCount?: number;
    segmentIndex?: number;
  },
) {
  await mustFindIndex(db, bucket, name);
  const max = positiveInt("maxResults", options.maxResults ?? 500, MAX_LIST_RESULTS);
  const segmented = options.segmentCount !== undefined;
  const { rows } = await asVectors(db, name, (tx) =>
    tx.query<{ key: string; embedding: string; metadata: Metadata }>(
      `select key, embedding::text as embedding, metadata
         from storage_vectors.${tableName(bucket, name)}
        where ($1::text is null or key > $1)
          and (not $2 or mod(abs(hashtext(key)::bigint), $3::bigint) = $4::bigint)
        order by key limit $5`,
      [
        options.nextToken || null,
        segmented,
        options.segmentCount ?? 1,
        options.segmentIndex ?? 0,
        max + 1,
      ],
    ),
  );
  const page = rows.slice(0, max);
  return {
    vectors: page.map((row) => vectorJson(row, options)),
    nextToken: rows.length > max ? page[page.length - 1]?.key : undefined,
  };
}

export async function queryVectors(
  db: PGlite,
  bucket: string,
  name: string,
  options: {
    queryVector: number[];
    topK: number;
    filter?: unknown;
    returnDistance: boolean;
    returnMetadata: boolean;
  },
) {
  const index = await mustFindIndex(db, bucket, name);
  if (options.filter !== undefined) {
    const nonFilterable = nonFilterableKeys(index);
    for (const key of filterKeys(options.filter))
      if (nonFilterable.has(key))
        throw ERRORS.invalidParameter(
          "filter",
          `Metadata key "${key}" is configured as non-filterable`,
        );
  }
  const metric = index.distance_metric === "euclidean" ? "euclidean" : "cosine";
  const vector = index.vector_schema;
  const distance = `embedding operator(${vector}.${metric === "euclidean" ? "<->" : "<=>"}) $1::${vector}.halfvec`;
  const filter = options.filter === undefined ? undefined : translateFilter(options.filter, 2);
  const { rows } = await asVectors(db, name, async (tx) => {
    await tx.query("select set_config('hnsw.ef_search', $1, true)", [
      String(Math.max(options.topK, DEFAULT_HNSW_EF_SEARCH)),
    ]);
    return tx.query<{ key: string; distance: number; metadata: Metadata }>(
      `select key, ${distance} as distance, metadata
         from storage_vectors.${tableName(bucket, name)}
        ${filter ? `where ${filter.sql}` : ""}
        order by ${distance} limit $2`,
      [`[${options.queryVector.join(",")}]`, options.topK, ...(filter?.params ?? [])],
    );
  });
  return {
    vectors: rows.map((row) => ({
      key: row.key,
      distance: options.returnDistance ? row.distance : undefined,
      metadata: options.returnMetadata ? (row.metadata ?? {}) : undefined,
    })),
    distanceMetric: metric,
  };
}

export async function deleteVectors(db: PGlite, bucket: string, name: string, keys: string[]) {
  await mustFindIndex(db, bucket, name);
  await asVectors(db, name, (tx) =>
    tx.query(`delete from storage_vectors.${tableName(bucket, name)} where key = any($1::text[])`, [
      keys,
    ]),
  );
  return {};
}

// ---- helpers

/** The index's table: a hash of the two names, which together may pass Postgres's 63 bytes. */
function tableName(bucket: string, index: string): string {
  const hash = createHash("sha256").update(`${bucket}\x00${index}`).digest("hex").slice(0, 24);
  return `vector_${hash}`;
}

/**
 * Work on an index's table, as the owner. Postgres's refusals of the input are a 400 with its
 * words (a vector of another dimension, a value past halfvec's range), where upstream maps only
 * some and answers the rest with a 500 (decision 046); a table gone is the index not found.
 */
async function asVectors<T>(db: PGlite, index: string, work: (tx: Transaction) => Promise<T>) {
  try {
    return await db.transaction(work);
  } catch (error) {
    if (error instanceof StorageError) throw error;
    const { code, message } = error as { code?: string; message?: string };
    if (code === "42P01") throw ERRORS.vectorNotFound(index);
    if (code === "23505") throw ERRORS.vectorConflict("vectors", index);
    if (typeof code === "string" && code.startsWith("22") && typeof message === "string")
      throw ERRORS.invalidParameter(index, message);
    throw error;
  }
}

/** The schema pgvector is in, quoted; created in `extensions` when no migration made it. */
async function pgvector(tx: Transaction): Promise<string> {
  const schema = await extensionSchema(tx);
  if (schema) return schema;
  await tx.exec("create extension if not exists vector with schema extensions");
  return "extensions";
}

async function extensionSchema(db: PGlite | Transaction): Promise<string | undefined> {
  const { rows } = await db.query<{ schema: string }>(
    "select extnamespace::regnamespace::text as schema from pg_extension where extname = 'vector'",
  );
  return rows[0]?.schema;
}

async function lock(tx: Transaction, kind: string, id: string): Promise<void> {
  await tx.query("select pg_advisory_xact_lock(hashtextextended($1, 0))", [`vector:${kind}:${id}`]);
}

async function scalar(tx: Transaction, sql: string, params: unknown[] = []): Promise<number> {
  const { rows } = await tx.query<{ n: number }>(sql, params);
  return rows[0]?.n ?? 0;
}

async function bucketExists(tx: Transaction, name: string): Promise<boolean> {
  const { rows } = await tx.query("select 1 from storage.buckets_vectors where id = $1", [name]);
  return rows.length > 0;
}

async function findIndex(
  db: PGlite | Transaction,
  bucket: string,
  name: string,
): Promise<IndexRow | undefined> {
  const { rows } = await db.query<IndexRow>(
    `select name, bucket_id, data_type, dimension, distance_metric, metadata_configuration, created_at,
            coalesce((select extnamespace::regnamespace::text from pg_extension where extname = 'vector'),
                     'extensions') as vector_schema
       from storage.vector_indexes where bucket_id = $1 and name = $2`,
    [bucket, name],
  );
  return rows[0];
}

async function mustFindIndex(db: PGlite, bucket: string, name: string): Promise<IndexRow> {
  const index = await findIndex(db, bucket, name);
  if (!index) throw ERRORS.vectorNotFound(name);
  return index;
}

function conflictAs(resource: string, name: string) {
  return (error: unknown) => {
    if ((error as { code?: string }).code === "23505") throw ERRORS.vectorConflict(resource, name);
    throw error;
  };
}

function likePrefix(prefix: string | undefined): string | null {
  return prefix ? `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
}

function nonFilterableKeys(index: IndexRow): Set<string> {
  const keys = index.metadata_configuration?.nonFilterableMetadataKeys;
  return new Set(Array.isArray(keys) ? keys.filter((k) => typeof k === "string") : []);
}

function bytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), "utf8");
}

function checkMetadataLimits(vector: PutVector, nonFilterable: Set<string>): void {
  const metadata = vector.metadata;
  if (!metadata || typeof metadata !== "object" || Array.isArray(metadata)) return;
  const refuse = (what: string) =>
    ERRORS.invalidParameter("vectors.metadata", `Invalid record for key '${vector.key}': ${what}`);
  if (Object.keys(metadata).length > MAX_METADATA_KEYS)
    throw refuse(`Metadata must have at most ${MAX_METADATA_KEYS} keys`);
  if (bytes(metadata) > MAX_TOTAL_METADATA_BYTES)
    throw refuse(`Total metadata must have at most ${MAX_TOTAL_METADATA_BYTES} bytes`);
  const filterable = Object.fromEntries(
    Object.entries(metadata).filter(([key]) => !nonFilterable.has(key)),
  );
  if (bytes(filterable) > MAX_FILTERABLE_METADATA_BYTES)
    throw refuse(`Filterable metadata must have at most ${MAX_FILTERABLE_METADATA_BYTES} bytes`);
}

/** Metadata of strings, booleans, finite numbers and arrays of them (upstream's check). */
function validMetadata(metadata: unknown, key: string): Metadata {
  if (metadata === undefined) return {};
  const refuse = (what: string) =>
    ERRORS.invalidParameter("vectors.metadata", `Invalid metadata for vector "${key}": ${what}`);
  if (metadata === null || Array.isArray(metadata) || typeof metadata !== "object")
    throw refuse("metadata must be an object");
  const primitive = (value: unknown, field: string) => {
    if (typeof value === "string" || typeof value === "boolean") return value;
    if (typeof value === "number" && Number.isFinite(value)) return value;
    throw refuse(`metadata field "${field}" must be a string, boolean, or finite number`);
  };
  const valid: Metadata = {};
  for (const [field, value] of Object.entries(metadata))
    valid[field] = Array.isArray(value)
      ? value.map((item, i) => primitive(item, `${field}[${i}]`))
      : primitive(value, field);
  return valid;
}

function positiveInt(name: string, value: number, max: number): number {
  if (!Number.isInteger(value) || value < 1 || value > max)
    throw ERRORS.invalidParameter(name, `${name} must be an integer in [1, ${max}], got: ${value}`);
  return value;
}

function vectorJson(
  row: { key: string; embedding: string; metadata: Metadata },
  options: { returnData: boolean; returnMetadata: boolean },
) {
  return {
    key: row.key,
    data: options.returnData ? { float32: parseVector(row.embedding) } : undefined,
    metadata: options.returnMetadata ? (row.metadata ?? {}) : undefined,
  };
}

/** pgvector's text ("[1,0.5,0]") as numbers. */
function parseVector(text: string): number[] {
  if (!text.startsWith("[") || !text.endsWith("]")) return [];
  return text
    .slice(1, -1)
    .split(",")
    .map(Number)
    .filter((n) => Number.isFinite(n));
}

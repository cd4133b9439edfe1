// Vector buckets (/storage/v1/vector) through storage-js's `storage.vectors`, as the Storage the
// CLI runs serves them on pgvector: buckets, indexes and vectors, similarity queries with metadata
// filters, upstream's limits, refusals and statuses, for the service role only.
import type { SupabaseClient } from "@supabase/supabase-js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { PUBLISHABLE_KEY, SECRET_KEY } from "../../../../tests/support/backend.ts";
import { type MemoryBackend, memoryBackend } from "../../../../tests/support/memory-backend.ts";

let local: MemoryBackend;
let admin: SupabaseClient;
const made: string[] = [];

/** A bucket name of this test's own. */
function bucketName(): string {
  const name = `vectors-${crypto.randomUUID().slice(0, 8)}`;
  made.push(name);
  return name;
}

beforeAll(async () => {
  local = await memoryBackend({ storage: { vector: { maxBuckets: 4, maxIndexes: 2 } } });
  admin = local.admin();
}, 60_000);

afterAll(async () => {
  // the buckets this file made, emptied and removed: the worker's database is shared
  for (const bucket of made) {
    const scope = admin.storage.vectors.from(bucket);
    const { data } = await scope.listIndexes();
    for (const index of data?.indexes ?? []) await scope.deleteIndex(index.indexName);
    await admin.storage.vectors.deleteBucket(bucket);
  }
  await local?.close();
});

/** POST /storage/v1/vector/<op> with the secret key, or the given bearer. */
function post(op: string, body: unknown, bearer?: string) {
  return local.fetch(`${local.backend.url}/storage/v1/vector/${op}`, {
    method: "POST",
    headers: {
      apikey: bearer ? PUBLISHABLE_KEY : SECRET_KEY,
      ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      "content-type": "application/json",
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

describe("vector buckets", () => {
  test("an index of embeddings: put, get, list, query by cosine with filters, delete", async () => {
    const bucket = bucketName();
    expect(await admin.storage.vectors.createBucket(bucket)).toEqual({ data: {}, error: null });
    const got = await admin.storage.vectors.getBucket(bucket);
    expect(got.data?.vectorBucket.vectorBucketName).toBe(bucket);
    expect(Math.abs((got.data?.vectorBucket.creationTime ?? 0) - Date.now() / 1000)).toBeLessThan(
      60,
    );

    const scope = admin.storage.vectors.from(bucket);
    const created = await scope.createIndex({
      indexName: "docs",
      dataType: "float32",
      dimension: 3,
      distanceMetric: "cosine",
      metadataConfiguration: { nonFilterableMetadataKeys: ["body"] },
    });
    expect(created.error).toBeNull();
    const index = await scope.getIndex("docs");
    expect(index.data?.index).toMatchObject({
      indexName: "docs",
      dataType: "float32",
      dimension: 3,
      distanceMetric: "cosine",
      metadataConfiguration: { nonFilterableMetadataKeys: ["body"] },
      vectorBucketName: bucket,
    });

    const docs = scope.index("docs");
    const put = await docs.putVectors({
      vectors: [
        {
          key: "north",
          data: { float32: [1, 0, 0] },
          metadata: { kind: "map", year: 2020, body: "n" },
        },
        { key: "north-east", data: { float32: [1, 1, 0] }, metadata: { kind: "map", year: 2024 } },
        { key: "up", data: { float32: [0, 0, 1] }, metadata: { kind: ["sky", "map"], year: 2022 } },
        { key: "half", data: { float32: [0.5, 0.25, 0] } },
      ],
    });
    expect(put).toEqual({ data: {}, error: null });

    const fetched = await docs.getVectors({
      keys: ["north", "missing"],
      returnData: true,
      returnMetadata: true,
    });
    expect(fetched.data?.vectors).toEqual([
      {
        key: "north",
        data: { float32: [1, 0, 0] },
        metadata: { kind: "map", year: 2020, body: "n" },
      },
    ]);

    const nearest = await docs.queryVectors({
      queryVector: { float32: [0.9, 0.1, 0] },
      topK: 3,
      returnDistance: true,
    });
    expect(nearest.error).toBeNull();
    expect(nearest.data?.distanceMetric).toBe("cosine");
    expect(nearest.data?.vectors.map((v) => v.key)).toEqual(["north", "half", "north-east"]);
    expect(nearest.data?.vectors[0]?.distance).toBeCloseTo(1 - 0.9 / Math.sqrt(0.82), 3);
    expect(nearest.data?.vectors[0]).not.toHaveProperty("metadata");

    // a scalar or an array element equal; numbers compared as numbers; $and/$or; $exists
    const filtered = async (filter: Record<string, unknown>) =>
      (
        await docs.queryVectors({ queryVector: { float32: [1, 0, 0] }, topK: 10, filter })
      ).data?.vectors
        .map((v) => v.key)
        .sort();
    expect(await filtered({ kind: "map" })).toEqual(["north", "north-east", "up"]);
    // $ne: no element of an array, and a vector without the key does not match (SQL's NULL)
    expect(await filtered({ kind: { $ne: "sky" } })).toEqual(["north", "north-east"]);
    expect(await filtered({ year: { $gte: 2022 } })).toEqual(["north-east", "up"]);
    expect(await filtered({ $or: [{ year: 2020 }, { kind: "sky" }] })).toEqual(["north", "up"]);
    expect(await filtered({ kind: { $in: ["sky"] }, year: { $lt: 2030 } })).toEqual(["up"]);
    expect(await filtered({ year: { $exists: false } })).toEqual(["half"]);
    const nonFilterable = await docs.queryVectors({
      queryVector: { float32: [1, 0, 0] },
      topK: 1,
      filter: { body: "n" },
    });
    expect(nonFilterable.error).toMatchObject({
      status: 400,
      code: "InvalidParameter",
      message: 'Metadata key "body" is configured as non-filterable',
    });

    // an upsert replaces; pages follow the keys' order
    await docs.putVectors({
      vectors: [{ key: "up", data: { float32: [0, 1, 0] }, metadata: { kind: "ground" } }],
    });
    const first = await docs.listVectors({ maxResults: 2, returnMetadata: true });
    expect(first.data?.vectors.map((v) => v.key)).toEqual(["half", "north"]);
    const rest = await docs.listVectors({ nextToken: first.data?.nextToken, returnMetadata: true });
    expect(rest.data?.vectors).toEqual([
      { key: "north-east", metadata: { kind: "map", year: 2024 } },
      { key: "up", metadata: { kind: "ground" } },
    ]);
    expect(rest.data?.nextToken).toBeUndefined();
    const segments = await Promise.all(
      [0, 1].map((segmentIndex) => docs.listVectors({ segmentCount: 2, segmentIndex })),
    );
    expect(segments.flatMap((s) => s.data?.vectors.map((v) => v.key) ?? []).sort()).toEqual([
      "half",
      "north",
      "north-east",
      "up",
    ]);

    expect(await docs.deleteVectors({ keys: ["north", "half"] })).toEqual({
      data: {},
      error: null,
    });
    const left = await docs.listVectors({});
    expect(left.data?.vectors.map((v) => v.key)).toEqual(["north-east", "up"]);

    // a bucket with an index is not empty; the index goes, then the bucket
    const notEmpty = await admin.storage.vectors.deleteBucket(bucket);
    expect(notEmpty.error).toMatchObject({
      status: 400,
      code: "VectorBucketNotEmpty",
      message: `Vector Bucket "${bucket}" not empty`,
    });
    expect((await scope.deleteIndex("docs")).error).toBeNull();
    expect((await scope.getIndex("docs")).error).toMatchObject({
      status: 404,
      code: "NotFoundException",
      message: 'resource "docs" not found',
    });
    expect((await admin.storage.vectors.deleteBucket(bucket)).error).toBeNull();
    expect((await admin.storage.vectors.getBucket(bucket)).error).toMatchObject({ status: 404 });
  });

  test("euclidean distance, and vectors that do not fit the index are a 400", async () => {
    const bucket = bucketName();
    await admin.storage.vectors.createBucket(bucket);
    const scope = admin.storage.vectors.from(bucket);
    await scope.createIndex({
      indexName: "points",
      dataType: "float32",
      dimension: 2,
      distanceMetric: "euclidean",
    });
    const points = scope.index("points");
    await points.putVectors({
      vectors: [
        { key: "a", data: { float32: [0, 0] } },
        { key: "b", data: { float32: [3, 4] } },
      ],
    });
    const near = await points.queryVectors({
      queryVector: { float32: [3, 3] },
      topK: 1,
      returnDistance: true,
    });
    expect(near.data).toEqual({
      vectors: [{ key: "b", distance: 1 }],
      distanceMetric: "euclidean",
    });

    const wrongDimension = await post("PutVectors", {
      vectorBucketName: bucket,
      indexName: "points",
      vectors: [{ key: "c", data: { float32: [1, 2, 3] } }],
    });
    expect(wrongDimension.status).toBe(400);
    expect(await wrongDimension.json()).toMatchObject({
      statusCode: "400",
      code: "InvalidParameter",
      message: "expected 2 dimensions, not 3",
    });
    const duplicate = await post("PutVectors", {
      vectorBucketName: bucket,
      indexName: "points",
      vectors: [
        { key: "c", data: { float32: [1, 2] } },
        { key: "c", data: { float32: [2, 1] } },
      ],
    });
    expect(await duplicate.json()).toMatchObject({
      message: "Request must not contain duplicate keys",
    });
    const badMetadata = await post("PutVectors", {
      vectorBucketName: bucket,
      indexName: "points",
      vectors: [{ key: "c", data: { float32: [1, 2] }, metadata: { tags: [{ deep: true }] } }],
    });
    expect(badMetadata.status).toBe(400);
    expect(await badMetadata.json()).toMatchObject({
      message: "body/vectors/0/metadata/tags must match a schema in anyOf",
    });
    const badFilter = await post("QueryVectors", {
      vectorBucketName: bucket,
      indexName: "points",
      queryVector: { float32: [1, 1] },
      topK: 1,
      filter: { year: { $gt: "2020" } },
    });
    expect(badFilter.status).toBe(400);
    expect(await badFilter.json()).toMatchObject({ message: '$gt requires a number for "year"' });
    await scope.deleteIndex("points");
  });

  test("bodies are checked as upstream's schemas check them, every error at once", async () => {
    const response = await post("CreateIndex", {
      vectorBucketName: "anything",
      indexName: "A",
      dataType: "float64",
      dimension: 5000,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      statusCode: "400",
      code: "InternalError",
      error: "FastifyError",
      message:
        "body must have required property 'distanceMetric', body/dataType must be equal to one of the allowed values, body/dimension must be <= 4096, body/indexName must NOT have fewer than 3 characters, body/indexName must match pattern \"^[a-z0-9](?:[a-z0-9.-]{1,61})?[a-z0-9]$\"",
    });
    const notJson = await post("GetVectorBucket", "{");
    expect(notJson.status).toBe(400);
    const tooBig = await post("CreateIndex", {
      vectorBucketName: "anything",
      indexName: "big",
      dataType: "float32",
      dimension: 4096,
      distanceMetric: "cosine",
    });
    expect(await tooBig.json()).toMatchObject({
      message: "dimension must be an integer in [1, 4000] for this vector backend, got: 4096",
    });
    const missingBucket = await post("CreateIndex", {
      vectorBucketName: "no-such-bucket",
      indexName: "idx",
      dataType: "float32",
      dimension: 3,
      distanceMetric: "cosine",
    });
    expect(missingBucket.status).toBe(404);
  });

  test("[storage.vector]'s limits: buckets and indexes past them are refused, a taken name is a 409", async () => {
    const taken = bucketName();
    await admin.storage.vectors.createBucket(taken);
    expect((await admin.storage.vectors.createBucket(taken)).error).toMatchObject({
      status: 409,
      code: "ConflictException",
      message: `vector bucket "${taken}" already exists`,
    });
    const scope = admin.storage.vectors.from(taken);
    const index = (indexName: string) =>
      scope.createIndex({ indexName, dataType: "float32", dimension: 2, distanceMetric: "cosine" });
    expect((await index("one")).error).toBeNull();
    expect((await index("one")).error).toMatchObject({
      status: 409,
      message: 'vector index "one" already exists',
    });
    expect((await index("two")).error).toBeNull();
    expect((await index("three")).error).toMatchObject({
      status: 400,
      code: "S3VectorMaxIndexesExceeded",
      message:
        "Maximum number of indexes exceeded. Max allowed is 2. Contact support to increase your limit.",
    });
    const listed = await scope.listIndexes({ maxResults: 1 });
    expect(listed.data?.indexes.map((i) => i.indexName)).toEqual(["one"]);
    expect(listed.data?.nextToken).toBe("one");

    const existing = (await admin.storage.vectors.listBuckets()).data?.vectorBuckets.length ?? 0;
    const fillers: string[] = [];
    for (let i = existing; i < 4; i++) {
      fillers.push(bucketName());
      await admin.storage.vectors.createBucket(fillers[fillers.length - 1] as string);
    }
    expect((await admin.storage.vectors.createBucket(bucketName())).error).toMatchObject({
      status: 400,
      code: "S3VectorMaxBucketsExceeded",
    });
    const page = await admin.storage.vectors.listBuckets({ prefix: "vectors-", maxResults: 2 });
    expect(page.data?.vectorBuckets).toHaveLength(2);
    expect(page.data?.nextToken).toBe(page.data?.vectorBuckets[1]?.vectorBucketName);
    // room again for the tests after this one
    for (const filler of fillers) await admin.storage.vectors.deleteBucket(filler);
  });

  test("the service role's alone: a user's token, or the publishable key, is refused", async () => {
    const { session } = await local.signedIn();
    for (const bearer of [session.access_token, PUBLISHABLE_KEY]) {
      const response = await post("ListVectorBuckets", {}, bearer);
      expect(response.status).toBe(403);
      expect(await response.json()).toMatchObject({ message: "Access denied: Invalid role" });
    }
    const user = local.client();
    expect((await user.storage.vectors.listBuckets()).error).toMatchObject({ status: 403 });
  });

  test("a table and a filter key that are SQL stay data", async () => {
    const bucket = bucketName();
    await admin.storage.vectors.createBucket(bucket);
    const scope = admin.storage.vectors.from(bucket);
    await scope.createIndex({
      indexName: "x.y-z",
      dataType: "float32",
      dimension: 1,
      distanceMetric: "cosine",
    });
    const weird = "k'); drop table storage.objects; --";
    await scope.index("x.y-z").putVectors({
      vectors: [{ key: weird, data: { float32: [1] }, metadata: { [weird]: weird } }],
    });
    const found = await scope.index("x.y-z").queryVectors({
      queryVector: { float32: [1] },
      topK: 1,
      filter: { [weird]: { $eq: weird } },
      returnMetadata: true,
    });
    expect(found.data?.vectors).toEqual([{ key: weird, metadata: { [weird]: weird } }]);
    expect(
      (await local.backend.db.query("select count(*)::int as n from storage.objects")).rows,
    ).toHaveLength(1);
    await scope.deleteIndex("x.y-z");
  });

  test("hostile input is a 400, never a 500: a NUL in a name or key, a value past a half float", async () => {
    const bucket = bucketName();
    await admin.storage.vectors.createBucket(bucket);
    await admin.storage.vectors.from(bucket).createIndex({
      indexName: "tiny",
      dataType: "float32",
      dimension: 1,
      distanceMetric: "cosine",
    });
    const answers = await Promise.all([
      post("GetVectorBucket", { vectorBucketName: "a\u0000b" }),
      post("CreateVectorBucket", { vectorBucketName: "a\u0000b" }),
      post("PutVectors", {
        vectorBucketName: bucket,
        indexName: "tiny",
        vectors: [{ key: "k\u0000", data: { float32: [1] } }],
      }),
      post("PutVectors", {
        vectorBucketName: bucket,
        indexName: "tiny",
        vectors: [{ key: "big", data: { float32: [1e10] } }],
      }),
      post("QueryVectors", {
        vectorBucketName: bucket,
        indexName: "tiny",
        queryVector: { float32: [1] },
        topK: 1,
        filter: { "a\u0000": 1 },
      }),
      post("ListVectors", { vectorBucketName: bucket, indexName: "tiny", nextToken: "\u0000" }),
    ]);
    for (const answer of answers) {
      expect(answer.status).toBe(400);
      expect((await answer.json()).statusCode).toBe("400");
    }
  });

  test("[storage.vector] enabled = false: the routes are not there, as on a server without them", async () => {
    const off = await memoryBackend({ storage: { vector: { enabled: false } } });
    try {
      const response = await off.fetch(`${off.backend.url}/storage/v1/vector/ListVectorBuckets`, {
        method: "POST",
        headers: { apikey: SECRET_KEY, "content-type": "application/json" },
        body: "{}",
      });
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({
        statusCode: 404,
        error: "Not Found",
        message: "Route POST:/vector/ListVectorBuckets not found",
      });
    } finally {
      await off.close();
    }
  });
});

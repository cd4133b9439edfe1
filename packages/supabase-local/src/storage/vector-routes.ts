// The routes of /storage/v1/vector (upstream's http/routes/vector, v1.70.6): thirteen POSTs, each
// a JSON body checked as upstream's schemas check it (Ajv with every error, no coercion: Fastify's
// "body/dimension must be <= 4096"), for the service role only (its enforceJwtRole), answered
// with each error's real status (its respectStatusCode). The logic is in vector-buckets.ts.
import type { PGlite } from "@electric-sql/pglite";
import { Hono } from "hono";
import { callerOf, SERVICE_ROLE } from "./caller.ts";
import { ERRORS, fromDatabaseError, StorageError, validationError } from "./errors.ts";
import { BodyError, jsonBody } from "./json-body.ts";
import * as vectors from "./vector-buckets.ts";

type Json = Record<string, unknown>;

const INDEX_NAME = {
  minLength: 3,
  maxLength: 45,
  pattern: "^[a-z0-9](?:[a-z0-9.-]{1,61})?[a-z0-9]$",
};

export function vectorRoutes(db: PGlite, limits: vectors.VectorLimits): Hono {
  const app = new Hono();
  app.onError((caught) => {
    // what Postgres refuses of the input (a NUL in a name): a 400, as elsewhere in Storage
    const error = fromDatabaseError(caught) ?? caught;
    if (error instanceof StorageError)
      return Response.json(
        {
          statusCode: String(error.status),
          code: error.code,
          error: error.error,
          message: error.message,
        },
        { status: error.status },
      );
    if (error instanceof BodyError) return validationError(error.message);
    console.error("[supabase-local] storage vectors:", error);
    return ERRORS.internal().response();
  });

  /** A route: the caller must be the service role, and the body pass `check` first. */
  const post = <T>(
    name: string,
    operation: string,
    check: (body: Checked) => T,
    handle: (input: T) => Promise<unknown>,
  ) =>
    app.post(`/${name}`, async (c) => {
      const caller = await callerOf(c.req.raw, operation);
      if (caller.role !== SERVICE_ROLE.role)
        throw ERRORS.accessDeniedJwt("Access denied: Invalid role");
      const body = new Checked(await jsonBody(c.req.raw));
      const input = check(body);
      body.done();
      const result = await handle(input);
      // upstream sends no body for the writes (Fastify's empty 200)
      return result === undefined ? c.body(null, 200) : c.json(result);
    });

  post(
    "CreateVectorBucket",
    "storage.vector.bucket.create",
    (b) => b.required("vectorBucketName") && { bucket: b.string("vectorBucketName") },
    async ({ bucket }) => {
      await vectors.createBucket(db, bucket as string, limits);
    },
  );
  post(
    "GetVectorBucket",
    "storage.vector.bucket.get",
    (b) => b.required("vectorBucketName") && { bucket: b.string("vectorBucketName") },
    ({ bucket }) => vectors.getBucket(db, bucket as string),
  );
  post(
    "ListVectorBuckets",
    "storage.vector.bucket.list",
    (b) => ({
      maxResults: b.number("maxResults", { minimum: 1, maximum: 500 }) ?? 500,
      nextToken: b.string("nextToken"),
      prefix: b.string("prefix"),
    }),
    (options) => vectors.listBuckets(db, options),
  );
  post(
    "DeleteVectorBucket",
    "storage.vector.bucket.delete",
    (b) => b.required("vectorBucketName") && { bucket: b.string("vectorBucketName") },
    async ({ bucket }) => {
      await vectors.deleteBucket(db, bucket as string);
    },
  );

  post(
    "CreateIndex",
    "storage.vector.index.create",
    (b) => {
      b.required("dataType", "dimension", "distanceMetric", "indexName", "vectorBucketName");
      const input = {
        dataType: b.string("dataType", { enum: ["float32"] }),
        dimension: b.number("dimension", { integer: true, minimum: 1, maximum: 4096 }),
        distanceMetric: b.string("distanceMetric", { enum: ["cosine", "euclidean"] }),
        indexName: b.string("indexName", INDEX_NAME),
        metadataConfiguration: b.metadataConfiguration(),
        vectorBucketName: b.string("vectorBucketName"),
      };
      return input as vectors.VectorIndexInput;
    },
    async (input) => {
      await vectors.createIndex(db, input, limits);
    },
  );
  post(
    "GetIndex",
    "storage.vector.index.get",
    (b) =>
      b.required("vectorBucketName", "indexName") && {
        bucket: b.string("vectorBucketName") as string,
        index: b.string("indexName", INDEX_NAME) as string,
      },
    ({ bucket, index }) => vectors.getIndex(db, bucket, index),
  );
  post(
    "ListIndexes",
    "storage.vector.index.list",
    (b) =>
      b.required("vectorBucketName") && {
        bucket: b.string("vectorBucketName") as string,
        maxResults: b.number("maxResults", { minimum: 1, maximum: 500 }) ?? 500,
        nextToken: b.string("nextToken"),
        prefix: b.string("prefix"),
      },
    ({ bucket, ...options }) => vectors.listIndexes(db, bucket, options),
  );
  post(
    "DeleteIndex",
    "storage.vector.index.delete",
    (b) =>
      b.required("indexName", "vectorBucketName") && {
        index: b.string("indexName", INDEX_NAME) as string,
        bucket: b.string("vectorBucketName") as string,
      },
    async ({ bucket, index }) => {
      await vectors.deleteIndex(db, bucket, index);
    },
  );

  post(
    "PutVectors",
    "storage.vector.vectors.put",
    (b) =>
      b.required("vectorBucketName", "indexName", "vectors") && {
        bucket: b.string("vectorBucketName") as string,
        index: b.string("indexName", INDEX_NAME) as string,
        vectors: b.vectors() as vectors.PutVector[],
      },
    async ({ bucket, index, vectors: items }) => {
      await vectors.putVectors(db, bucket, index, items);
    },
  );
  post(
    "GetVectors",
    "storage.vector.vectors.get",
    (b) =>
      b.required("indexName", "keys", "vectorBucketName") && {
        index: b.string("indexName") as string,
        keys: b.keys("keys", vectors.MAX_GET_VECTOR_KEYS) as string[],
        returnData: b.boolean("returnData") ?? false,
        returnMetadata: b.boolean("returnMetadata") ?? false,
        bucket: b.string("vectorBucketName") as string,
      },
    ({ bucket, index, ...options }) => vectors.getVectors(db, bucket, index, options),
  );
  post(
    "ListVectors",
    "storage.vector.vectors.list",
    (b) => {
      b.required("vectorBucketName", "indexName");
      const input = {
        bucket: b.string("vectorBucketName") as string,
        indexArn: b.string("indexArn"),
        index: b.string("indexName", INDEX_NAME) as string,
        maxResults: b.number("maxResults", {
          integer: true,
          minimum: 1,
          maximum: vectors.MAX_LIST_RESULTS,
        }),
        nextToken: b.string("nextToken"),
        returnData: b.boolean("returnData") ?? false,
        returnMetadata: b.boolean("returnMetadata") ?? false,
        segmentCount: b.number("segmentCount", {
          integer: true,
          minimum: 1,
          maximum: vectors.MAX_SEGMENT_COUNT,
        }),
        segmentIndex: b.number("segmentIndex", {
          integer: true,
          minimum: 0,
          maximum: vectors.MAX_SEGMENT_COUNT - 1,
        }),
      };
      return input;
    },
    ({ bucket, index, segmentCount, segmentIndex, ...options }) => {
      if ((segmentCount === undefined) !== (segmentIndex === undefined))
        throw ERRORS.invalidParameter(
          "segmentCount/segmentIndex",
          "segmentCount and segmentIndex must be provided together",
        );
      if (segmentCount !== undefined && segmentIndex !== undefined && segmentIndex >= segmentCount)
        throw ERRORS.invalidParameter(
          "segmentIndex",
          "segmentIndex must be less than segmentCount",
        );
      return vectors.listVectors(db, bucket, index, { ...options, segmentCount, segmentIndex });
    },
  );
  post(
    "QueryVectors",
    "storage.vector.vectors.query",
    (b) => {
      b.required("vectorBucketName", "indexName", "queryVector", "topK");
      b.only([
        "filter",
        "indexArn",
        "indexName",
        "queryVector",
        "returnDistance",
        "returnMetadata",
        "topK",
        "vectorBucketName",
      ]);
      const filter = b.object("filter");
      return {
        filter,
        indexArn: b.string("indexArn"),
        index: b.string("indexName", INDEX_NAME) as string,
        queryVector: b.queryVector() as number[],
        returnDistance: b.boolean("returnDistance") ?? false,
        returnMetadata: b.boolean("returnMetadata") ?? false,
        topK: b.number("topK", {
          integer: true,
          minimum: 1,
          maximum: vectors.MAX_QUERY_TOP_K,
        }) as number,
        bucket: b.string("vectorBucketName") as string,
      };
    },
    ({ bucket, index, indexArn: _, ...options }) =>
      vectors.queryVectors(db, bucket, index, options),
  );
  post(
    "DeleteVectors",
    "storage.vector.vectors.delete",
    (b) =>
      b.required("vectorBucketName", "indexName", "keys") && {
        bucket: b.string("vectorBucketName") as string,
        index: b.string("indexName") as string,
        keys: b.keys("keys", vectors.MAX_DELETE_VECTOR_KEYS) as string[],
      },
    async ({ bucket, index, keys }) => {
      await vectors.deleteVectors(db, bucket, index, keys);
    },
  );
  return app;
}

interface NumberRule {
  integer?: boolean;
  minimum?: number;
  maximum?: number;
}
interface StringRule {
  enum?: string[];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
}

/**
 * A body checked as Ajv checks it with allErrors: every failing keyword is a message
 * ("body/indexName must match pattern …"), in the schema's order, and done() throws them joined
 * as Fastify joins them. A field of the wrong type reports its type only.
 */
class Checked {
  private readonly errors: string[] = [];
  private readonly body: Json;

  constructor(body: unknown) {
    const isObject = body !== null && typeof body === "object" && !Array.isArray(body);
    if (!isObject) this.errors.push("body must be object");
    this.body = isObject ? (body as Json) : {};
  }

  done(): void {
    if (this.errors.length > 0) throw new BodyError(this.errors.join(", "));
  }

  /** Each missing property's message; true, to chain with &&. */
  required(...names: string[]): true {
    for (const name of names)
      if (this.body[name] === undefined)
        this.errors.push(`body must have required property '${name}'`);
    return true;
  }

  /** No property outside `names` (additionalProperties: false). */
  only(names: string[]): void {
    if (Object.keys(this.body).some((key) => !names.includes(key)))
      this.errors.push("body must NOT have additional properties");
  }

  string(name: string, rule: StringRule = {}): string | undefined {
    return checkString(this.errors, `body/${name}`, this.body[name], rule);
  }

  number(name: string, rule: NumberRule = {}): number | undefined {
    return checkNumber(this.errors, `body/${name}`, this.body[name], rule);
  }

  boolean(name: string): boolean | undefined {
    const value = this.body[name];
    if (value === undefined) return undefined;
    if (typeof value !== "boolean") {
      this.errors.push(`body/${name} must be boolean`);
      return undefined;
    }
    return value;
  }

  object(name: string): Json | undefined {
    const value = this.body[name];
    if (value === undefined) return undefined;
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      this.errors.push(`body/${name} must be object`);
      return undefined;
    }
    return value as Json;
  }

  /** An array of 1 to `max` keys of 1 to 1,024 characters. */
  keys(name: string, max: number): string[] | undefined {
    const items = this.array(`body/${name}`, this.body[name], 1, max);
    items?.forEach((key, i) => {
      checkString(this.errors, `body/${name}/${i}`, key, {
        minLength: 1,
        maxLength: vectors.MAX_VECTOR_KEY_LENGTH,
      });
    });
    return items as string[] | undefined;
  }

  metadataConfiguration(): { nonFilterableMetadataKeys: string[] } | undefined {
    const config = this.object("metadataConfiguration");
    if (!config) return undefined;
    const path = "body/metadataConfiguration";
    if (config.nonFilterableMetadataKeys === undefined) {
      this.errors.push(`${path} must have required property 'nonFilterableMetadataKeys'`);
      return undefined;
    }
    const keys = this.array(
      `${path}/nonFilterableMetadataKeys`,
      config.nonFilterableMetadataKeys,
      1,
      10,
    );
    if (keys) {
      keys.forEach((key, i) => {
        checkString(this.errors, `${path}/nonFilterableMetadataKeys/${i}`, key, {
          minLength: 1,
          maxLength: 63,
        });
      });
      const first = keys.findIndex((key, i) => keys.indexOf(key) !== i);
      if (first >= 0)
        this.errors.push(
          `${path}/nonFilterableMetadataKeys must NOT have duplicate items (items ## ${first} and ${keys.indexOf(keys[first])} are identical)`,
        );
    }
    return config as { nonFilterableMetadataKeys: string[] };
  }

  /** PutVectors' vectors: 1 to 500 of {key, data: {float32}, metadata?}. */
  vectors(): unknown[] | undefined {
    const items = this.array("body/vectors", this.body.vectors, 1, vectors.MAX_PUT_VECTORS);
    items?.forEach((item, i) => {
      const path = `body/vectors/${i}`;
      if (item === null || typeof item !== "object" || Array.isArray(item)) {
        this.errors.push(`${path} must be object`);
        return;
      }
      const vector = item as Json;
      for (const name of ["data", "key"])
        if (vector[name] === undefined)
          this.errors.push(`${path} must have required property '${name}'`);
      this.float32(`${path}/data`, vector.data);
      if (vector.metadata !== undefined) {
        const metadata = vector.metadata;
        if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata))
          this.errors.push(`${path}/metadata must be object`);
        else
          for (const [key, value] of Object.entries(metadata))
            if (!isMetadataValue(value))
              this.errors.push(`${path}/metadata/${key} must match a schema in anyOf`);
      }
      checkString(this.errors, `${path}/key`, vector.key, {
        minLength: 1,
        maxLength: vectors.MAX_VECTOR_KEY_LENGTH,
      });
    });
    return items;
  }

  queryVector(): number[] | undefined {
    const value = this.body.queryVector;
    if (value === undefined) return undefined;
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      const extra = Object.keys(value).some((key) => key !== "float32");
      if (extra) this.errors.push("body/queryVector must NOT have additional properties");
    }
    return this.float32("body/queryVector", value);
  }

  /** An object with float32: an array of at least one number. */
  private float32(path: string, value: unknown): number[] | undefined {
    if (value === undefined) return undefined;
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      this.errors.push(`${path} must be object`);
      return undefined;
    }
    const floats = (value as Json).float32;
    if (floats === undefined) {
      this.errors.push(`${path} must have required property 'float32'`);
      return undefined;
    }
    const items = this.array(`${path}/float32`, floats, 1, Number.POSITIVE_INFINITY);
    items?.forEach((n, i) => {
      if (typeof n !== "number") this.errors.push(`${path}/float32/${i} must be number`);
    });
    return items as number[] | undefined;
  }

  private array(path: string, value: unknown, min: number, max: number): unknown[] | undefined {
    if (value === undefined) return undefined;
    if (!Array.isArray(value)) {
      this.errors.push(`${path} must be array`);
      return undefined;
    }
    if (value.length < min) this.errors.push(`${path} must NOT have fewer than ${min} items`);
    if (value.length > max) this.errors.push(`${path} must NOT have more than ${max} items`);
    return value;
  }
}

function checkString(
  errors: string[],
  path: string,
  value: unknown,
  rule: StringRule,
): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string") {
    errors.push(`${path} must be string`);
    return undefined;
  }
  // Ajv counts characters as code points
  const length = [...value].length;
  if (rule.maxLength !== undefined && length > rule.maxLength)
    errors.push(`${path} must NOT have more than ${rule.maxLength} characters`);
  if (rule.minLength !== undefined && length < rule.minLength)
    errors.push(`${path} must NOT have fewer than ${rule.minLength} characters`);
  if (rule.pattern !== undefined && !new RegExp(rule.pattern, "u").test(value))
    errors.push(`${path} must match pattern "${rule.pattern}"`);
  if (rule.enum !== undefined && !rule.enum.includes(value))
    errors.push(`${path} must be equal to one of the allowed values`);
  return value;
}

function checkNumber(
  errors: string[],
  path: string,
  value: unknown,
  rule: NumberRule,
): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || (rule.integer && !Number.isInteger(value))) {
    errors.push(`${path} must be ${rule.integer ? "integer" : "number"}`);
    return undefined;
  }
  if (rule.maximum !== undefined && value > rule.maximum)
    errors.push(`${path} must be <= ${rule.maximum}`);
  if (rule.minimum !== undefined && value < rule.minimum)
    errors.push(`${path} must be >= ${rule.minimum}`);
  return value;
}

/** A metadata value upstream's schema takes: a string, boolean or number, or an array of them. */
function isMetadataValue(value: unknown): boolean {
  const primitive = (v: unknown) =>
    typeof v === "string" || typeof v === "boolean" || typeof v === "number";
  return primitive(value) || (Array.isArray(value) && value.every(primitive));
}

// The route table of /storage/v1, as upstream's http/routes (bucket/, object/, render/, tus/):
// each handler reads the request (the caller from the gateway's context, the path's bucket and
// key, the body), calls the bucket or object logic, and answers upstream's JSON or the object's
// bytes. Every error is a StorageError, rendered in one place (errors.ts); anything else is
// upstream's 500. Vector buckets and the S3 endpoint are routes of their own (vector-routes.ts,
// s3/routes.ts). Routes a server without CDN purge, lifecycle or analytics buckets lacks answer
// as that server does: Fastify's 404.
import type { PGlite } from "@electric-sql/pglite";
import { type Context, Hono } from "hono";
import * as buckets from "./buckets.ts";
import { ANON, type Caller, callerOf, inRequest, SERVICE_ROLE } from "./caller.ts";
import {
  ERRORS,
  featureNotEnabled,
  routeNotFound,
  StorageError,
  validationError,
} from "./errors.ts";
import type { FileStore } from "./file-store.ts";
import { BodyError, jsonBody } from "./json-body.ts";
import { listObjectsV2 } from "./list-v2.ts";
import { mustBeValidBucketName, mustBeValidKey } from "./names.ts";
import * as objects from "./objects.ts";
import { OPERATIONS, tusOperation } from "./operations.ts";
import { type S3Keys, s3Routes } from "./s3/routes.ts";
import { infoJson, serveObject } from "./serve.ts";
import { mustBeValidExpiresIn, signToken, verifyToken } from "./signed-urls.ts";
import {
  renderImage,
  TransformationSchemaError,
  type Transformations,
  transformationsFrom,
  transformationsFromToken,
} from "./transforms.ts";
import { readUpload } from "./upload.ts";
import type { VectorLimits } from "./vector-buckets.ts";
import { vectorRoutes } from "./vector-routes.ts";

export interface StorageContext {
  db: PGlite;
  files: FileStore;
  /** This install's URL-signing key (project/keys.ts). */
  urlKey: Uint8Array;
  /** [storage] file_size_limit. */
  fileSizeLimit: number;
  imageTransformation: boolean;
  /** [storage.vector]: vector buckets at /vector, or none (Fastify's 404). */
  vector: VectorLimits & { enabled: boolean };
  /** [storage.s3_protocol] on: the S3 endpoint at /s3 and what it checks signatures with. */
  s3?: S3Keys;
  /** The TUS routes (tus.ts), mounted at /upload/resumable (and /sign under it: signed). */
  resumable: (request: Request, caller: Caller, signed?: boolean) => Promise<Response>;
}

/** What list() may sort by (upstream's schema; list v2 has no last_accessed_at). */
const LIST_SORT_COLUMNS = ["name", "updated_at", "created_at", "last_accessed_at"];

/** Upstream's MAX_OBJECTS_PER_REQUEST: the most paths one request may sign. */
const MAX_OBJECTS_PER_REQUEST = 1000;

/** How long a signed upload URL lives: 2 hours, as storage-js documents it. */
const SIGNED_UPLOAD_EXPIRES_IN = 2 * 60 * 60;

type C = Context;

export function storageRoutes(ctx: StorageContext): Hono {
  const { db, files } = ctx;
  const app = new Hono();
  const limits = { globalFileSizeLimit: ctx.fileSizeLimit };

  app.onError((error, c) => {
    if (error instanceof StorageError) return error.response();
    if (error instanceof BodyError || error instanceof TransformationSchemaError)
      return validationError(error.message);
    // the client went away mid-body: nobody reads the answer (upstream's 499)
    if (c.req.raw.signal.aborted || (error as { code?: string }).code === "ECONNRESET")
      return Response.json({ error: "Request aborted", statusCode: "499" }, { status: 499 });
    console.error("[supabase-local] storage:", error);
    return ERRORS.internal().response();
  });
  app.notFound((c) =>
    routeNotFound(c.req.method, new URL(c.req.url).pathname.replace(/^\/storage\/v1/, "")),
  );

  if (ctx.vector.enabled) app.route("/vector", vectorRoutes(db, ctx.vector));
  if (ctx.s3)
    app.route("/s3", s3Routes({ db, files, fileSizeLimit: ctx.fileSizeLimit, ...ctx.s3 }));

  // ---- buckets
  app.get("/bucket", async (c) => {
    const caller = await callerOf(c.req.raw, OPERATIONS.listBuckets);
    const q = c.req.query();
    const rows = await buckets.listBuckets(db, caller, {
      limit: optionalInt(q.limit, "limit", 1),
      offset: optionalInt(q.offset, "offset", 0),
      sortColumn: q.sortColumn,
      sortOrder: q.sortOrder,
      search: q.search,
    });
    return c.json(rows.map(buckets.bucketJson));
  });
  app.get("/bucket/:id", async (c) => {
    const caller = await callerOf(c.req.raw, OPERATIONS.getBucket);
    return c.json(buckets.bucketJson(await buckets.getBucket(db, caller, c.req.param("id"))));
  });
  app.post("/bucket", async (c) => {
    const caller = await callerOf(c.req.raw, OPERATIONS.createBucket);
    const body = await objectBody(c);
    const name = requiredString(body, "name");
    await buckets.createBucket(
      db,
      caller,
      {
        id: optionalString(body, "id"),
        name,
        public: optionalBoolean(body, "public"),
        fileSizeLimit: sizeField(body.file_size_limit),
        allowedMimeTypes: mimeField(body.allowed_mime_types),
      },
      limits,
    );
    return c.json({ name });
  });
  app.put("/bucket/:id", async (c) => {
    const caller = await callerOf(c.req.raw, OPERATIONS.updateBucket);
    const body = await objectBody(c);
    await buckets.updateBucket(
      db,
      caller,
      c.req.param("id"),
      {
        public: optionalBoolean(body, "public"),
        fileSizeLimit: sizeField(body.file_size_limit),
        allowedMimeTypes: mimeField(body.allowed_mime_types),
      },
      limits,
    );
    return c.json({ message: "Successfully updated" });
  });
  app.post("/bucket/:id/empty", async (c) => {
    const caller = await callerOf(c.req.raw, OPERATIONS.emptyBucket);
    // the service role's alone (upstream's enforceJwtRoles, since v1.70.1): not a policy's call
    if (caller.role !== SERVICE_ROLE.role) {
      throw ERRORS.accessDeniedJwt("Access denied: Invalid role");
    }
    await buckets.emptyBucket(db, caller, c.req.param("id"), files);
    return c.json({ message: "Empty bucket has been queued. Completion may take up to an hour." });
  });
  app.delete("/bucket/:id", async (c) => {
    const caller = await callerOf(c.req.raw, OPERATIONS.deleteBucket);
    await buckets.deleteBucket(db, caller, c.req.param("id"));
    return c.json({ message: "Successfully deleted" });
  });

  // ---- objects: the fixed paths first (a bucket named "list" is upstream's problem too)
  app.post("/object/list/:bucket", async (c) => {
    const caller = await callerOf(c.req.raw, OPERATIONS.listObjects);
    const body = await objectBody(c);
    // upstream's schema, field by field in its order: a sortBy names one of its columns
    const prefix = requiredString(body, "prefix");
    const limit = optionalInteger(body, "limit", 1);
    const offset = optionalInteger(body, "offset", 0);
    const sortBy = objectField(body, "sortBy");
    const sort = sortBy && {
      column: oneOf(sortBy, "sortBy", "column", LIST_SORT_COLUMNS, true),
      order: oneOf(sortBy, "sortBy", "order", ["asc", "desc"]),
    };
    const search = optionalString(body, "search");
    return c.json(
      await objects.searchObjects(db, caller, c.req.param("bucket"), {
        prefix,
        limit,
        offset,
        search,
        sortBy: sort,
      }),
    );
  });
  app.post("/object/list-v2/:bucket", async (c) => {
    const caller = await callerOf(c.req.raw, OPERATIONS.listObjectsV2);
    const body = await objectBody(c);
    const sortBy = objectField(body, "sortBy");
    return c.json(
      await listObjectsV2(db, caller, c.req.param("bucket"), {
        prefix: optionalString(body, "prefix"),
        withDelimiter: optionalBoolean(body, "with_delimiter"),
        limit: optionalInteger(body, "limit", 1),
        cursor: optionalString(body, "cursor"),
        // upstream's schema: a column is required, and both are one of theirs
        sortBy: sortBy && {
          column: oneOf(sortBy, "sortBy", "column", ["name", "updated_at", "created_at"], true),
          order: oneOf(sortBy, "sortBy", "order", ["asc", "desc"]),
        },
      }),
    );
  });
  app.post("/object/move", async (c) => {
    const caller = await callerOf(c.req.raw, OPERATIONS.moveObject);
    const body = await objectBody(c);
    const bucketId = requiredString(body, "bucketId");
    await objects.moveObject(db, caller, {
      bucketId,
      sourceKey: requiredString(body, "sourceKey"),
      destinationBucket: optionalString(body, "destinationBucket") || bucketId,
      destinationKey: requiredString(body, "destinationKey"),
    });
    return c.json({ message: "Successfully moved" });
  });
  app.post("/object/copy", async (c) => {
    const caller = await callerOf(c.req.raw, OPERATIONS.copyObject);
    const body = await objectBody(c);
    const bucketId = requiredString(body, "bucketId");
    const destinationBucket = optionalString(body, "destinationBucket") || bucketId;
    const destinationKey = requiredString(body, "destinationKey");
    const metadata = objectField(body, "metadata");
    const userMetadata = c.req.header("x-metadata");
    const row = await objects.copyObject(db, caller, files, {
      bucketId,
      sourceKey: requiredString(body, "sourceKey"),
      destinationBucket,
      destinationKey,
      upsert: c.req.header("x-upsert") === "true",
      copyMetadata: optionalBoolean(body, "copyMetadata") ?? true,
      metadata: metadata && {
        cacheControl: optionalString(metadata, "cacheControl"),
        mimetype: optionalString(metadata, "mimetype"),
      },
      userMetadata: userMetadata ? parseMetadataHeader(userMetadata) : undefined,
    });
    return c.json({
      Id: row.id,
      Key: `${destinationBucket}/${destinationKey}`,
      ...objects.objectJson(row),
    });
  });

  // signed URLs: made for what the caller can read; used by anyone holding one
  app.post("/object/sign/:bucket", async (c) => {
    const caller = await callerOf(c.req.raw, OPERATIONS.signObjectUrls);
    const body = await objectBody(c);
    // upstream's schema: both required, then each in turn (1 to 1000 paths)
    requiredField(body, "expiresIn");
    requiredField(body, "paths");
    const expiresIn = mustBeValidExpiresIn(coercedInteger(body, "expiresIn", 1));
    const paths = coercedStrings(body, "paths", 1, MAX_OBJECTS_PER_REQUEST);
    const bucketId = c.req.param("bucket");
    const visible = await objects.visibleNames(db, caller, bucketId, paths);
    return c.json(
      await Promise.all(
        paths.map(async (path) => {
          if (!visible.has(path))
            return {
              error: "Either the object does not exist or you do not have access to it",
              path,
              signedURL: null,
            };
          const url = `${bucketId}/${path}`;
          const token = await signToken(ctx.urlKey, { url, scope: "download" }, expiresIn);
          return { error: null, path, signedURL: `/object/sign/${url}?token=${token}` };
        }),
      ),
    );
  });
  app.post("/object/sign/:bucket/*", async (c) => {
    const caller = await callerOf(c.req.raw, OPERATIONS.signObjectUrl);
    const { bucket, key } = target(c, "/object/sign/");
    const body = await objectBody(c);
    requiredField(body, "expiresIn");
    const expiresIn = mustBeValidExpiresIn(coercedInteger(body, "expiresIn", 1));
    const transform = objectField(body, "transform");
    // upstream's body schema checks the transform before anything else
    const transformations = transform
      ? transformationsFrom(transform, undefined, "body/transform")
      : undefined;
    await objects.mustSee(db, caller, bucket, key);
    const url = `${bucket}/${key}`;
    if (
      ctx.imageTransformation &&
      transform &&
      transformations &&
      Object.keys(transform).length > 0
    ) {
      const token = await signToken(
        ctx.urlKey,
        {
          transformations: transformations.key,
          format: transformations.format ?? "",
          url,
          scope: "download",
        },
        expiresIn,
      );
      return c.json({ signedURL: `/render/image/sign/${url}?token=${token}` });
    }
    const token = await signToken(ctx.urlKey, { url, scope: "download" }, expiresIn);
    return c.json({ signedURL: `/object/sign/${url}?token=${token}` });
  });
  const signedDownload = async (c: C, head: boolean) => {
    const { bucket, key } = target(c, "/object/sign/");
    const token = await verifyToken(
      ctx.urlKey,
      c.req.query("token"),
      `${bucket}/${key}`,
      "download",
    );
    const row = await objects.objectByOwner(db, bucket, key);
    return serveObject(c.req.raw, files, row, {
      download: c.req.query("download"),
      expires: new Date(token.exp * 1000),
      head,
    });
  };
  // (Hono answers HEAD with the GET route, dropping the body: the handlers open no file for it;
  // here as upstream's, whose HEAD is Fastify's copy of the GET route, X-Robots-Tag and all)
  app.get("/object/sign/:bucket/*", (c) => signedDownload(c, isHead(c)));

  // signed upload URLs: insert rights to make one, nothing to use one
  app.post("/object/upload/sign/:bucket/*", async (c) => {
    const caller = await callerOf(c.req.raw, OPERATIONS.signUploadUrl);
    const { bucket, key } = target(c, "/object/upload/sign/");
    const upsert = c.req.header("x-upsert") === "true";
    const userMetadata = c.req.header("x-metadata");
    await objects.bucketForObjects(db, bucket);
    await objects.canUpload(
      db,
      caller,
      {
        bucketId: bucket,
        name: key,
        owner: caller.owner,
        upsert,
        userMetadata: userMetadata ? parseMetadataHeader(userMetadata) : undefined,
      },
      { mimetype: c.req.header("content-type") },
    );
    const url = `${bucket}/${key}`;
    const token = await signToken(
      ctx.urlKey,
      { owner: caller.owner, url, upsert, scope: "upload" },
      SIGNED_UPLOAD_EXPIRES_IN,
    );
    return c.json({ url: `/object/upload/sign/${url}?token=${token}`, token });
  });
  app.put("/object/upload/sign/:bucket/*", async (c) => {
    const { bucket, key } = target(c, "/object/upload/sign/");
    const token = await verifyToken(ctx.urlKey, c.req.query("token"), `${bucket}/${key}`, "upload");
    if (token.exp * 1000 < Date.now()) throw ERRORS.expiredSignature();
    // as upstream's superuser: the token stands for the rights checked when it was made
    const uploader = inRequest(SERVICE_ROLE, c.req.raw, OPERATIONS.uploadSignedObject);
    const row = await upload(c, uploader, bucket, key, {
      upsert: token.upsert === true,
      owner: token.owner,
    });
    return c.json({ Key: `${bucket}/${row.name}` });
  });

  // public objects and info (a HEAD here is upstream's object-info route: X-Robots-Tag none)
  const publicObject = async (c: C, head: boolean) => {
    const { bucket, key } = target(c, "/object/public/");
    const row = await objects.objectForRead(db, ANON_PUBLIC, bucket, key, { publicOnly: true });
    return serveObject(c.req.raw, files, row, {
      download: c.req.query("download"),
      head,
      infoHead: head,
    });
  };
  app.get("/object/public/:bucket/*", (c) => publicObject(c, isHead(c)));
  app.get("/object/info/public/:bucket/*", async (c) => {
    const { bucket, key } = target(c, "/object/info/public/");
    const row = await objects.objectForRead(db, ANON_PUBLIC, bucket, key, { publicOnly: true });
    return info(row);
  });
  app.get("/object/info/authenticated/:bucket/*", async (c) => {
    const caller = await callerOf(c.req.raw, OPERATIONS.getAuthObjectInfo);
    const { bucket, key } = target(c, "/object/info/authenticated/");
    return info(await objects.objectForRead(db, caller, bucket, key));
  });
  app.get("/object/info/:bucket/*", async (c) => {
    const caller = await callerOf(c.req.raw, OPERATIONS.getAuthObjectInfo, true);
    const { bucket, key } = target(c, "/object/info/");
    return info(await objects.objectForRead(db, caller, bucket, key));
  });

  // authenticated objects (a HEAD as for public ones: upstream's object-info route, its operation)
  const download = async (c: C, prefix: string, lenient: boolean, head: boolean) => {
    const operation = head ? OPERATIONS.headAuthObjectInfo : OPERATIONS.getAuthObject;
    const caller = await callerOf(c.req.raw, operation, lenient);
    const { bucket, key } = target(c, prefix);
    const row = await objects.objectForRead(db, caller, bucket, key);
    return serveObject(c.req.raw, files, row, {
      download: c.req.query("download"),
      head,
      infoHead: head,
    });
  };
  app.get("/object/authenticated/:bucket/*", (c) =>
    download(c, "/object/authenticated/", false, isHead(c)),
  );
  app.get("/object/:bucket/*", (c) => download(c, "/object/", true, isHead(c)));

  // (the batch remove before the single one: `/*` also matches an empty key)
  app.delete("/object/:bucket", async (c) => {
    const caller = await callerOf(c.req.raw, OPERATIONS.deleteObjects);
    const body = await objectBody(c);
    const prefixes = body.prefixes;
    if (
      !Array.isArray(prefixes) ||
      prefixes.length < 1 ||
      prefixes.some((p) => typeof p !== "string")
    )
      throw new BodyError("body/prefixes must NOT have fewer than 1 items");
    const rows = await objects.removeObjects(db, caller, files, c.req.param("bucket"), prefixes);
    return c.json(rows.map(objects.objectJson));
  });

  app.post("/object/:bucket/*", async (c) => {
    const caller = await callerOf(c.req.raw, OPERATIONS.createObject);
    const { bucket, key } = target(c, "/object/");
    const row = await upload(c, caller, bucket, key, {
      upsert: c.req.header("x-upsert") === "true",
      owner: caller.owner,
    });
    return c.json({ Id: row.id, Key: `${bucket}/${row.name}` });
  });
  app.put("/object/:bucket/*", async (c) => {
    const caller = await callerOf(c.req.raw, OPERATIONS.updateObject);
    const { bucket, key } = target(c, "/object/");
    const row = await upload(c, caller, bucket, key, { upsert: true, owner: caller.owner });
    return c.json({ Id: row.id, Key: `${bucket}/${row.name}` });
  });
  app.delete("/object/:bucket/*", async (c) => {
    const caller = await callerOf(c.req.raw, OPERATIONS.deleteObject);
    const { bucket, key } = target(c, "/object/");
    await objects.removeObject(db, caller, files, bucket, key);
    return c.json({ message: "Successfully deleted" });
  });
  // ---- image transformations (transforms.ts), only with [storage.image_transformation] on
  const render = async (c: C, kind: "authenticated" | "public" | "sign") => {
    if (!ctx.imageTransformation) return featureNotEnabled();
    const { bucket, key } = target(c, `/render/image/${kind}/`);
    let row: objects.ObjectRow;
    let transformations: Transformations;
    let expires: Date | undefined;
    if (kind === "sign") {
      const token = await verifyToken(
        ctx.urlKey,
        c.req.query("token"),
        `${bucket}/${key}`,
        "download",
      );
      row = await objects.objectByOwner(db, bucket, key);
      transformations = transformationsFromToken(token.transformations, token.format);
      expires = new Date(token.exp * 1000);
    } else if (kind === "public") {
      row = await objects.objectForRead(db, ANON_PUBLIC, bucket, key, { publicOnly: true });
      transformations = transformationsFrom(c.req.query());
    } else {
      // unlike a download, upstream's authenticated render skips the bucket: the caller reads
      // the object under RLS, in a public bucket too
      const caller = await callerOf(c.req.raw, OPERATIONS.renderAuthImage);
      row = await objects.objectAsCaller(db, caller, bucket, key);
      transformations = transformationsFrom(c.req.query());
    }
    return renderImage(c.req.raw, files, row, transformations, {
      download: c.req.query("download"),
      expires,
    });
  };
  app.get("/render/image/authenticated/:bucket/*", (c) => render(c, "authenticated"));
  app.get("/render/image/public/:bucket/*", (c) => render(c, "public"));
  app.get("/render/image/sign/:bucket/*", (c) => render(c, "sign"));

  // ---- resumable uploads (tus.ts)
  // a signed upload URL's token in x-signature stands for the caller (checked by tus.ts)
  const signedTus = (c: C) =>
    ctx.resumable(c.req.raw, inRequest(ANON, c.req.raw, tusOperation(c.req.method, true)), true);
  app.all("/upload/resumable/sign", signedTus);
  app.all("/upload/resumable/sign/*", signedTus);
  app.all("/upload/resumable", async (c) => ctx.resumable(c.req.raw, await tusCaller(c)));
  app.all("/upload/resumable/*", async (c) => ctx.resumable(c.req.raw, await tusCaller(c)));

  // anything else: Fastify's 404 (a mounted app's notFound is not called, so a route of its own)
  app.all("*", (c) =>
    routeNotFound(c.req.method, new URL(c.req.url).pathname.replace(/^\/storage\/v1/, "")),
  );

  /** An upload's bytes into the file store, then its row, once the caller may write it. */
  async function upload(
    c: C,
    caller: Caller,
    bucketId: string,
    key: string,
    options: { upsert: boolean; owner?: string },
  ): Promise<objects.ObjectRow> {
    mustBeValidKey(key);
    const bucket = await objects.bucketForObjects(db, bucketId);
    const file = await readUpload(
      c.req.raw,
      key,
      {
        bucketLimit: bucket.file_size_limit,
        globalLimit: ctx.fileSizeLimit,
        allowedMimeTypes: bucket.allowed_mime_types,
      },
      c.env.incoming,
    );
    const uploadTarget: objects.UploadTarget = {
      bucketId,
      name: key,
      owner: options.owner,
      upsert: options.upsert,
      userMetadata: file.userMetadata,
    };
    try {
      const declared = Number(c.req.header("content-length"));
      await objects.canUpload(db, caller, uploadTarget, {
        mimetype: file.mimeType,
        cacheControl: file.cacheControl,
        ...(Number.isFinite(declared) ? { contentLength: declared } : {}),
      });
      const written = await files.write(file.body, file.limit, { ownChunks: file.ownChunks });
      return await objects.completeUpload(db, files, uploadTarget, written, file);
    } finally {
      file.discard();
    }
  }

  return app;
}

/** A caller of the public routes: anyone, even without a token (only public buckets). */
const ANON_PUBLIC: Caller = ANON;

/** TUS requests carry the caller's token like any upload (a preflight none). */
async function tusCaller(c: C): Promise<Caller> {
  const operation = tusOperation(c.req.method, false);
  if (c.req.method === "OPTIONS") return inRequest(ANON, c.req.raw, operation);
  return callerOf(c.req.raw, operation);
}

function isHead(c: C): boolean {
  return c.req.raw.method === "HEAD";
}

/** The bucket and the key (percent-decoded) of `/<prefix><bucket>/<key>`. */
function target(c: C, prefix: string): { bucket: string; key: string } {
  const path = new URL(c.req.url).pathname;
  const start = path.indexOf(prefix);
  const rest = path.slice(start + prefix.length);
  const slash = rest.indexOf("/");
  let bucket: string;
  let key: string;
  try {
    bucket = decodeURIComponent(slash === -1 ? rest : rest.slice(0, slash));
    key = slash === -1 ? "" : decodeURIComponent(rest.slice(slash + 1));
  } catch {
    throw ERRORS.invalidKey(rest);
  }
  mustBeValidBucketName(bucket);
  return { bucket, key };
}

function info(row: objects.ObjectRow): Response {
  const metadata = row.metadata;
  const headers = new Headers({ "Content-Type": "application/json" });
  if (metadata?.eTag) headers.set("ETag", metadata.eTag);
  if (metadata?.cacheControl) headers.set("Cache-Control", metadata.cacheControl);
  if (metadata?.lastModified)
    headers.set("Last-Modified", new Date(metadata.lastModified).toUTCString());
  return new Response(JSON.stringify(infoJson(row)), { headers });
}

function parseMetadataHeader(value: string): Record<string, unknown> | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(value, "base64").toString("utf8"));
    return parsed && typeof parsed === "object" ? parsed : undefined;
  } catch {
    return undefined;
  }
}

type Body = Record<string, unknown>;

/** A route's body, which upstream's schemas all want to be an object. */
async function objectBody(c: C): Promise<Body> {
  const body = await jsonBody(c.req.raw);
  if (!body || typeof body !== "object" || Array.isArray(body))
    throw new BodyError("body must be object");
  return body as Body;
}

function requiredField(body: Body, name: string): unknown {
  if (body[name] === undefined) throw new BodyError(`body must have required property '${name}'`);
  return body[name];
}

function requiredString(body: Body, name: string): string {
  const value = requiredField(body, name);
  if (typeof value !== "string") throw new BodyError(`body/${name} must be string`);
  return value;
}

function optionalString(body: Body, name: string): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new BodyError(`body/${name} must be string`);
  return value;
}

/** `object[name]`, one of `values` (an object field at `path` of the body, as Fastify's messages). */
function oneOf(
  object: Body,
  path: string,
  name: string,
  values: string[],
  required = false,
): string | undefined {
  const value = object[name];
  if (value === undefined) {
    if (required) throw new BodyError(`body/${path} must have required property '${name}'`);
    return undefined;
  }
  if (typeof value !== "string") throw new BodyError(`body/${path}/${name} must be string`);
  if (!values.includes(value))
    throw new BodyError(`body/${path}/${name} must be equal to one of the allowed values`);
  return value;
}

// Upstream's Fastify validates with Ajv's coerceTypes "array": a field of the wrong type is
// converted where Ajv knows how before its type is refused (so {"expiresIn":"60"} signs for a
// minute): a one-item array stands for its item and a lone scalar for an array of it; a numeric
// string, a boolean or null stands for a number, and a number, a boolean or null for a string.

/** A required integer field of at least `min`, coerced as Fastify's Ajv coerces it. */
function coercedInteger(body: Body, name: string, min: number): number {
  let value = body[name];
  if (!Number.isInteger(value) && Array.isArray(value) && value.length === 1) value = value[0];
  if (!Number.isInteger(value)) value = numberFrom(value);
  if (typeof value !== "number") throw new BodyError(`body/${name} must be integer`);
  // only a string can become an infinity ("Infinity", "1e400"), for upstream's own finite
  // keyword (checked before the minimum) to refuse: a JSON number past range is no integer
  if (!Number.isFinite(value))
    throw new BodyError(`body/${name} must pass "finite" keyword validation`);
  if (value < min) throw new BodyError(`body/${name} must be >= ${min}`);
  return value;
}

/** Ajv's integer from a scalar of another type: undefined when there is none. */
function numberFrom(value: unknown): number | undefined {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value === null) return 0;
  if (typeof value !== "string" || value === "") return undefined;
  const n = Number(value);
  if (Number.isNaN(n)) return undefined;
  // Ajv's `!(value % 1)`: an infinity has no fraction either
  return Number.isInteger(n) || !Number.isFinite(n) ? n : undefined;
}

/** A required array field of `min` to `max` strings, coerced as Fastify's Ajv coerces it. */
function coercedStrings(body: Body, name: string, min: number, max: number): string[] {
  let value = body[name];
  if (!Array.isArray(value)) {
    if (value !== null && typeof value === "object")
      throw new BodyError(`body/${name} must be array`);
    value = [value];
  }
  const items = value as unknown[];
  if (items.length < min) throw new BodyError(`body/${name} must NOT have fewer than ${min} items`);
  if (items.length > max) throw new BodyError(`body/${name} must NOT have more than ${max} items`);
  return items.map((item, i) => {
    const one = Array.isArray(item) && item.length === 1 ? item[0] : item;
    if (typeof one === "string") return one;
    if (one === null) return "";
    if (typeof one === "number" || typeof one === "boolean") return String(one);
    throw new BodyError(`body/${name}/${i} must be string`);
  });
}

function optionalInteger(body: Body, name: string, min: number): number | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value))
    throw new BodyError(`body/${name} must be integer`);
  if (value < min) throw new BodyError(`body/${name} must be >= ${min}`);
  return Math.min(value, 2 ** 31 - 1);
}

function optionalBoolean(body: Body, name: string): boolean | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") throw new BodyError(`body/${name} must be boolean`);
  return value;
}

function objectField(body: Body, name: string): Body | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value))
    throw new BodyError(`body/${name} must be object`);
  return value as Body;
}

function sizeField(value: unknown): number | string | null | undefined {
  if (value === undefined || value === null) return value;
  if (typeof value === "number" && Number.isInteger(value) && value >= 0) return value;
  if (typeof value === "string") return value;
  throw new BodyError("body/file_size_limit must be integer");
}

function mimeField(value: unknown): string[] | null | undefined {
  if (value === undefined || value === null) return value;
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string"))
    throw new BodyError("body/allowed_mime_types must be array");
  return value as string[];
}

function optionalInt(value: string | undefined, name: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new BodyError(`querystring/${name} must be >= ${min}`);
  return n;
}

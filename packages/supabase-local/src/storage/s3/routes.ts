// Storage's S3 endpoint at /storage/v1/s3 (decision 051), as upstream serves it with
// [storage.s3_protocol] on (supabase/storage v1.70.6, http/routes/s3): path-style requests signed
// with SigV4 (signature.ts) by the CLI's access key (the service role) or by the project's `stub`
// tenant and anon key with a user's JWT as the session token (that user, under RLS). Each request
// is matched to its S3 operation by method, path and query (and a copy's header), in upstream's
// order, then made with the same bucket and object logic as the JSON routes, so policies decide
// alike. Answers are S3's XML (xml.ts) or an object's bytes; errors are S3's <Error> with the real
// status. Multipart uploads live in multipart.ts, a POST upload's signed policy in post-policy.ts.
import { Readable } from "node:stream";
import type { PGlite } from "@electric-sql/pglite";
import { type Context, Hono } from "hono";
import { requestContext } from "../../http/context.ts";
import { type Claims, isHs256, JwtRejected } from "../../http/jwt.ts";
import * as buckets from "../buckets.ts";
import { type Caller, callerFromClaims, inRequest, joseMessage } from "../caller.ts";
import { ERRORS, fromDatabaseError, StorageError } from "../errors.ts";
import type { FileStore } from "../file-store.ts";
import {
  isEmptyFolder,
  mustBeAllowedMimeType,
  mustBeValidBucketName,
  mustBeValidKey,
} from "../names.ts";
import * as objects from "../objects.ts";
import { OPERATIONS } from "../operations.ts";
import { serveObject } from "../serve.ts";
import { firstFilePart, uploadLimit } from "../upload.ts";
import { decodeChunked, isChunked } from "./chunked-body.ts";
import { S3_CREDENTIALS, TENANT_ID } from "./credentials.ts";
import { amzMetadata, copySource, metadataHeaders } from "./headers.ts";
import { continuationToken, fromContinuationToken, listPage } from "./list.ts";
import * as multipart from "./multipart.ts";
import { checkPolicy, entityTooSmall } from "./post-policy.ts";
import {
  type ClientSignature,
  chunkSignature,
  clientSignature,
  formSignature,
  type ServerCredentials,
  verifyPolicySignature,
  verifySignature,
} from "./signature.ts";
import { xmlBody, xmlError, xmlResponse } from "./xml.ts";

export interface S3Keys {
  /** The legacy anon JWT: a session token's requests are signed with it. */
  anonKey: string;
  /** The legacy service_role JWT: the access key's requests act with it. */
  serviceRoleKey: string;
  /** Verifies a session token as the gateway verifies a bearer (http/jwt.ts). */
  verifyJwt(token: string): Promise<Claims>;
}

export interface S3Context extends S3Keys {
  db: PGlite;
  files: FileStore;
  /** [storage] file_size_limit. */
  fileSizeLimit: number;
}

type C = Context;
type Operation = (c: C, target: Target) => Promise<Response>;

/** What the path names: a bucket or not, a key or not (both percent-decoded). */
interface Target {
  bucket?: string;
  key?: string;
  url: URL;
  /** The path as sent (rawPath). */
  path: string;
}

export function s3Routes(ctx: S3Context): Hono {
  const { db, files } = ctx;
  const app = new Hono();
  const limits = { globalFileSizeLimit: ctx.fileSizeLimit };

  /** The caller a header's or a presigned URL's signature stands for, once it verifies. */
  async function callerOf(
    c: C,
    t: Target,
    operation: string,
  ): Promise<{ caller: Caller; signature: ClientSignature }> {
    const signature = clientSignature(c.req.raw, t.url);
    notFromElsewhere(c, signature);
    if (!verifySignature(signature, c.req.raw, t.url, credentialsFor(signature), t.path))
      throw mismatch(signature);
    return { caller: await callerFor(c, signature, operation), signature };
  }

  /** The CLI's S3 keys are public, and the JWT secret too: neither from another website's page. */
  function notFromElsewhere(c: C, signature: ClientSignature): void {
    if (
      requestContext(c.req.raw).elsewhere &&
      (!signature.sessionToken || isHs256(signature.sessionToken))
    )
      throw ERRORS.accessDenied(
        "Forbidden use of the local S3 access keys or an HS256 JWT from another origin",
      );
  }

  function mismatch(signature: ClientSignature): StorageError {
    return ERRORS.signatureDoesNotMatch(
      signature.sessionToken
        ? "The request signature we calculated does not match the signature you provided, Check your credentials. The session token should be a valid JWT token"
        : "The request signature we calculated does not match the signature you provided. Check your key and signing method.",
    );
  }

  /** Who a verified signature stands for: its session token's user, or the service role. */
  async function callerFor(c: C, signature: ClientSignature, operation: string): Promise<Caller> {
    const token = signature.sessionToken ?? ctx.serviceRoleKey;
    let claims: Claims;
    try {
      claims = await ctx.verifyJwt(token);
    } catch (error) {
      // upstream's verifyJWT: AccessDenied, in jose's words
      if (error instanceof JwtRejected) throw ERRORS.accessDenied(joseMessage(error));
      throw error;
    }
    return inRequest(callerFromClaims(claims, token), c.req.raw, operation);
  }

  function credentialsFor(signature: ClientSignature): ServerCredentials {
    return signature.sessionToken
      ? { accessKey: TENANT_ID, secretKey: ctx.anonKey, region: S3_CREDENTIALS.region }
      : {
          accessKey: S3_CREDENTIALS.accessKeyId,
          secretKey: S3_CREDENTIALS.secretAccessKey,
          region: S3_CREDENTIALS.region,
        };
  }

  /** The body's bytes: decoded and each chunk's signature checked when it is aws-chunked. */
  function bodyOf(c: C, signature: ClientSignature): AsyncIterable<Uint8Array> {
    const raw: AsyncIterable<Uint8Array> =
      (c.env as { incoming?: AsyncIterable<Uint8Array> } | undefined)?.incoming ??
      (c.req.raw.body as unknown as AsyncIterable<Uint8Array> | null) ??
      emptyBody();
    const sha = c.req.header("x-amz-content-sha256");
    if (!isChunked(sha)) return raw;
    const secret = credentialsFor(signature).secretKey;
    return decodeChunked(raw, sha as string, {
      seed: signature.signature,
      sign: (previous, hash) => chunkSignature(signature, secret, previous, hash),
    });
  }

  /**
   * An object's bytes stored as PutObject stores them: the key and the bucket's types and size
   * checked, the write allowed as the caller (an upsert), the bytes streamed to the file store,
   * then the row. A key ending in "/" with no bytes is a folder's placeholder, as upstream makes it.
   */
  async function store(
    caller: Caller,
    bucketId: string,
    requestedKey: string,
    body: AsyncIterable<Uint8Array>,
    options: {
      mimeType?: string;
      cacheControl?: string;
      userMetadata?: Record<string, string>;
      /** The length the client declares, when it does. */
      declared?: number;
      /** A POST policy's content-length-range. */
      min?: number;
      max?: number;
    },
  ): Promise<Response> {
    let key = requestedKey;
    if (key.endsWith("/") && options.declared === 0) key += ".emptyFolderPlaceholder";
    mustBeValidKey(key);
    const bucket = await objects.bucketForObjects(db, bucketId);
    const mimeType = options.mimeType || "application/octet-stream";
    if (bucket.allowed_mime_types?.length && !isEmptyFolder(key))
      mustBeAllowedMimeType(mimeType, bucket.allowed_mime_types);
    const bucketLimit = isEmptyFolder(key)
      ? 0
      : uploadLimit({ bucketLimit: bucket.file_size_limit, globalLimit: ctx.fileSizeLimit });
    const limit = Math.min(bucketLimit, options.max ?? Number.POSITIVE_INFINITY);
    if (options.declared !== undefined && options.declared > limit) throw ERRORS.entityTooLarge();
    const cacheControl = options.cacheControl || "no-cache";
    const target: objects.UploadTarget = {
      bucketId,
      name: key,
      owner: caller.owner,
      upsert: true,
      userMetadata: options.userMetadata,
    };
    await objects.canUpload(db, caller, target, {
      mimetype: mimeType,
      cacheControl,
      ...(options.declared !== undefined ? { contentLength: options.declared } : {}),
    });
    const written = await files.write(body, limit);
    if (options.min !== undefined && written.size < options.min) {
      await files.remove([written.version]);
      throw entityTooSmall();
    }
    const row = await objects.completeUpload(db, files, target, written, {
      mimeType,
      cacheControl,
    });
    return new Response(null, { status: 200, headers: { ETag: row.metadata?.eTag ?? "" } });
  }

  // ---- the operations, each given its caller by `signed` below
  const routes = {
    async listBuckets(caller: Caller) {
      const rows = await buckets.listBuckets(db, caller, {});
      return xmlResponse({
        ListAllMyBucketsResult: {
          Buckets: {
            Bucket: rows.map((b) => ({
              Name: b.name,
              CreationDate: b.created_at ? new Date(b.created_at).toISOString() : undefined,
            })),
          },
        },
      });
    },
    async createBucket(caller: Caller, c: C, t: Target) {
      const name = t.bucket as string;
      await buckets.createBucket(
        db,
        caller,
        { id: name, name, public: c.req.header("x-amz-acl") === "public-read" },
        limits,
      );
      return new Response(null, { status: 200, headers: { Location: `/${name}` } });
    },
    async deleteBucket(caller: Caller, _c: C, t: Target) {
      await buckets.deleteBucket(db, caller, t.bucket as string);
      return new Response(null, { status: 204 });
    },
    async headBucket(caller: Caller, _c: C, t: Target) {
      await buckets.getBucket(db, caller, t.bucket as string);
      return new Response(null, {
        status: 200,
        headers: { "x-amz-bucket-region": S3_CREDENTIALS.region },
      });
    },
    async getBucketLocation() {
      return xmlResponse({ LocationConstraint: S3_CREDENTIALS.region });
    },
    async getBucketVersioning() {
      return xmlResponse({
        VersioningConfiguration: { Status: "Suspended", MfaDelete: "Disabled" },
      });
    },
    async listObjects(caller: Caller, _c: C, t: Target, v2: boolean) {
      const q = t.url.searchParams;
      const bucket = t.bucket as string;
      await objects.bucketForObjects(db, bucket);
      const prefix = q.get("prefix") ?? "";
      const delimiter = q.get("delimiter") || undefined;
      const encoding = q.get("encoding-type") ?? undefined;
      if (encoding !== undefined && encoding !== "url")
        throw ERRORS.invalidRequest(
          "Querystring, encoding-type must be equal to one of the allowed values",
        );
      const maxKeysParam = q.get("max-keys");
      let maxKeys = 1000;
      if (maxKeysParam !== null) {
        const n = Number(maxKeysParam);
        if (maxKeysParam === "" || !Number.isInteger(n))
          throw ERRORS.invalidRequest("Querystring, max-keys must be integer");
        if (n < 0) throw ERRORS.invalidRequest("Querystring, max-keys must be >= 0");
        maxKeys = Math.min(n || 1000, 1000);
      }
      const token = v2 ? q.get("continuation-token") : null;
      const startAfter = (v2 ? q.get("start-after") : q.get("marker")) || undefined;
      const page = await listPage(db, caller, bucket, {
        prefix,
        delimiter,
        maxKeys,
        after: token ? fromContinuationToken(token) : startAfter,
      });
      const encode = (value: string) =>
        encoding === "url" ? encodeURIComponent(value).replace(/%2F/g, "/") : value;
      const contents = page.objects.map((o) => ({
        Key: encode(o.key),
        LastModified: o.lastModified ? new Date(o.lastModified).toISOString() : undefined,
        ETag: o.eTag,
        Size: o.size,
        StorageClass: "STANDARD",
      }));
      const commonPrefixes = page.prefixes.map((p) => ({ Prefix: encode(p) }));
      const next = page.truncated && page.last !== undefined ? page.last : undefined;
      if (v2)
        return xmlResponse({
          ListBucketResult: {
            Name: bucket,
            Prefix: encode(prefix),
            ContinuationToken: token ?? undefined,
            Contents: contents,
            IsTruncated: page.truncated,
            MaxKeys: maxKeys,
            Delimiter: delimiter && encode(delimiter),
            EncodingType: encoding,
            KeyCount: contents.length + commonPrefixes.length,
            CommonPrefixes: commonPrefixes,
            NextContinuationToken: next && continuationToken(next),
          },
        });
      return xmlResponse({
        ListBucketResult: {
          Name: bucket,
          Prefix: encode(prefix),
          Marker: next && encode(next),
          // only when truncated and with a delimiter, as S3's V1 reference says
          NextMarker: next && delimiter ? encode(next) : undefined,
          MaxKeys: maxKeys,
          IsTruncated: page.truncated,
          Contents: contents,
          CommonPrefixes: commonPrefixes,
          EncodingType: encoding,
        },
      });
    },
    async putObject(caller: Caller, c: C, t: Target, signature: ClientSignature) {
      return store(caller, t.bucket as string, t.key as string, bodyOf(c, signature), {
        mimeType: c.req.header("content-type"),
        cacheControl: c.req.header("cache-control"),
        userMetadata: amzMetadata(c.req.raw.headers),
        declared: declaredLength(c),
      });
    },
    /** A POST upload: the form's signed policy is its signature (post-policy.ts). */
    async postObject(c: C, t: Target) {
      const bucketId = t.bucket as string;
      const incoming = (c.env as { incoming?: Readable } | undefined)?.incoming;
      const source =
        incoming ??
        (c.req.raw.body
          ? Readable.fromWeb(c.req.raw.body as import("node:stream/web").ReadableStream)
          : Readable.from([]));
      const part = await firstFilePart(source, c.req.header("content-type") ?? "", {
        fields: 20,
        fieldSize: 64 * 1024,
      });
      try {
        const fields: Record<string, string> = {};
        for (const name of part.names) {
          const lower = name.toLowerCase();
          if (lower in fields)
            throw ERRORS.invalidSignature("Duplicate form field in POST policy request");
          fields[lower] = part.fields[name] as string;
        }
        const signature = formSignature(part.fields);
        notFromElsewhere(c, signature);
        if (!verifyPolicySignature(signature, signature.policy, credentialsFor(signature)))
          throw mismatch(signature);
        const limits = checkPolicy(signature.policy, fields, bucketId);
        const caller = await callerFor(c, signature, OPERATIONS.s3.upload);
        const metadata: Record<string, string> = {};
        for (const [name, value] of Object.entries(fields))
          if (name.startsWith("x-amz-meta-")) metadata[name.slice("x-amz-meta-".length)] = value;
        return await store(caller, bucketId, fields.key ?? "", part.body, {
          mimeType: fields["content-type"],
          cacheControl: fields["cache-control"],
          userMetadata: Object.keys(metadata).length ? metadata : undefined,
          ...limits,
        });
      } finally {
        part.discard();
      }
    },
    async getObject(caller: Caller, c: C, t: Target, head: boolean) {
      const row = await objects.objectAsCaller(db, caller, t.bucket as string, t.key as string);
      const response = serveObject(c.req.raw, files, row, { head });
      const headers = new Headers(response.headers);
      for (const [name, value] of Object.entries(metadataHeaders(row.user_metadata)))
        headers.set(name, value);
      if (!head) {
        const q = t.url.searchParams;
        for (const [param, header] of RESPONSE_OVERRIDES) {
          const value = q.get(param);
          if (value && isHeaderValue(value)) headers.set(header, value);
        }
      }
      return new Response(response.body, { status: response.status, headers });
    },
    async getObjectTagging(caller: Caller, _c: C, t: Target) {
      await objects.objectAsCaller(db, caller, t.bucket as string, t.key as string);
      return xmlResponse({ Tagging: { TagSet: null } });
    },
    async deleteObject(caller: Caller, _c: C, t: Target) {
      try {
        await objects.removeObject(db, caller, files, t.bucket as string, t.key as string);
      } catch (error) {
        if (!(error instanceof StorageError && error.code === "NoSuchKey")) throw error;
        // S3 answers a key that is not there as deleted: only a missing bucket is an error
        await objects.bucketForObjects(db, t.bucket as string);
      }
      return new Response(null, { status: 204 });
    },
    async deleteObjects(caller: Caller, c: C, t: Target) {
      const bucket = t.bucket as string;
      const body = (await xmlBody(c.req.raw)) ?? {};
      const del = body.Delete as { Object?: Array<{ Key?: unknown }> } | undefined;
      if (!del || typeof del !== "object")
        throw ERRORS.invalidRequest("Body must have required property 'Delete'");
      if (!Array.isArray(del.Object))
        throw ERRORS.invalidRequest("Body, Delete must have required property 'Object'");
      if (del.Object.length > 1000)
        throw ERRORS.invalidRequest("Body, Delete, Object must NOT have more than 1000 items");
      const requested = del.Object.map((o, i) => {
        if (typeof o !== "object" || o === null || typeof o.Key !== "string")
          throw ERRORS.invalidRequest(
            `Body, Delete, Object, ${i} must have required property 'Key'`,
          );
        return o.Key;
      });
      const removed = await objects.removeObjects(db, caller, files, bucket, requested);
      const deleted = new Set(removed.map((r) => r.name));
      const left = requested.filter((k) => !deleted.has(k));
      const remaining = new Set(left.length ? await objects.existingNames(db, bucket, left) : []);
      if (deleted.size === 0 && remaining.size === 0) await objects.bucketForObjects(db, bucket);
      return xmlResponse({
        DeleteResult: {
          Deleted: requested.filter((k) => !remaining.has(k)).map((Key) => ({ Key })),
          Error: requested
            .filter((k) => remaining.has(k))
            .map((Key) => ({ Key, Code: "AccessDenied", Message: "Access Denied" })),
        },
      });
    },
    async copyObject(caller: Caller, c: C, t: Target) {
      const header = c.req.header("x-amz-copy-source") as string;
      const source = copySource(header);
      if (!source) throw ERRORS.invalidKey(header);
      if (!source.bucket) throw ERRORS.invalidBucketName();
      if (!source.key) throw ERRORS.missingParameter("CopySource");
      const directive = c.req.header("x-amz-metadata-directive") || "COPY";
      const row = await objects.copyObject(db, caller, files, {
        bucketId: source.bucket,
        sourceKey: source.key,
        destinationBucket: t.bucket as string,
        destinationKey: t.key as string,
        upsert: true,
        copyMetadata: directive === "COPY",
        metadata: {
          cacheControl: c.req.header("cache-control") || undefined,
          mimetype: c.req.header("content-type") || undefined,
        },
        userMetadata: directive === "COPY" ? undefined : amzMetadata(c.req.raw.headers),
      });
      const metadata = row.metadata;
      return xmlResponse({
        CopyObjectResult: {
          ETag: metadata?.eTag,
          LastModified: metadata?.lastModified
            ? new Date(metadata.lastModified).toISOString()
            : undefined,
        },
      });
    },
  };

  const uploads = multipart.multipartRoutes({ db, files, fileSizeLimit: ctx.fileSizeLimit });

  /** An operation made by the caller the request's signature stands for. */
  const signed =
    (
      operation: string,
      run: (caller: Caller, c: C, t: Target, signature: ClientSignature) => Promise<Response>,
    ): Operation =>
    async (c, t) => {
      const { caller, signature } = await callerOf(c, t, operation);
      return run(caller, c, t, signature);
    };

  const S3 = OPERATIONS.s3;
  /** Upstream's route table, in its order: the first whose query (and header) match answers. */
  const table: Record<string, Array<[(t: Target, c: C) => boolean, Operation]>> = {
    GET: [
      [(t) => !t.bucket, signed(S3.listBuckets, (caller) => routes.listBuckets(caller))],
      [
        (t) => bucketOnly(t) && has(t, "location"),
        signed(S3.getBucketLocation, () => routes.getBucketLocation()),
      ],
      [
        (t) => bucketOnly(t) && has(t, "versioning"),
        signed(S3.getBucketVersioning, () => routes.getBucketVersioning()),
      ],
      [(t) => bucketOnly(t) && has(t, "uploads"), signed(S3.listMultipart, uploads.listUploads)],
      [
        (t) => bucketOnly(t) && t.url.searchParams.get("list-type") === "2",
        signed(S3.listObjects, (caller, c, t) => routes.listObjects(caller, c, t, true)),
      ],
      [
        (t) => bucketOnly(t),
        signed(S3.listObjects, (caller, c, t) => routes.listObjects(caller, c, t, false)),
      ],
      [(t) => has(t, "uploadId"), signed(S3.listParts, uploads.listParts)],
      [(t) => has(t, "tagging"), signed(S3.getObjectTagging, routes.getObjectTagging)],
      [() => true, signed(S3.getObject, (caller, c, t) => routes.getObject(caller, c, t, false))],
    ],
    HEAD: [
      [(t) => bucketOnly(t), signed(S3.headBucket, routes.headBucket)],
      [
        (t) => t.key !== undefined,
        signed(S3.headObject, (caller, c, t) => routes.getObject(caller, c, t, true)),
      ],
    ],
    PUT: [
      [(t) => bucketOnly(t), signed(S3.createBucket, routes.createBucket)],
      [
        (t, c) => has(t, "partNumber") && has(t, "uploadId") && copying(c),
        signed(S3.uploadPartCopy, uploads.uploadPartCopy),
      ],
      [(_t, c) => copying(c), signed(S3.copyObject, routes.copyObject)],
      [
        (t) => has(t, "uploadId") && has(t, "partNumber"),
        signed(S3.uploadPart, (caller, c, t, s) => uploads.uploadPart(caller, c, t, bodyOf(c, s))),
      ],
      [() => true, signed(S3.upload, routes.putObject)],
    ],
    POST: [
      [(t) => bucketOnly(t) && has(t, "delete"), signed(S3.deleteObjects, routes.deleteObjects)],
      [(t, c) => bucketOnly(t) && isForm(c), routes.postObject],
      [(t) => t.key !== undefined && has(t, "uploads"), signed(S3.createMultipart, uploads.create)],
      [
        (t) => t.key !== undefined && has(t, "uploadId"),
        signed(S3.completeMultipart, uploads.complete),
      ],
    ],
    DELETE: [
      [(t) => bucketOnly(t), signed(S3.deleteBucket, routes.deleteBucket)],
      [(t) => t.key !== undefined && has(t, "uploadId"), signed(S3.abortMultipart, uploads.abort)],
      [(t) => t.key !== undefined, signed(S3.deleteObject, routes.deleteObject)],
    ],
  };

  app.all("*", async (c) => {
    const url = new URL(c.req.url);
    try {
      const target = targetOf(url, rawPath(c, url));
      const route = table[c.req.method]?.find(([matches]) => matches(target, c));
      // no operation of upstream's: its empty 404
      if (!route) return new Response(null, { status: 404 });
      return await route[1](c, target);
    } catch (error) {
      const known = error instanceof StorageError ? error : fromDatabaseError(error);
      if (known) return xmlError(known, c.req.raw);
      if (c.req.raw.signal.aborted) return new Response(null, { status: 499 });
      console.error("[supabase-local] storage (s3):", error);
      return xmlError(ERRORS.internal("Internal Server Error"), c.req.raw);
    }
  });
  return app;
}

/**
 * The request's path as the client sent it, still percent-encoded: Node's request target when it
 * came through the server. The Request's URL has "." and ".." segments resolved, which S3 leaves
 * in a key ("a/../b.txt" is a key of its own) and signs as sent.
 */
function rawPath(c: C, url: URL): string {
  const target = (c.env as { incoming?: { url?: string } } | undefined)?.incoming?.url;
  return target?.startsWith("/") ? (target.split("?")[0] as string) : url.pathname;
}

/** The bucket and key of `/storage/v1/s3/<bucket>[/<key>]` (a trailing slash: the bucket). */
function targetOf(url: URL, path: string): Target {
  const rest = path.replace(/^\/storage\/v1\/s3\/?/, "");
  if (rest === "") return { url, path };
  const slash = rest.indexOf("/");
  let bucket: string;
  let key: string | undefined;
  try {
    bucket = decodeURIComponent(slash === -1 ? rest : rest.slice(0, slash));
    const keyPart = slash === -1 ? "" : rest.slice(slash + 1);
    key = keyPart === "" ? undefined : decodeURIComponent(keyPart);
  } catch {
    throw ERRORS.invalidKey(rest);
  }
  mustBeValidBucketName(bucket);
  return { bucket, key, url, path };
}

function bucketOnly(t: Target): boolean {
  return t.bucket !== undefined && t.key === undefined;
}

function has(t: Target, param: string): boolean {
  return t.url.searchParams.has(param);
}

function isForm(c: C): boolean {
  return (c.req.header("content-type") ?? "").toLowerCase().startsWith("multipart/form-data");
}

function copying(c: C): boolean {
  return c.req.header("x-amz-copy-source") !== undefined;
}

/** The body's length as the client declares it (the decoded length of an aws-chunked one). */
function declaredLength(c: C): number | undefined {
  const header =
    c.req.header("x-amz-decoded-content-length") ?? c.req.header("content-length") ?? undefined;
  if (header === undefined) return undefined;
  const n = Number(header);
  return Number.isInteger(n) && n >= 0 ? n : undefined;
}

const RESPONSE_OVERRIDES: Array<[string, string]> = [
  ["response-content-disposition", "content-disposition"],
  ["response-content-type", "content-type"],
  ["response-cache-control", "cache-control"],
  ["response-content-encoding", "content-encoding"],
  ["response-content-language", "content-language"],
  ["response-expires", "expires"],
];

function isHeaderValue(value: string): boolean {
  return /^[\t\x20-\x7e\x80-\xff]*$/.test(value);
}

async function* emptyBody(): AsyncGenerator<Uint8Array> {}

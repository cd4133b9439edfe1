// Resumable uploads at /storage/v1/upload/resumable, the TUS protocol as upstream serves it
// (http/routes/tus): @tus/server with its file store keeps an upload's parts in the file store's
// resumable/ folder until whole, then the file moves into the object store and the row is
// written as for any upload. The same rules as a plain upload: the Upload-Metadata names the
// bucket and object (bucketName, objectName, contentType, cacheControl, metadata), and every
// request but OPTIONS and HEAD asks the database, as the caller, whether it may write that object
// (x-upsert: true for an upsert); the size is the bucket's or [storage] file_size_limit. The upload
// URL's id is base64url of `<bucket>/<key>/<version>`, as upstream's. Under /sign, a signed upload
// URL's token in `x-signature` stands for the caller instead (its owner, its upsert), on every
// request, as upstream's signed TUS uploads.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { FileStore as TusFileStore } from "@tus/file-store";
import { Server } from "@tus/server";
import { Metadata, type Upload } from "@tus/utils";
import { type Caller, SERVICE_ROLE } from "./caller.ts";
import { ERRORS, StorageError } from "./errors.ts";
import type { FileStore } from "./file-store.ts";
import { mustBeAllowedMimeType, mustBeValidBucketName, mustBeValidKey } from "./names.ts";
import * as objects from "./objects.ts";
import { verifyToken } from "./signed-urls.ts";
import { resumableUploadLimit } from "./upload.ts";

export const RESUMABLE_PATH = "/storage/v1/upload/resumable";

interface UploadId {
  bucket: string;
  name: string;
  version: string;
}

function encodeId(id: UploadId): string {
  return Buffer.from(`${id.bucket}/${id.name}/${id.version}`).toString("base64url");
}

function decodeId(id: string): UploadId {
  const text = Buffer.from(id, "base64url").toString("utf8");
  const first = text.indexOf("/");
  const last = text.lastIndexOf("/");
  if (first < 1 || last <= first) throw tusError(ERRORS.invalidUploadSignature());
  return {
    bucket: text.slice(0, first),
    name: text.slice(first + 1, last),
    version: text.slice(last + 1),
  };
}

/** A StorageError as @tus/server answers errors: the real status and the message. */
/**
 * The Upload-Metadata's cacheControl as the object keeps it: seconds (upstream's /^-?\d+$/) become
 * `max-age=<seconds>`; anything else is no-cache (undefined here), as upstream's onCreate has it.
 */
function cacheControlOf(value: string | null | undefined): string | undefined {
  return value && /^-?\d+$/.test(value) ? `max-age=${value}` : undefined;
}

function tusError(error: unknown): { status_code: number; body: string } {
  if (error instanceof StorageError) return { status_code: error.status, body: error.message };
  throw error;
}

/** Who is uploading, for one request: the caller, or a signed upload URL's owner. */
interface Uploader {
  caller: Caller;
  owner?: string;
  upsert: boolean;
}

export function createResumable(options: {
  db: PGlite;
  files: FileStore;
  fileSizeLimit: number;
  /** This install's URL-signing key: signed uploads under /sign. */
  urlKey: Uint8Array;
}): (request: Request, caller: Caller, signed?: boolean) => Promise<Response> {
  const { db, files } = options;
  const uploaders = new WeakMap<object, Uploader>();
  const datastore = new TusFileStore({ directory: files.resumableDir });

  /** May this uploader write this object (as an upload: insert, or the upsert's three rights)? */
  const allowed = async (
    request: Request,
    id: UploadId,
    metadata: Record<string, string | null>,
    size?: number,
  ) => {
    const uploader = uploaders.get(request);
    if (!uploader) throw ERRORS.accessDenied();
    let userMetadata: Record<string, unknown> | undefined;
    try {
      userMetadata = metadata.metadata ? JSON.parse(metadata.metadata) : undefined;
    } catch {
      // not JSON: ignored, as upstream does
    }
    await objects.canUpload(
      db,
      uploader.caller,
      {
        bucketId: id.bucket,
        name: id.name,
        owner: uploader.owner,
        upsert: uploader.upsert,
        userMetadata,
      },
      {
        mimetype: metadata.contentType ?? undefined,
        cacheControl: cacheControlOf(metadata.cacheControl),
        ...(size === undefined ? {} : { contentLength: size }),
      },
    );
  };

  const server = (signed: boolean) =>
    new Server({
      path: signed ? `${RESUMABLE_PATH}/sign` : RESUMABLE_PATH,
      datastore,
      // the bucket's limit, as upstream's: a deferred Upload-Length is only known as bytes come
      maxSize: async (_request, id) => {
        if (!id) return options.fileSizeLimit;
        try {
          const bucket = await objects.bucketForObjects(db, decodeId(id).bucket);
          return resumableUploadLimit({
            bucketLimit: bucket.file_size_limit,
            globalLimit: options.fileSizeLimit,
          });
        } catch {
          // no such bucket: refused by onIncomingRequest
          return options.fileSizeLimit;
        }
      },
      respectForwardedHeaders: false,
      namingFunction: (_request, metadata) => {
        // no Upload-Metadata header at all (one without the names is an invalid name below)
        if (!metadata) throw tusError(ERRORS.metadataRequired());
        const bucket = metadata?.bucketName ?? "";
        const name = metadata?.objectName ?? "";
        try {
          mustBeValidBucketName(bucket);
          mustBeValidKey(name);
        } catch (error) {
          throw tusError(error);
        }
        return encodeId({ bucket, name, version: randomUUID() });
      },
      onIncomingRequest: async (request, id) => {
        try {
          const uploadId = decodeId(id);
          if (signed) {
            // every request of a signed upload carries its token, HEAD included
            const signature = request.headers.get("x-signature");
            if (!signature) throw ERRORS.invalidSignature("Missing x-signature header");
            const token = await verifyToken(
              options.urlKey,
              signature,
              `${uploadId.bucket}/${uploadId.name}`,
              "upload",
            );
            // as upstream's superuser, in the request the route made (its headers, path and
            // operation, for the transactions)
            const scope = uploaders.get(request)?.caller.scope;
            uploaders.set(request, {
              caller: { ...SERVICE_ROLE, scope },
              owner: token.owner,
              upsert: token.upsert === true,
            });
          }
          if (request.method === "OPTIONS" || request.method === "HEAD") return;
          if (request.method === "POST") {
            const header = request.headers.get("upload-metadata");
            let metadata: Record<string, string | null> = {};
            try {
              metadata = header ? (Metadata.parse(header) ?? {}) : {};
            } catch {
              throw ERRORS.invalidParameter("upload-metadata", "Invalid Upload-Metadata header");
            }
            const size = Number(request.headers.get("upload-length"));
            const bucket = await objects.bucketForObjects(db, uploadId.bucket);
            const limit = resumableUploadLimit({
              bucketLimit: bucket.file_size_limit,
              globalLimit: options.fileSizeLimit,
            });
            if (Number.isFinite(size) && size > limit) throw ERRORS.entityTooLarge();
            // as upstream's: checked when the metadata names a type (without one the object is
            // stored as application/octet-stream, unchecked)
            if (metadata.contentType && bucket.allowed_mime_types?.length)
              mustBeAllowedMimeType(metadata.contentType, bucket.allowed_mime_types);
            await allowed(request, uploadId, metadata, Number.isFinite(size) ? size : undefined);
          } else {
            const upload = await datastore.getUpload(id);
            await allowed(request, uploadId, upload.metadata ?? {}, upload.size);
          }
        } catch (error) {
          throw tusError(error);
        }
      },
      onUploadFinish: async (request, upload: Upload) => {
        try {
          const uploadId = decodeId(upload.id);
          const uploader = uploaders.get(request);
          const written = await files.adopt(
            upload.storage?.path ?? join(files.resumableDir, upload.id),
          );
          await datastore.configstore.delete(upload.id);
          let userMetadata: Record<string, unknown> | undefined;
          try {
            userMetadata = upload.metadata?.metadata
              ? JSON.parse(upload.metadata.metadata)
              : undefined;
          } catch {
            userMetadata = undefined;
          }
          await objects.completeUpload(
            db,
            files,
            {
              bucketId: uploadId.bucket,
              name: uploadId.name,
              owner: uploader?.owner,
              upsert: uploader?.upsert ?? false,
              userMetadata,
            },
            written,
            {
              mimeType: upload.metadata?.contentType || "application/octet-stream",
              cacheControl: cacheControlOf(upload.metadata?.cacheControl) ?? "no-cache",
            },
          );
          // upstream's onUploadFinish says so on the request that completed the upload
          return { headers: { "Tus-Complete": "1" } };
        } catch (error) {
          throw tusError(error);
        }
      },
    });
  const plain = server(false);
  const withSignature = server(true);

  return async (request, caller, signed = false) => {
    // under /sign the caller is anon until the token in x-signature speaks (onIncomingRequest)
    uploaders.set(request, {
      caller,
      owner: caller.owner,
      upsert: !signed && request.headers.get("x-upsert") === "true",
    });
    const response = await (signed ? withSignature : plain).handleWeb(request);
    // CORS is the app's to grant (http/app.ts: the project's origins only), never `*`
    const headers = new Headers(response.headers);
    for (const name of [...headers.keys()])
      if (name.startsWith("access-control-")) headers.delete(name);
    return new Response(response.body, { status: response.status, headers });
  };
}

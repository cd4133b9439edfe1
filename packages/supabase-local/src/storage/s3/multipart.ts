// S3 multipart uploads (upstream's s3-handler with its file backend, which the CLI runs): an upload
// is a row of storage.s3_multipart_uploads, each part a file of the file store and a row of
// s3_multipart_uploads_parts. Every step first asks whether the caller may write the object (an
// upsert, tested as the caller and rolled back), then reads and writes those tables as the owner;
// completing concatenates the parts, in the order the request lists them, into the object's new
// version and removes the upload. Listing uploads or parts reads the tables as the caller, so
// only the service role may (upstream's grants). A part's ETag is the MD5 of its bytes, the
// object's the MD5 of all of them (the file backend's, not S3's `-N` form).
import { randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import type { PGlite } from "@electric-sql/pglite";
import type { Context } from "hono";
import { asCaller, asOwner, type Caller } from "../caller.ts";
import { ERRORS } from "../errors.ts";
import type { FileStore, Written } from "../file-store.ts";
import { mustBeAllowedMimeType, mustBeValidKey } from "../names.ts";
import * as objects from "../objects.ts";
import { parseRange } from "../serve.ts";
import { uploadLimit } from "../upload.ts";
import { amzMetadata, copySource } from "./headers.ts";
import { continuationToken, fromContinuationToken } from "./list.ts";
import { xmlBody, xmlResponse } from "./xml.ts";

/** Upstream's MAX_PART_SIZE: 5 GiB. */
const MAX_PART_SIZE = 5 * 1024 * 1024 * 1024;

interface Upload {
  id: string;
  bucket_id: string;
  key: string;
  in_progress_size: number;
  owner_id: string | null;
  user_metadata: Record<string, unknown> | null;
  metadata: { mimetype?: string; cacheControl?: string } | null;
}

interface Part {
  part_number: number;
  etag: string;
  size: number;
  version: string;
  created_at: Date;
}

interface Target {
  bucket?: string;
  key?: string;
  url: URL;
}

export interface MultipartContext {
  db: PGlite;
  files: FileStore;
  fileSizeLimit: number;
}

export function multipartRoutes(ctx: MultipartContext) {
  const { db, files } = ctx;

  /** The upload `uploadId` names, for this bucket and key (NoSuchUpload otherwise). */
  async function findUpload(t: Target): Promise<Upload> {
    const id = t.url.searchParams.get("uploadId") ?? "";
    if (!id) throw ERRORS.invalidUploadId();
    const upload = await asOwner(db, async (tx) => {
      const { rows } = await tx.query<Upload>(
        `select id, bucket_id, key, in_progress_size::float8 as in_progress_size, owner_id,
                user_metadata, metadata
         from storage.s3_multipart_uploads where id = $1`,
        [id],
      );
      return rows[0];
    });
    if (!upload || upload.bucket_id !== t.bucket || upload.key !== t.key)
      throw ERRORS.noSuchUpload();
    return upload;
  }

  /** Whether the caller may write the upload's object: an upsert as the caller, rolled back. */
  function mayWrite(caller: Caller, upload: Upload): Promise<void> {
    return objects.canUpload(
      db,
      caller,
      {
        bucketId: upload.bucket_id,
        name: upload.key,
        owner: caller.owner,
        upsert: true,
        userMetadata: upload.user_metadata ?? undefined,
      },
      upload.metadata ?? {},
    );
  }

  /** The largest object the bucket takes (its limit, or [storage] file_size_limit). */
  async function maxSize(bucketId: string): Promise<number> {
    const bucket = await objects.bucketForObjects(db, bucketId);
    return uploadLimit({ bucketLimit: bucket.file_size_limit, globalLimit: ctx.fileSizeLimit });
  }

  /**
   * Records a part's bytes: the upload's size so far grows by `size` first (EntityTooLarge past
   * the object's limit), then the part replaces any earlier one of its number.
   */
  async function savePart(upload: Upload, partNumber: number, written: Written, owner?: string) {
    const limit = await maxSize(upload.bucket_id);
    let replaced: string | undefined;
    try {
      await asOwner(db, async (tx) => {
        const { rows } = await tx.query<{ in_progress_size: number }>(
          `update storage.s3_multipart_uploads set in_progress_size = in_progress_size + $2
           where id = $1 returning in_progress_size::float8 as in_progress_size`,
          [upload.id, written.size],
        );
        const progress = rows[0];
        if (!progress) throw ERRORS.noSuchUpload();
        const old = await tx.query<{ version: string; size: number }>(
          `delete from storage.s3_multipart_uploads_parts where upload_id = $1 and part_number = $2
           returning version, size::float8 as size`,
          [upload.id, partNumber],
        );
        const before = old.rows[0];
        replaced = before?.version;
        if (progress.in_progress_size - (before?.size ?? 0) > limit) throw ERRORS.entityTooLarge();
        if (before)
          await tx.query(
            "update storage.s3_multipart_uploads set in_progress_size = in_progress_size - $2 where id = $1",
            [upload.id, before.size],
          );
        await tx.query(
          `insert into storage.s3_multipart_uploads_parts
             (upload_id, size, part_number, bucket_id, key, etag, owner_id, version)
           values ($1, $2, $3, $4, $5, $6, $7, $8)`,
          [
            upload.id,
            written.size,
            partNumber,
            upload.bucket_id,
            upload.key,
            written.eTag,
            owner ?? null,
            written.version,
          ],
        );
      });
    } catch (error) {
      await files.remove([written.version]);
      throw error;
    }
    await files.remove([replaced]);
  }

  return {
    async create(caller: Caller, c: Context, t: Target) {
      const bucketId = t.bucket as string;
      const key = mustBeValidKey(t.key);
      const bucket = await objects.bucketForObjects(db, bucketId);
      const mimetype = c.req.header("content-type") || undefined;
      if (mimetype && bucket.allowed_mime_types?.length)
        mustBeAllowedMimeType(mimetype, bucket.allowed_mime_types);
      const userMetadata = amzMetadata(c.req.raw.headers);
      await objects.canUpload(
        db,
        caller,
        { bucketId, name: key, owner: caller.owner, upsert: true, userMetadata },
        mimetype ? { mimetype } : {},
      );
      const id = randomUUID();
      await asOwner(db, (tx) =>
        tx.query(
          `insert into storage.s3_multipart_uploads
             (id, upload_signature, bucket_id, key, version, owner_id, user_metadata, metadata)
           values ($1, '', $2, $3, $4, $5, $6, $7)`,
          [
            id,
            bucketId,
            key,
            randomUUID(),
            caller.owner ?? null,
            userMetadata ?? null,
            {
              mimetype,
              cacheControl: c.req.header("cache-control") || undefined,
            },
          ],
        ),
      );
      return xmlResponse({
        InitiateMultipartUploadResult: { Bucket: bucketId, Key: key, UploadId: id },
      });
    },

    async uploadPart(caller: Caller, c: Context, t: Target, body: AsyncIterable<Uint8Array>) {
      const partNumber = partNumberOf(t.url);
      const header = c.req.header("x-amz-decoded-content-length") ?? c.req.header("content-length");
      const length = header === undefined ? Number.NaN : Number(header);
      if (!Number.isInteger(length) || length < 0) throw ERRORS.missingContentLength();
      if (length > MAX_PART_SIZE) throw ERRORS.entityTooLarge();
      const upload = await findUpload(t);
      await mayWrite(caller, upload);
      if (upload.in_progress_size + length > (await maxSize(upload.bucket_id)))
        throw ERRORS.entityTooLarge();
      const written = await files.write(body, length);
      await savePart(upload, partNumber, written, caller.owner);
      return new Response(null, { status: 200, headers: { ETag: written.eTag } });
    },

    async uploadPartCopy(caller: Caller, c: Context, t: Target) {
      const partNumber = partNumberOf(t.url);
      const source = copySource(c.req.header("x-amz-copy-source") as string);
      if (!source) throw ERRORS.invalidKey(c.req.header("x-amz-copy-source") as string);
      if (!source.bucket) throw ERRORS.noSuchBucket();
      if (!source.key) throw ERRORS.noSuchKey();
      const row = await objects.objectAsCaller(db, caller, source.bucket, source.key);
      if (!row.version) throw ERRORS.noSuchKey();
      const size = Number(row.metadata?.size ?? 0);
      const rangeHeader = c.req.header("x-amz-copy-source-range");
      const range = rangeHeader ? parseRange(rangeHeader, size) : { start: 0, end: size - 1 };
      const upload = await findUpload(t);
      await mayWrite(caller, upload);
      const path = files.pathOf(row.version);
      const bytes =
        range.end < range.start
          ? emptyBody()
          : createReadStream(path, { start: range.start, end: range.end });
      const written = await files.write(bytes, range.end - range.start + 1);
      await savePart(upload, partNumber, written, caller.owner);
      return xmlResponse({
        CopyPartResult: { ETag: written.eTag, LastModified: written.lastModified.toISOString() },
      });
    },

    async complete(caller: Caller, c: Context, t: Target) {
      const upload = await findUpload(t);
      const body = await xmlBody(c.req.raw);
      const asked = body ? partsOf(body) : [];
      await mayWrite(caller, upload);
      const stored = await asOwner(db, async (tx) => {
        const { rows } = await tx.query<Part>(
          `select part_number, etag, size::float8 as size, version, created_at
           from storage.s3_multipart_uploads_parts where upload_id = $1 order by part_number`,
          [upload.id],
        );
        return rows;
      });
      const byNumber = new Map(stored.map((p) => [p.part_number, p]));
      const parts = (
        asked.length ? asked : stored.map((p) => ({ number: p.part_number, eTag: p.etag }))
      ).map((wanted) => {
        const part = byNumber.get(wanted.number);
        if (!part) throw ERRORS.missingPart(wanted.number, upload.id);
        if (unquoted(part.etag) !== unquoted(wanted.eTag))
          throw ERRORS.invalidChecksum(`Invalid ETag for part ${wanted.number}`);
        return part;
      });
      const written = await files.write(
        concatenated(parts.map((p) => files.pathOf(p.version))),
        await maxSize(upload.bucket_id),
      );
      // claimed at once: a second complete, or an abort, in the meantime finds no upload
      const claimed = await asOwner(db, async (tx) => {
        const parts = await tx.query<{ version: string }>(
          "select version from storage.s3_multipart_uploads_parts where upload_id = $1",
          [upload.id],
        );
        const gone = await tx.query("delete from storage.s3_multipart_uploads where id = $1", [
          upload.id,
        ]);
        return { versions: parts.rows.map((r) => r.version), gone: (gone.affectedRows ?? 0) > 0 };
      });
      if (!claimed.gone) {
        await files.remove([written.version]);
        throw ERRORS.noSuchUpload();
      }
      const row = await objects.completeUpload(
        db,
        files,
        {
          bucketId: upload.bucket_id,
          name: upload.key,
          owner: caller.owner,
          upsert: true,
          userMetadata: upload.user_metadata ?? undefined,
        },
        written,
        {
          mimeType: upload.metadata?.mimetype || "application/octet-stream",
          cacheControl: upload.metadata?.cacheControl || "no-cache",
        },
      );
      await files.remove(claimed.versions);
      return xmlResponse({
        CompleteMultipartUploadResult: {
          Location: `${upload.bucket_id}/${upload.key}`,
          Bucket: upload.bucket_id,
          Key: upload.key,
          ETag: row.metadata?.eTag,
        },
      });
    },

    async abort(caller: Caller, _c: Context, t: Target) {
      const upload = await findUpload(t);
      await mayWrite(caller, upload);
      const versions = await asOwner(db, async (tx) => {
        const { rows } = await tx.query<{ version: string }>(
          "select version from storage.s3_multipart_uploads_parts where upload_id = $1",
          [upload.id],
        );
        await tx.query("delete from storage.s3_multipart_uploads where id = $1", [upload.id]);
        return rows.map((r) => r.version);
      });
      await files.remove(versions);
      return new Response(null, { status: 200 });
    },

    async listParts(caller: Caller, _c: Context, t: Target) {
      const upload = await findUpload(t);
      const q = t.url.searchParams;
      const maxParts = boundedInt(q.get("max-parts"), "max-parts", 1000) ?? 1000;
      const marker = q.get("part-number-marker") ?? undefined;
      const after = marker === undefined ? 0 : Number.parseInt(marker, 10) || 0;
      // as the caller: the table is the service role's alone (upstream reads it so too)
      const rows = await asCaller(db, caller, async (tx) => {
        const { rows } = await tx.query<Part>(
          `select part_number, etag, size::float8 as size, version, created_at
           from storage.s3_multipart_uploads_parts where upload_id = $1 and part_number > $2
           order by part_number limit $3`,
          [upload.id, after, maxParts + 1],
        );
        return rows;
      });
      const truncated = rows.length > maxParts;
      const page = rows.slice(0, maxParts);
      return xmlResponse({
        ListPartsResult: {
          Bucket: upload.bucket_id,
          Key: upload.key,
          UploadId: upload.id,
          PartNumberMarker: marker,
          NextPartNumberMarker: truncated ? page[page.length - 1]?.part_number : undefined,
          MaxParts: maxParts,
          IsTruncated: truncated,
          Part: page.map((p) => ({
            PartNumber: p.part_number,
            LastModified: new Date(p.created_at).toISOString(),
            ETag: p.etag,
            Size: p.size,
          })),
        },
      });
    },

    async listUploads(caller: Caller, _c: Context, t: Target) {
      const bucketId = t.bucket as string;
      const q = t.url.searchParams;
      const limit = boundedInt(q.get("max-uploads"), "max-uploads", 1000) ?? 1000;
      const prefix = q.get("prefix") ?? "";
      const delimiter = q.get("delimiter") || undefined;
      const encoding = q.get("encoding-type") ?? undefined;
      const keyMarker = q.get("key-marker") || undefined;
      const uploadIdMarker = q.get("upload-id-marker") || undefined;
      await objects.bucketForObjects(db, bucketId);
      const afterKey = keyMarker ? fromContinuationToken(keyMarker) : "";
      const afterId = uploadIdMarker ? fromContinuationToken(uploadIdMarker) : undefined;
      const rows = await asCaller(db, caller, async (tx) => {
        const { rows } = await tx.query<{ key: string; id: string; created_at: Date }>(
          `select key, id, created_at from storage.s3_multipart_uploads
           where bucket_id = $1 and starts_with(key, $2)
             and (key collate "C" > $3 or (key = $3 and $4::text is not null and id > $4))
           order by key collate "C", created_at, id`,
          [bucketId, prefix, afterKey, afterId ?? null],
        );
        return rows;
      });
      const entries: Array<{ key: string; id: string; created_at?: Date; folder: boolean }> = [];
      for (const row of rows) {
        const at = delimiter ? row.key.indexOf(delimiter, prefix.length) : -1;
        if (at !== -1 && delimiter) {
          const folder = row.key.slice(0, at + delimiter.length);
          if (entries[entries.length - 1]?.key !== folder)
            entries.push({ key: folder, id: row.id, folder: true });
          continue;
        }
        entries.push({ key: row.key, id: row.id, created_at: row.created_at, folder: false });
      }
      const truncated = entries.length > limit;
      const page = entries.slice(0, limit);
      const encode = (value: string) => (encoding === "url" ? encodeURIComponent(value) : value);
      const last = truncated ? page[page.length - 1] : undefined;
      return xmlResponse({
        ListMultipartUploadsResult: {
          Name: bucketId,
          Prefix: prefix,
          KeyMarker: keyMarker,
          UploadIdMarker: uploadIdMarker,
          NextKeyMarker: last && continuationToken(last.key),
          NextUploadIdMarker: last && continuationToken(last.id),
          Upload: page
            .filter((e) => !e.folder)
            .map((e) => ({
              Key: encode(e.key),
              Initiated: e.created_at ? new Date(e.created_at).toISOString() : undefined,
              UploadId: e.id,
              StorageClass: "STANDARD",
            })),
          IsTruncated: truncated,
          MaxUploads: limit,
          Delimiter: delimiter,
          EncodingType: encoding,
          KeyCount: page.length,
          CommonPrefixes: page.filter((e) => e.folder).map((e) => ({ Prefix: encode(e.key) })),
        },
      });
    },
  };
}

/** `partNumber`: an integer from 1 to 10000, as upstream's schema has it. */
function partNumberOf(url: URL): number {
  const value = url.searchParams.get("partNumber") ?? "";
  const n = Number(value);
  if (value === "" || !Number.isInteger(n))
    throw ERRORS.invalidRequest("Querystring, partNumber must be integer");
  if (n < 1) throw ERRORS.invalidRequest("Querystring, partNumber must be >= 1");
  if (n > 10000) throw ERRORS.invalidRequest("Querystring, partNumber must be <= 10000");
  return n;
}

function boundedInt(value: string | null, name: string, max: number): number | undefined {
  if (value === null) return undefined;
  const n = Number(value);
  if (value === "" || !Number.isInteger(n))
    throw ERRORS.invalidRequest(`Querystring, ${name} must be integer`);
  if (n < 1) throw ERRORS.invalidRequest(`Querystring, ${name} must be >= 1`);
  if (n > max) throw ERRORS.invalidRequest(`Querystring, ${name} must be <= ${max}`);
  return n;
}

/** CompleteMultipartUpload's parts, as its schema reads them. */
function partsOf(document: Record<string, unknown>): Array<{ number: number; eTag: string }> {
  const root = document.CompleteMultipartUpload as { Part?: unknown } | undefined;
  if (!root || typeof root !== "object")
    throw ERRORS.invalidRequest("Body must have required property 'CompleteMultipartUpload'");
  const parts = root.Part;
  if (parts === undefined) return [];
  return (parts as Array<Record<string, unknown>>).map((part, i) => {
    const number = Number(part?.PartNumber);
    if (typeof part?.PartNumber !== "string" || !Number.isInteger(number))
      throw ERRORS.invalidRequest(
        `Body, CompleteMultipartUpload, Part, ${i}, PartNumber must be integer`,
      );
    if (number < 1 || number > 10000)
      throw ERRORS.invalidRequest(
        `Body, CompleteMultipartUpload, Part, ${i}, PartNumber must be ${number < 1 ? ">= 1" : "<= 10000"}`,
      );
    if (typeof part.ETag !== "string")
      throw ERRORS.invalidRequest(
        `Body, CompleteMultipartUpload, Part, ${i} must have required property 'ETag'`,
      );
    return { number, eTag: part.ETag };
  });
}

function unquoted(eTag: string): string {
  return eTag.replace(/^"|"$/g, "");
}

async function* concatenated(paths: string[]): AsyncGenerator<Uint8Array> {
  for (const path of paths) yield* createReadStream(path);
}

async function* emptyBody(): AsyncGenerator<Uint8Array> {}

// An object's bytes as upstream's renderer sends them: the stored type (text/html goes out as
// text/plain), ETag, Last-Modified, Accept-Ranges, X-Robots-Tag (the upload's, if still valid;
// none otherwise, and always on upstream's object-info HEAD routes), Cache-Control from the
// object's cacheControl (Expires instead behind a signed URL), Content-Disposition for
// `?download=`, a Range as 206 (or upstream's 416), If-None-Match / If-Modified-Since as 304.
//
// Locally, more: the backend shares a host (127.0.0.1 / localhost) with the app, whose cookies a
// script can read, so an uploaded HTML or SVG file must never run as a page of that origin:
// X-Content-Type-Options: nosniff on everything, and for anything that is not a raster image,
// Content-Security-Policy: sandbox and Content-Disposition: attachment.
import { nodeBody } from "../http/node-body.ts";
import { ERRORS } from "./errors.ts";
import type { FileStore } from "./file-store.ts";
import type { ObjectMetadata, ObjectRow } from "./objects.ts";
import { servedXRobotsTag } from "./x-robots-tag.ts";

export interface ServeOptions {
  /** `?download=` (present: attachment; a value: its file name). */
  download?: string | null;
  /** A signed URL's expiry, sent as Expires (upstream sends no Cache-Control then). */
  expires?: Date;
  /** HEAD: the headers alone. */
  head?: boolean;
  /**
   * Upstream's HEAD /object/[authenticated/|public/]… (its object-info route, not the download's):
   * X-Robots-Tag: none whatever the upload's.
   */
  infoHead?: boolean;
}

/** Images a browser renders as pictures only (never as a document that runs script: not SVG). */
const INERT_IMAGE = /^image\/(png|jpe?g|gif|webp|avif|bmp|x-icon|vnd\.microsoft\.icon|tiff)$/i;

export function serveObject(
  request: Request,
  files: FileStore,
  row: ObjectRow,
  options: ServeOptions = {},
): Response {
  const metadata = (row.metadata ?? {}) as Partial<ObjectMetadata>;
  if (!row.version) throw ERRORS.noSuchKey();
  const size = Number(metadata.size ?? 0);
  const mimetype = metadata.mimetype ?? "application/octet-stream";
  const eTag = metadata.eTag;
  const lastModified = metadata.lastModified ? new Date(metadata.lastModified) : undefined;
  const headers = new Headers({
    "Accept-Ranges": "bytes",
    "Content-Type": mimetype.includes("text/html") ? "text/plain" : mimetype,
    "X-Robots-Tag": options.infoHead ? "none" : servedXRobotsTag(metadata.xRobotsTag),
    "X-Content-Type-Options": "nosniff",
  });
  if (eTag) headers.set("ETag", eTag);
  if (lastModified && !Number.isNaN(lastModified.getTime()))
    headers.set("Last-Modified", lastModified.toUTCString());
  if (options.expires) headers.set("Expires", options.expires.toUTCString());
  else if (metadata.cacheControl) headers.set("Cache-Control", metadata.cacheControl);
  disposition(headers, mimetype, options.download);

  const ifNoneMatch = request.headers.get("if-none-match");
  const ifModifiedSince = request.headers.get("if-modified-since");
  if (
    (ifNoneMatch && eTag && ifNoneMatch === eTag) ||
    (!ifNoneMatch &&
      ifModifiedSince &&
      lastModified &&
      Math.floor(lastModified.getTime() / 1000) <= Date.parse(ifModifiedSince) / 1000)
  ) {
    return new Response(null, { status: 304, headers });
  }

  const rangeHeader = request.headers.get("range");
  if (rangeHeader && !options.head) {
    const range = parseRange(rangeHeader, size);
    headers.set("Content-Range", `bytes ${range.start}-${range.end}/${size}`);
    headers.set("Content-Length", String(range.end - range.start + 1));
    return new Response(nodeBody({ path: files.pathOf(row.version), ...range }), {
      status: 206,
      headers,
    });
  }
  headers.set("Content-Length", String(size));
  if (options.head) return new Response(null, { status: 200, headers });
  return new Response(nodeBody({ path: files.pathOf(row.version) }), { status: 200, headers });
}

/** Content-Disposition: upstream's for `?download=`; locally, attachment for what is not an
 * inert image. */
function disposition(headers: Headers, mimetype: string, download: string | null | undefined) {
  if (download !== undefined && download !== null) {
    if (download === "") headers.set("Content-Disposition", "attachment;");
    else {
      const name = encodeURIComponent(download);
      headers.set("Content-Disposition", `attachment; filename=${name}; filename*=UTF-8''${name}`);
    }
  }
  if (!INERT_IMAGE.test(mimetype.split(";")[0]?.trim() ?? "")) {
    headers.set("Content-Security-Policy", "sandbox");
    if (!headers.has("Content-Disposition")) headers.set("Content-Disposition", "attachment");
  }
}

/** A `bytes=` range as upstream parses it (storage/range.ts): one range, 416 otherwise. */
export function parseRange(header: string, size: number): { start: number; end: number } {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header);
  if (!match || size <= 0) throw ERRORS.invalidRange();
  const [, from, to] = match as unknown as [string, string, string];
  if (!from && !to) throw ERRORS.invalidRange();
  if (!from) {
    const suffix = Number(to);
    if (!Number.isSafeInteger(suffix) || suffix <= 0) throw ERRORS.invalidRange();
    return { start: Math.max(size - suffix, 0), end: size - 1 };
  }
  const start = Number(from);
  const end = to ? Number(to) : size - 1;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end < start || start >= size)
    throw ERRORS.invalidRange();
  return { start, end: Math.min(end, size - 1) };
}

/** The JSON `info()` reads (upstream's InfoRenderer). */
export function infoJson(row: ObjectRow): Record<string, unknown> {
  const metadata = (row.metadata ?? {}) as Partial<ObjectMetadata>;
  return {
    id: row.id,
    name: row.name,
    version: row.version,
    bucket_id: row.bucket_id,
    size: metadata.size ?? null,
    content_type: metadata.mimetype ?? null,
    cache_control: metadata.cacheControl ?? null,
    etag: metadata.eTag ?? null,
    metadata: row.user_metadata,
    last_modified: row.updated_at,
    created_at: row.created_at,
  };
}

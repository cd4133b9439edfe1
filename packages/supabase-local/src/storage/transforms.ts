// Image transformations (/render/image/…), what upstream asks imgproxy for, done with sharp:
// width and height clamped to 1..2000 (IMAGE_TRANSFORMATION_LIMIT_MAX_SIZE), resize cover
// (crop to fill, the default), contain (fit inside) or fill (stretch), quality 20..100 (80 when
// not given), and the format the browser's Accept allows (AVIF, then WebP; `Vary: Accept`) unless
// `format=origin`, as the CLI's imgproxy with WebP/AVIF detection does. Sources over 25 MB or
// 50 megapixels are refused, as on hosted Supabase. The result streams out with the object's
// headers (serve.ts's rules: nosniff, the upload's X-Robots-Tag; a raster image, so no sandbox).
import type { Metadata, OutputInfo } from "sharp";
import { ERRORS, StorageError } from "./errors.ts";
import type { FileStore } from "./file-store.ts";
import type { ObjectMetadata, ObjectRow } from "./objects.ts";
import { servedXRobotsTag } from "./x-robots-tag.ts";

export interface Transformations {
  width?: number;
  height?: number;
  resize: "cover" | "contain" | "fill";
  quality?: number;
  format?: "origin" | "avif" | "webp";
  /** The segments upstream signs into a signed URL's token (`height:100,width:100,resize:cover`). */
  key: string;
}

const MIN_SIZE = 1;
const MAX_SIZE = 2000;
const MAX_SOURCE_BYTES = 25 * 1024 * 1024;
const MAX_SOURCE_PIXELS = 50_000_000;

function queryError(message: string): StorageError {
  return new StorageError(400, "InvalidRequest", message);
}

function integer(value: unknown, name: string, min: number, max?: number): number | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  const n = typeof value === "number" ? value : Number(value);
  if (!Number.isInteger(n)) throw queryError(`querystring/${name} must be integer`);
  if (n < min) throw queryError(`querystring/${name} must be >= ${min}`);
  if (max !== undefined && n > max) throw queryError(`querystring/${name} must be <= ${max}`);
  return n;
}

/** The transformations of a query (or a signed URL's `transform` body, or its token). */
export function transformationsFrom(
  query: Record<string, unknown>,
  format?: string,
): Transformations {
  const resize = query.resize ?? "cover";
  if (resize !== "cover" && resize !== "contain" && resize !== "fill")
    throw queryError("querystring/resize must be equal to one of the allowed values");
  const wanted = format || query.format;
  if (
    wanted !== undefined &&
    wanted !== "" &&
    wanted !== "origin" &&
    wanted !== "avif" &&
    wanted !== "webp"
  )
    throw queryError("querystring/format must be equal to one of the allowed values");
  const clamp = (n: number | undefined) =>
    n ? Math.min(Math.max(n, MIN_SIZE), MAX_SIZE) : undefined;
  const width = clamp(integer(query.width, "width", 0));
  const height = clamp(integer(query.height, "height", 0));
  const quality = integer(query.quality, "quality", 20, 100);
  const segments: string[] = [];
  if (height) segments.push(`height:${height}`);
  if (width) segments.push(`width:${width}`);
  if (width || height) segments.push(`resize:${resize}`);
  if (quality) segments.push(`quality:${quality}`);
  return {
    width,
    height,
    resize,
    quality,
    format: (wanted || undefined) as Transformations["format"],
    key: segments.join(","),
  };
}

/** A signed URL's transformations, from its token's `height:100,width:100,…`. */
export function transformationsFromToken(key: string | undefined, format?: string) {
  const query: Record<string, string> = {};
  for (const segment of (key ?? "").split(",")) {
    const [name, value] = segment.split(":");
    if (name && value !== undefined) query[name] = value;
  }
  return transformationsFrom(query, format);
}

let library: Promise<typeof import("sharp")> | undefined;

/**
 * sharp, loaded on the first transformation, or once the backend serves (preloadSharp, from
 * http/app.ts), not with the backend: it and libvips take 80 to 100 ms (140 ms of CPU) to load,
 * on the cores the database's start is using.
 */
function sharpLibrary(): Promise<typeof import("sharp")> {
  library ??= import("sharp");
  return library;
}

/** Loads sharp now (a failure is reported where a transformation awaits it). */
export function preloadSharp(): void {
  sharpLibrary().catch(() => {});
}

const FIT = { cover: "cover", contain: "inside", fill: "fill" } as const;

export async function renderImage(
  request: Request,
  files: FileStore,
  row: ObjectRow,
  t: Transformations,
  options: { download?: string | null; expires?: Date } = {},
): Promise<Response> {
  const metadata = (row.metadata ?? {}) as Partial<ObjectMetadata>;
  if (!row.version) throw ERRORS.noSuchKey();
  if (Number(metadata.size ?? 0) > MAX_SOURCE_BYTES)
    throw new StorageError(422, "InvalidRequest", "Source image is too big");
  const accept = request.headers.get("accept") ?? "";
  const format =
    t.format === "origin"
      ? undefined
      : (t.format ??
        (/image\/avif/.test(accept) ? "avif" : /image\/webp/.test(accept) ? "webp" : undefined));
  const { default: sharp } = await sharpLibrary();
  let image = sharp(files.pathOf(row.version), { limitInputPixels: MAX_SOURCE_PIXELS }).rotate();
  let info: Metadata;
  try {
    info = await image.metadata();
  } catch (error) {
    const message = String((error as Error).message);
    if (/pixel limit/i.test(message))
      throw new StorageError(422, "InvalidRequest", "Source image resolution is too big");
    throw new StorageError(422, "InvalidRequest", "Source image is not a supported image");
  }
  if (t.width || t.height)
    image = image.resize({
      width: t.width,
      height: t.height,
      fit: FIT[t.resize],
      withoutEnlargement: false,
    });
  const quality = t.quality ?? 80;
  if (format === "avif") image = image.avif({ quality });
  else if (format === "webp") image = image.webp({ quality });
  else if (info.format === "jpeg") image = image.jpeg({ quality });
  else if (info.format === "webp") image = image.webp({ quality });
  else if (info.format === "heif") image = image.avif({ quality });
  else if (info.format !== "gif") image = image.png();
  let body: Buffer;
  let output: OutputInfo;
  try {
    // transformed images are small (at most 2000 x 2000): made whole, so a failure is an answer
    ({ data: body, info: output } = await image.toBuffer({ resolveWithObject: true }));
  } catch {
    throw new StorageError(422, "InvalidRequest", "Source image is not a supported image");
  }
  const headers = new Headers({
    "Content-Type": output.format === "heif" ? "image/avif" : `image/${output.format}`,
    "Content-Length": String(body.length),
    "X-Robots-Tag": servedXRobotsTag(metadata.xRobotsTag),
    "X-Content-Type-Options": "nosniff",
    Vary: "Accept",
    "Accept-Ranges": "bytes",
  });
  // behind a signed URL, the link's expiry (as serveObject): no cache outlives the link
  if (options.expires) headers.set("Expires", options.expires.toUTCString());
  else headers.set("Cache-Control", metadata.cacheControl ?? "no-cache");
  if (metadata.lastModified)
    headers.set("Last-Modified", new Date(metadata.lastModified).toUTCString());
  if (t.key) headers.set("X-Transformations", t.key);
  if (options.download !== undefined && options.download !== null) {
    const name = encodeURIComponent(options.download);
    headers.set(
      "Content-Disposition",
      options.download === ""
        ? "attachment;"
        : `attachment; filename=${name}; filename*=UTF-8''${name}`,
    );
  }
  return new Response(new Uint8Array(body), { status: 200, headers });
}

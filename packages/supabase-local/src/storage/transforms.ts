// Image transformations (/render/image/…), answered as the Supabase CLI's imgproxy (v3.8.0, with
// the CLI's IMGPROXY_* settings) answers upstream's requests, done with sharp:
// - width and height clamped to 1..2000 (upstream's IMAGE_TRANSFORMATION_LIMIT_MAX_SIZE); what is
//   not given comes from the default preset (IMGPROXY_PRESETS=default=width:3000/height:8192), so
//   no output is larger than 3000 x 8192; resize cover (imgproxy's fill, the default), contain
//   (fit; fit in the preset's box when no size is given) or fill (force); never enlarged; the
//   result cropped to the box, centred (imgproxy's scale and crop, worked out here);
// - the format: `format=avif|webp` as asked; else WebP when Accept allows it
//   (IMGPROXY_ENABLE_WEBP_DETECTION; no AVIF detection); else the source's format when it is one
//   imgproxy prefers (JPEG, PNG, GIF, WebP, AVIF), or JPEG / PNG (alpha) / GIF (animated);
//   `format=origin` ignores Accept, as upstream then does not pass it on. Quality 20..100, or
//   IMGPROXY_FORMAT_QUALITY's jpeg=80, avif=62, webp=80 (80 otherwise);
// - sources: detected by their bytes, not their declared type. SVG is sent back as it is (imgproxy
//   does not process an SVG unless a format is asked; here, then, refused: sharp never renders
//   SVG); anything but JPEG, PNG, GIF, WebP, AVIF/HEIF and TIFF is refused; so are files over
//   25,000,000 bytes (IMGPROXY_MAX_SRC_FILE_SIZE) and images over 50 megapixels
//   (IMGPROXY_MAX_SRC_RESOLUTION), counting width x frame height x frames of an animation kept
//   (up to IMGPROXY_MAX_ANIMATION_FRAMES=60 frames, in GIF or WebP);
// - bounded: one render at a time (libvips on one thread, as imgproxy runs it), a short queue, and
//   imgproxy's 10-second deadline from the request's arrival, waiting included;
// - refusals in upstream's words: imgproxy's public message ("Invalid source image", "Timeout",
//   "Too many requests") as upstream's ImageProcessingError carries it (the status imgproxy gave
//   in the body, HTTP 400). A source sharp cannot decode, a 500 on hosted, is refused as invalid.
// The result streams out with the object's headers (serve.ts's rules: nosniff, the upload's
// X-Robots-Tag; a raster image, so no sandbox; an SVG sent back is sandboxed as serve.ts does).
import { open, readFile } from "node:fs/promises";
import type { Sharp } from "sharp";
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
const MAX_SOURCE_BYTES = 25_000_000;
const MAX_SOURCE_PIXELS = 50_000_000;
const MAX_ANIMATION_FRAMES = 60;
const PRESET = { width: 3000, height: 8192 };
const FORMAT_QUALITY: Partial<Record<string, number>> = { jpeg: 80, avif: 62, webp: 80 };
const DEFAULT_QUALITY = 80;
/** How far into a file imgproxy looks for an `<svg` tag (IMGPROXY_MAX_SVG_CHECK_BYTES). */
const SVG_CHECK_BYTES = 32 * 1024;

/**
 * How many renders run at once, how many may wait, and the deadline of each from its request's
 * arrival (imgproxy's IMGPROXY_TIMEOUT, 10 s). Beyond the queue: imgproxy's answer when its own
 * queue (IMGPROXY_REQUESTS_QUEUE_SIZE) is full, 429 Too many requests. Tests change them.
 */
export const renderLimits = { running: 1, queued: 8, timeoutMs: 10_000 };

/** A query's (or a signed URL's transform body's) value upstream's schema refuses. */
export class TransformationSchemaError extends Error {}

function imageProcessingError(status: number, message: string): StorageError {
  // upstream's ERRORS.ImageProcessingError: the status imgproxy gave, in the body; HTTP 400 (500
  // only for a 500)
  return new StorageError(
    status,
    status > 499 ? "InternalError" : "InvalidRequest",
    message,
    undefined,
    status === 500 ? 500 : 400,
  );
}

const invalidSource = () => imageProcessingError(422, "Invalid source image");
const timedOut = () => imageProcessingError(503, "Timeout");
const tooManyRequests = () => imageProcessingError(429, "Too many requests");

function integer(
  value: unknown,
  where: string,
  name: string,
  min: number,
  max?: number,
): number | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  const n = typeof value === "number" ? value : Number(value);
  if (!Number.isInteger(n)) throw new TransformationSchemaError(`${where}/${name} must be integer`);
  if (n < min) throw new TransformationSchemaError(`${where}/${name} must be >= ${min}`);
  if (max !== undefined && n > max)
    throw new TransformationSchemaError(`${where}/${name} must be <= ${max}`);
  return n;
}

/**
 * The transformations of a query, or of a signed URL's `transform` body (`where` "body/transform"),
 * or of its token; checked in the order of upstream's schema (height, width, resize, format,
 * quality).
 */
export function transformationsFrom(
  query: Record<string, unknown>,
  format?: string,
  where = "querystring",
): Transformations {
  const clamp = (n: number | undefined) =>
    n ? Math.min(Math.max(n, MIN_SIZE), MAX_SIZE) : undefined;
  const height = clamp(integer(query.height, where, "height", 0));
  const width = clamp(integer(query.width, where, "width", 0));
  const resize = query.resize ?? "cover";
  if (resize !== "cover" && resize !== "contain" && resize !== "fill")
    throw new TransformationSchemaError(
      `${where}/resize must be equal to one of the allowed values`,
    );
  const wanted = format || query.format;
  if (
    wanted !== undefined &&
    wanted !== "" &&
    wanted !== "origin" &&
    wanted !== "avif" &&
    wanted !== "webp"
  )
    throw new TransformationSchemaError(
      `${where}/format must be equal to one of the allowed values`,
    );
  const quality = integer(query.quality, where, "quality", 20, 100);
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
 * on the cores the database's start is using. libvips then runs each render on one thread and
 * keeps no cache of decoded images (as imgproxy sets it).
 */
function sharpLibrary(): Promise<typeof import("sharp")> {
  library ??= import("sharp").then((module) => {
    module.default.concurrency(1);
    module.default.cache(false);
    return module;
  });
  return library;
}

/** Loads sharp now (a failure is reported where a transformation awaits it). */
export function preloadSharp(): void {
  sharpLibrary().catch(() => {});
}

// ---- one render at a time

let running = 0;
const queue: Array<{ grant: () => void }> = [];

/** How many renders wait for their turn (for tests). */
export function renderQueueLength(): number {
  return queue.length;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("The operation was aborted.", "AbortError");
}

/**
 * A turn to render, by `deadline` (epoch ms): at once if one is free, else in the queue (429 when
 * it is full, Timeout at the deadline, the caller's abort when it goes away). Resolves to the
 * function that gives the turn back (once).
 */
export function acquireRenderSlot(deadline: number, signal?: AbortSignal): Promise<() => void> {
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    const next = queue.shift();
    if (next) next.grant();
    else running--;
  };
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  if (running < renderLimits.running) {
    running++;
    return Promise.resolve(release);
  }
  if (queue.length >= renderLimits.queued) return Promise.reject(tooManyRequests());
  return new Promise((resolve, reject) => {
    const leave = (error: unknown) => {
      const at = queue.indexOf(entry);
      if (at >= 0) queue.splice(at, 1);
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      reject(error);
    };
    const onAbort = () => leave(abortReason(signal as AbortSignal));
    const entry = {
      // the turn passes from the one who had it: `running` stays as it was
      grant: () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        resolve(release);
      },
    };
    const timer = setTimeout(() => leave(timedOut()), Math.max(0, deadline - Date.now()));
    signal?.addEventListener("abort", onAbort, { once: true });
    queue.push(entry);
  });
}

/**
 * `work` by `deadline` (Timeout), or until the caller goes away: whichever first. `work` itself
 * is not cut short here (sharp stops at its own timeout); its outcome, once the answer is given,
 * is dropped.
 */
function withinDeadline<T>(work: Promise<T>, deadline: number, signal?: AbortSignal): Promise<T> {
  work.catch(() => {});
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const stop = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut()), Math.max(0, deadline - Date.now()));
    if (signal) {
      onAbort = () => reject(abortReason(signal));
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    }
  });
  stop.catch(() => {});
  return Promise.race([work, stop]).finally(() => {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  });
}

// ---- the source

type SourceType = "jpeg" | "png" | "gif" | "webp" | "heif" | "tiff" | "bmp" | "ico" | "svg";

/** The source's type by its first bytes, as imgproxy tells it (its magic numbers, then an `<svg`
 * tag in the first 32 KiB); undefined: not an image imgproxy knows. */
async function sourceType(path: string): Promise<SourceType | undefined> {
  const file = await open(path, "r");
  let head: Buffer;
  try {
    const buffer = Buffer.alloc(SVG_CHECK_BYTES);
    const { bytesRead } = await file.read(buffer, 0, SVG_CHECK_BYTES, 0);
    head = buffer.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
  const ascii = (from: number, to: number) => head.subarray(from, to).toString("latin1");
  if (head[0] === 0xff && head[1] === 0xd8) return "jpeg";
  if (ascii(0, 8) === "\x89PNG\r\n\x1a\n") return "png";
  if (ascii(0, 6) === "GIF87a" || ascii(0, 6) === "GIF89a") return "gif";
  if (ascii(0, 4) === "RIFF" && ascii(8, 12) === "WEBP") return "webp";
  if (ascii(4, 8) === "ftyp") return "heif";
  if (ascii(0, 4) === "II*\0" || ascii(0, 4) === "MM\0*") return "tiff";
  if (ascii(0, 2) === "BM") return "bmp";
  if (ascii(0, 4) === "\0\0\x01\0") return "ico";
  if (/<svg[\s>/]/i.test(head.toString("utf8"))) return "svg";
  return undefined;
}

/** What sharp says each detected type is (its loader must be the one the bytes announce). */
const SHARP_FORMAT: Partial<Record<SourceType, string>> = {
  jpeg: "jpeg",
  png: "png",
  gif: "gif",
  webp: "webp",
  heif: "heif",
  tiff: "tiff",
};

// ---- imgproxy's geometry

interface Geometry {
  /** The size to scale the (auto-rotated) image to. */
  scaledWidth: number;
  scaledHeight: number;
  /** The crop of that, centred (the whole of it when equal). */
  width: number;
  height: number;
  left: number;
  top: number;
}

/**
 * Where an image of `srcWidth` x `srcHeight` ends up: the box is the size asked for, or the
 * preset's; cover fills it (the smaller shrink), contain fits in it (the larger), fill stretches
 * to it (each on its own); never enlarged (a shrink below 1 is scaled back up to 1, keeping the
 * two shrinks' ratio); then cropped to the box.
 */
export function geometry(srcWidth: number, srcHeight: number, t: Transformations): Geometry {
  const boxWidth = t.width ?? PRESET.width;
  const boxHeight = t.height ?? PRESET.height;
  const mode = t.width || t.height ? t.resize : "contain";
  let wShrink = boxWidth === srcWidth ? 1 : srcWidth / boxWidth;
  let hShrink = boxHeight === srcHeight ? 1 : srcHeight / boxHeight;
  if (wShrink !== 1 || hShrink !== 1) {
    if (mode === "contain") wShrink = hShrink = Math.max(wShrink, hShrink);
    else if (mode === "cover") wShrink = hShrink = Math.min(wShrink, hShrink);
  }
  if (wShrink < 1) {
    hShrink /= wShrink;
    wShrink = 1;
  }
  if (hShrink < 1) {
    wShrink /= hShrink;
    hShrink = 1;
  }
  wShrink = Math.min(wShrink, srcWidth);
  hShrink = Math.min(hShrink, srcHeight);
  const scaledWidth = Math.max(1, Math.round(srcWidth / wShrink));
  const scaledHeight = Math.max(1, Math.round(srcHeight / hShrink));
  const width = Math.min(boxWidth, scaledWidth);
  const height = Math.min(boxHeight, scaledHeight);
  return {
    scaledWidth,
    scaledHeight,
    width,
    height,
    left: Math.floor((scaledWidth - width + 1) / 2),
    top: Math.floor((scaledHeight - height + 1) / 2),
  };
}

type OutputFormat = "jpeg" | "png" | "gif" | "webp" | "avif";

const PREFERRED: Partial<Record<string, OutputFormat>> = {
  jpeg: "jpeg",
  png: "png",
  gif: "gif",
  webp: "webp",
};

// ---- rendering

export async function renderImage(
  request: Request,
  files: FileStore,
  row: ObjectRow,
  t: Transformations,
  options: { download?: string | null; expires?: Date } = {},
): Promise<Response> {
  const deadline = Date.now() + renderLimits.timeoutMs;
  const signal = request.signal;
  const metadata = (row.metadata ?? {}) as Partial<ObjectMetadata>;
  if (!row.version) throw ERRORS.noSuchKey();
  if (Number(metadata.size ?? 0) > MAX_SOURCE_BYTES) throw invalidSource();
  const path = files.pathOf(row.version);
  const type = await sourceType(path);
  if (!type) throw invalidSource();
  if (type === "svg") {
    // imgproxy sends an SVG back unprocessed when no format is asked; one asked for would
    // rasterize it, which sharp is never let do
    if (t.format && t.format !== "origin") throw invalidSource();
    return svgResponse(files, row, metadata, options);
  }
  const sharpFormat = SHARP_FORMAT[type];
  // BMP and ICO, which imgproxy reads, sharp cannot
  if (!sharpFormat) throw invalidSource();

  const release = await acquireRenderSlot(deadline, signal);
  const render = async () => {
    const { default: sharp } = await sharpLibrary();
    const input = { limitInputPixels: MAX_SOURCE_PIXELS, sequentialRead: true } as const;
    const info = await sharp(path, input)
      .metadata()
      .catch(() => undefined);
    if (!info || info.format !== sharpFormat) throw invalidSource();
    const frameHeight = info.pageHeight ?? info.height ?? 0;
    const width = info.width ?? 0;
    if (!width || !frameHeight || width * frameHeight > MAX_SOURCE_PIXELS) throw invalidSource();
    const pages = info.pages ?? 1;
    const av1 = type === "heif" && info.compression === "av1";
    const accept = t.format === "origin" ? "" : (request.headers.get("accept") ?? "");
    const animatable = (type === "gif" || type === "webp") && pages > 1;
    const alpha = info.hasAlpha === true;
    let format: OutputFormat =
      t.format === "avif" || t.format === "webp"
        ? t.format
        : accept.includes("image/webp")
          ? "webp"
          : (PREFERRED[type] ?? (av1 ? "avif" : animatable ? "gif" : alpha ? "png" : "jpeg"));
    const animated = animatable && (format === "gif" || format === "webp");
    const frames = animated ? Math.min(pages, MAX_ANIMATION_FRAMES) : 1;
    if (width * frameHeight * frames > MAX_SOURCE_PIXELS) throw invalidSource();
    // auto-rotated: a quarter turn swaps the sides
    const turned = (info.orientation ?? 1) >= 5;
    const g = geometry(turned ? frameHeight : width, turned ? width : frameHeight, t);
    // AVIF's least side is 16 pixels: imgproxy then saves PNG (alpha) or JPEG
    if (format === "avif" && (g.width < 16 || g.height < 16)) format = alpha ? "png" : "jpeg";
    let image: Sharp = sharp(path, { ...input, pages: frames }).rotate();
    if (
      g.scaledWidth !== (turned ? frameHeight : width) ||
      g.scaledHeight !== (turned ? width : frameHeight)
    )
      image = image.resize({ width: g.scaledWidth, height: g.scaledHeight, fit: "fill" });
    if (g.width !== g.scaledWidth || g.height !== g.scaledHeight)
      image = image.extract({ left: g.left, top: g.top, width: g.width, height: g.height });
    const quality = t.quality ?? FORMAT_QUALITY[format] ?? DEFAULT_QUALITY;
    if (format === "avif") image = image.avif({ quality });
    else if (format === "webp") image = image.webp({ quality });
    else if (format === "jpeg") image = image.jpeg({ quality });
    else if (format === "gif") image = image.gif();
    else image = image.png();
    // sharp's own stop, in whole seconds: the turn is held until it lets go
    const seconds = Math.max(1, Math.ceil((deadline - Date.now()) / 1000));
    const output = await image
      .timeout({ seconds })
      .toBuffer()
      .catch((error) => {
        throw /timeout/i.test(String((error as Error)?.message)) ? timedOut() : invalidSource();
      });
    return { output, format };
  };
  // the turn is given back when sharp is done, not when the answer is (a render past its
  // deadline still holds it, until sharp's own timeout stops it)
  const work = render().finally(release);
  const { output: body, format } = await withinDeadline(work, deadline, signal);
  const contentType = `image/${format}`;
  const headers = new Headers({
    "Content-Type": contentType,
    "Content-Length": String(body.length),
    "X-Robots-Tag": servedXRobotsTag(metadata.xRobotsTag),
    "X-Content-Type-Options": "nosniff",
    Vary: "Accept",
    "Accept-Ranges": "bytes",
  });
  cacheHeaders(headers, metadata, options);
  if (t.key) headers.set("X-Transformations", t.key);
  downloadHeader(headers, options.download);
  return new Response(new Uint8Array(body), { status: 200, headers });
}

/** An SVG source as imgproxy sends it back: the bytes as they are, as image/svg+xml; locally a
 * document is sandboxed and downloaded (serve.ts's rule: it must not run on the app's host). */
async function svgResponse(
  files: FileStore,
  row: ObjectRow,
  metadata: Partial<ObjectMetadata>,
  options: { download?: string | null; expires?: Date },
): Promise<Response> {
  const body = await readFile(files.pathOf(row.version as string));
  const headers = new Headers({
    "Content-Type": "image/svg+xml",
    "Content-Length": String(body.length),
    "X-Robots-Tag": servedXRobotsTag(metadata.xRobotsTag),
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "sandbox",
    Vary: "Accept",
    "Accept-Ranges": "bytes",
  });
  cacheHeaders(headers, metadata, options);
  downloadHeader(headers, options.download);
  if (!headers.has("Content-Disposition")) headers.set("Content-Disposition", "attachment");
  return new Response(new Uint8Array(body), { status: 200, headers });
}

function cacheHeaders(
  headers: Headers,
  metadata: Partial<ObjectMetadata>,
  options: { expires?: Date },
) {
  // behind a signed URL, the link's expiry (as serveObject): no cache outlives the link
  if (options.expires) headers.set("Expires", options.expires.toUTCString());
  else headers.set("Cache-Control", metadata.cacheControl ?? "no-cache");
  if (metadata.lastModified)
    headers.set("Last-Modified", new Date(metadata.lastModified).toUTCString());
}

function downloadHeader(headers: Headers, download: string | null | undefined) {
  if (download === undefined || download === null) return;
  const name = encodeURIComponent(download);
  headers.set(
    "Content-Disposition",
    download === "" ? "attachment;" : `attachment; filename=${name}; filename*=UTF-8''${name}`,
  );
}

// An upload's body and what comes with it, read as upstream's fileUploadFromRequest reads it:
// either multipart/form-data (storage-js sends a Blob or File so: the fields cacheControl,
// metadata, contentType, then the file), parsed as a stream by busboy, or the raw body with its
// Content-Type, Cache-Control and base64 `x-metadata` headers. Neither is buffered: the file part
// or the body streams on to the file store. The size limit is the smaller of the bucket's and
// [storage] file_size_limit; the type must be one the bucket allows. An `x-robots-tag` header is
// checked first (x-robots-tag.ts) and kept for the object's metadata.
import { Readable } from "node:stream";
import busboy from "busboy";
import { ERRORS } from "./errors.ts";
import { isEmptyFolder, mustBeAllowedMimeType } from "./names.ts";
import { mustBeValidXRobotsTag } from "./x-robots-tag.ts";

export interface IncomingFile {
  /** The bytes, read once (the raw body as it comes: Node's stream from the server, if any). */
  body: AsyncIterable<Uint8Array>;
  /**
   * Each chunk of `body` is a buffer of its own that nothing else keeps (the raw body as Node's
   * request stream gives it, a fresh copy per read), so the file store may hand its memory on.
   */
  ownChunks: boolean;
  /** Reads what is left of the body and drops it, so the answer reaches the client whole. */
  discard(): void;
  mimeType: string;
  cacheControl: string;
  userMetadata?: Record<string, unknown>;
  /** The `x-robots-tag` header, valid, to be sent back when the object is served. */
  xRobotsTag?: string;
  /** The most bytes this upload may have. */
  limit: number;
}

export interface UploadLimits {
  /** The bucket's file_size_limit (null: none). */
  bucketLimit: number | null;
  /** [storage] file_size_limit. */
  globalLimit: number;
  allowedMimeTypes: string[] | null;
}

/** Upstream's MAX_CUSTOM_METADATA_SIZE: user metadata up to 1 MiB. */
const MAX_USER_METADATA = 1024 * 1024;

type SizeLimits = Pick<UploadLimits, "bucketLimit" | "globalLimit">;

/**
 * The most bytes a plain upload may have, as upstream's getStandardMaxFileSizeLimit: any number a
 * bucket sets counts, so a bucket's limit of 0 takes only empty objects.
 */
export function uploadLimit(limits: SizeLimits): number {
  return limits.bucketLimit === null
    ? limits.globalLimit
    : Math.min(limits.bucketLimit, limits.globalLimit);
}

/**
 * The most bytes a resumable upload may have. Upstream's TUS server reads the bucket's limit with
 * `||`, so there a limit of 0 is none: the same bucket refuses a plain upload of a byte and takes a
 * resumable one of any size up to [storage] file_size_limit.
 */
export function resumableUploadLimit(limits: SizeLimits): number {
  return limits.bucketLimit ? Math.min(limits.bucketLimit, limits.globalLimit) : limits.globalLimit;
}

/**
 * `incoming`: the body as Node's stream (http/app.ts's Peer), read instead of the Request's when
 * there is one; the Request's body is then never touched (its Web stream would start reading too).
 */
export async function readUpload(
  request: Request,
  key: string,
  limits: UploadLimits,
  incoming?: Readable,
): Promise<IncomingFile> {
  // upstream checks it before anything else of the request
  const xRobotsTag = request.headers.get("x-robots-tag") || undefined;
  if (xRobotsTag) mustBeValidXRobotsTag(xRobotsTag);
  const limit = isEmptyFolder(key) ? 0 : uploadLimit(limits);
  const checkType = (mimeType: string) => {
    if (limits.allowedMimeTypes?.length && !isEmptyFolder(key))
      mustBeAllowedMimeType(mimeType, limits.allowedMimeTypes);
  };
  const contentType = request.headers.get("content-type") ?? "";
  if (!incoming && !request.body) throw ERRORS.noContentProvided();
  if (contentType.startsWith("multipart/form-data")) {
    const file = await multipartFile(
      incoming ?? Readable.fromWeb(request.body as import("node:stream/web").ReadableStream),
      contentType,
    );
    checkType(file.mimeType);
    return { ...file, xRobotsTag, limit };
  }
  const mimeType = contentType || "application/octet-stream";
  checkType(mimeType);
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > limit) throw ERRORS.entityTooLarge();
  const metadata = request.headers.get("x-metadata");
  const body = incoming ?? (request.body as ReadableStream<Uint8Array>);
  return {
    body,
    ownChunks: incoming !== undefined,
    discard: () => {
      if (body instanceof Readable) body.resume();
      else if (!body.locked) body.pipeTo(new WritableStream()).catch(() => {});
    },
    mimeType,
    cacheControl: request.headers.get("cache-control") ?? "no-cache",
    userMetadata: metadata ? parseUserMetadata(metadata) : undefined,
    xRobotsTag,
    limit,
  };
}

/** `x-metadata`: base64 of a JSON object (a value that is not is ignored, as upstream does). */
export function parseUserMetadata(value: string): Record<string, unknown> | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(value, "base64").toString("utf8"));
    return parsed && typeof parsed === "object" ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The first file part of a multipart body, with the fields sent before it. */
async function multipartFile(
  source: Readable,
  contentType: string,
): Promise<Omit<IncomingFile, "limit" | "xRobotsTag">> {
  const part = await firstFilePart(source, contentType, {
    fields: 10,
    fieldSize: MAX_USER_METADATA + 1,
  });
  const { fields } = part;
  const metadata = fields.metadata ?? fields.userMetadata;
  if (metadata !== undefined && Buffer.byteLength(metadata) > MAX_USER_METADATA) {
    part.discard();
    throw ERRORS.entityTooLarge("user_metadata");
  }
  let userMetadata: Record<string, unknown> | undefined;
  if (metadata !== undefined) {
    try {
      userMetadata = JSON.parse(metadata);
    } catch {
      // not JSON: ignored, as upstream does
    }
  }
  return {
    body: part.body,
    // busboy's chunks are views into the request's
    ownChunks: false,
    discard: part.discard,
    mimeType: fields.contentType || part.mimeType || "application/octet-stream",
    cacheControl: fields.cacheControl ? `max-age=${fields.cacheControl}` : "no-cache",
    userMetadata,
  };
}

export interface FilePart {
  /** The fields sent before the file, by name as sent (a repeated one: its last value). */
  fields: Record<string, string>;
  /** Every field name as sent, in order (repeats included). */
  names: string[];
  body: AsyncIterable<Uint8Array>;
  /** The file part's own Content-Type. */
  mimeType: string;
  discard(): void;
}

/**
 * The first file part of a multipart/form-data body (busboy, streamed), once it begins: the
 * fields before it, and its bytes to read. A body that is no form, or ends before a file part, is
 * `No content provided`; one cut off inside the file fails its reading the same way.
 */
export function firstFilePart(
  source: Readable,
  contentType: string,
  limits: { fields: number; fieldSize: number },
): Promise<FilePart> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { "content-type": contentType },
        limits: { ...limits, files: 1 },
      });
    } catch {
      reject(ERRORS.noContentProvided());
      return;
    }
    const fields: Record<string, string> = {};
    const names: string[] = [];
    let settled = false;
    parser.on("field", (name, value) => {
      fields[name] = value;
      names.push(name);
    });
    parser.on("file", (_name, stream, info) => {
      // a form cut off inside a file part fails that part's stream, maybe before anything reads
      // it or after nothing will (an 'error' nobody listens to would end the process)
      stream.on("error", () => {});
      if (settled) {
        stream.resume();
        return;
      }
      settled = true;
      resolve({
        fields,
        names,
        body: (async function* () {
          try {
            yield* stream;
          } catch {
            // a form cut off before its closing boundary: upstream's answer to a form it
            // cannot read
            throw ERRORS.noContentProvided();
          }
        })(),
        mimeType: info.mimeType,
        discard: () => stream.resume(),
      });
    });
    parser.on("error", () => {
      if (!settled) reject(ERRORS.noContentProvided());
      settled = true;
    });
    parser.on("close", () => {
      if (!settled) reject(ERRORS.noContentProvided());
      settled = true;
    });
    source.on("error", (error) => parser.destroy(error)).pipe(parser);
  });
}

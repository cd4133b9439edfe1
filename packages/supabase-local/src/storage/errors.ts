// Every error Storage answers, from one table, in upstream's words (supabase/storage v1.60.2,
// internal/errors/codes.ts and http/error-handler.ts): the body carries the real status as a
// string (`statusCode`), the `code`, an `error` (upstream's older name for it) and the message;
// the HTTP status is 400 for every 4xx (500 for a 5xx), except the few upstream sends as they are
// (an invalid JWT role 403, a bad range 416, too many connections 429).
//
//   {"statusCode":"404","code":"NoSuchKey","error":"not_found","message":"Object not found"}

export class StorageError extends Error {
  /** The status upstream means (the body's statusCode). */
  readonly status: number;
  readonly code: string;
  /** The body's `error`; upstream falls back to the code. */
  readonly error: string;
  /** The HTTP status: 400 for a 4xx, 500 for a 5xx, unless upstream sends the real one. */
  readonly httpStatus: number;
  constructor(status: number, code: string, message: string, error?: string, httpStatus?: number) {
    super(message);
    this.status = status;
    this.code = code;
    this.error = error ?? code;
    this.httpStatus = httpStatus ?? (status >= 500 ? 500 : 400);
  }

  response(headers?: HeadersInit): Response {
    return Response.json(
      {
        statusCode: String(this.status),
        code: this.code,
        error: this.error,
        message: this.message,
      },
      { status: this.httpStatus, headers },
    );
  }
}

export const ERRORS = {
  noSuchBucket: () => new StorageError(404, "NoSuchBucket", "Bucket not found", "Bucket not found"),
  noSuchKey: () => new StorageError(404, "NoSuchKey", "Object not found", "not_found"),
  noSuchUpload: () => new StorageError(404, "NoSuchUpload", "Upload not found"),
  invalidKey: (key: string) => new StorageError(400, "InvalidKey", `Invalid key: ${key}`),
  invalidBucketName: () =>
    new StorageError(400, "InvalidBucketName", "Bucket name invalid", "Invalid Input"),
  invalidJwt: (message = "Invalid JWT") => new StorageError(400, "InvalidJWT", message),
  invalidSignature: (message = "Invalid signature") =>
    new StorageError(400, "InvalidSignature", message),
  expiredSignature: () => new StorageError(400, "ExpiredToken", "The provided token has expired."),
  invalidParameter: (name: string, message?: string) =>
    new StorageError(400, "InvalidParameter", message ?? `Invalid Parameter ${name}`),
  missingParameter: (name: string) =>
    new StorageError(400, "MissingParameter", `Missing Required Parameter ${name}`),
  invalidRequest: (message: string) => new StorageError(400, "InvalidRequest", message),
  noContentProvided: () => new StorageError(400, "InvalidRequest", "No content provided"),
  metadataRequired: () => new StorageError(400, "InvalidRequest", "Metadata header is required"),
  invalidXRobotsTag: (detail: string) =>
    new StorageError(
      400,
      "InvalidRequest",
      `Invalid X-Robots-Tag header: ${detail}`,
      "invalid_x_robots_tag",
    ),
  invalidFileSizeLimit: () =>
    new StorageError(
      400,
      "InvalidRequest",
      "Invalid file size format, hint: use 20GB / 20MB / 30KB / 3B",
    ),
  invalidMimeType: (mimeType: string) =>
    new StorageError(
      415,
      "InvalidMimeType",
      `mime type ${mimeType} is not supported`,
      "invalid_mime_type",
    ),
  entityTooLarge: (entity = "object") =>
    new StorageError(
      413,
      "EntityTooLarge",
      `The ${entity} exceeded the maximum allowed size`,
      "Payload too large",
    ),
  accessDenied: (message = "Access denied") =>
    new StorageError(403, "AccessDenied", message, "Unauthorized"),
  /** A JWT that does not verify, or no role: upstream's enforceJwtRole sends the real 403. */
  accessDeniedJwt: (message: string) =>
    new StorageError(403, "AccessDenied", message, "Unauthorized", 403),
  rlsRefused: () =>
    new StorageError(
      403,
      "AccessDenied",
      "new row violates row-level security policy",
      "Unauthorized",
    ),
  keyAlreadyExists: () =>
    new StorageError(409, "KeyAlreadyExists", "The resource already exists", "Duplicate"),
  bucketAlreadyExists: () =>
    new StorageError(409, "BucketAlreadyExists", "The resource already exists", "Duplicate"),
  bucketNotEmpty: () =>
    new StorageError(409, "ResourceNotEmpty", "The bucket you tried to delete is not empty"),
  unableToEmptyBucket: () =>
    new StorageError(
      409,
      "InvalidRequest",
      "Unable to empty the bucket because it contains too many objects",
    ),
  relatedResourceNotFound: () =>
    new StorageError(404, "InvalidRequest", "The related resource does not exist"),
  invalidRange: () =>
    new StorageError(416, "InvalidRange", "invalid range provided", "invalid_range", 416),
  invalidUploadSignature: () =>
    new StorageError(400, "InvalidUploadSignature", "Invalid upload Signature"),
  databaseTimeout: () =>
    new StorageError(
      544,
      "DatabaseTimeout",
      "The connection to the database timed out",
      undefined,
      544,
    ),
  // the S3 endpoint's (s3/): sent with their real statuses, as XML
  signatureDoesNotMatch: (message: string) =>
    new StorageError(403, "SignatureDoesNotMatch", message),
  malformedXml: (message: string) => new StorageError(400, "MalformedXML", message),
  missingContentLength: () =>
    new StorageError(
      400,
      "MissingContentLength",
      "You must provide the Content-Length HTTP header.",
    ),
  invalidUploadId: (message = "Invalid upload id") =>
    new StorageError(400, "InvalidUploadId", message),
  invalidChecksum: (message: string) => new StorageError(400, "InvalidChecksum", message),
  missingPart: (partNumber: number, uploadId: string) =>
    new StorageError(400, "MissingPart", `Part ${partNumber} is missing for upload id ${uploadId}`),
  internal: (message = "Internal server error") => new StorageError(500, "InternalError", message),
  // vector buckets (their routes send every status as it is: upstream's respectStatusCode)
  vectorConflict: (resource: string, name: string) =>
    new StorageError(409, "ConflictException", `${resource} "${name}" already exists`),
  vectorNotFound: (name: string) =>
    new StorageError(404, "NotFoundException", `resource "${name}" not found`),
  vectorBucketNotEmpty: (name: string) =>
    new StorageError(400, "VectorBucketNotEmpty", `Vector Bucket "${name}" not empty`),
  vectorMaxBuckets: (max: number) =>
    new StorageError(
      400,
      "S3VectorMaxBucketsExceeded",
      `Maximum number of buckets exceeded. Max allowed is ${max}. Contact support to increase your limit.`,
    ),
  vectorMaxIndexes: (max: number) =>
    new StorageError(
      400,
      "S3VectorMaxIndexesExceeded",
      `Maximum number of indexes exceeded. Max allowed is ${max}. Contact support to increase your limit.`,
    ),
  notSupported: (feature: string) =>
    new StorageError(
      409,
      "NotSupported",
      `The feature ${feature} is not enabled for this resource`,
    ),
};

/** Upstream's answer to a route that does not exist (Fastify's 404). */
export function routeNotFound(method: string, path: string): Response {
  return Response.json(
    { statusCode: 404, error: "Not Found", message: `Route ${method}:${path} not found` },
    { status: 404 },
  );
}

/**
 * A hosted project without a feature (upstream's tenant-feature check: image transformations on
 * a plan without them): the one refusal sent with its real status, 403.
 */
export function featureNotEnabled(): Response {
  return Response.json(
    {
      error: "FeatureNotEnabled",
      statusCode: "403",
      message: "feature not enabled for this tenant",
    },
    { status: 403 },
  );
}

/**
 * A Postgres error met while running as the caller, as upstream's DBError.fromDBError maps it: an
 * RLS refusal is AccessDenied, a duplicate a 409, a missing related row a 404.
 */
export function fromDatabaseError(error: unknown): StorageError | undefined {
  const code = (error as { code?: unknown })?.code;
  const message = (error as { message?: unknown })?.message;
  switch (code) {
    case "42501":
      return typeof message === "string" && !message.includes("row-level security")
        ? ERRORS.accessDenied(message)
        : ERRORS.rlsRefused();
    case "23505":
      return new StorageError(
        409,
        "ResourceAlreadyExists",
        "The resource already exists",
        "Duplicate",
      );
    case "23503":
      return ERRORS.relatedResourceNotFound();
    case "57014":
      return ERRORS.databaseTimeout();
    // a NUL in a text or JSON value (any JSON body or x-metadata may carry "\u0000"), or JSON
    // nested thousands deep (54001): upstream's DatabaseError, a 500; refused here as the bad
    // input it is
    case "22021":
    case "22P05":
    case "54001":
    case "22P02":
      return ERRORS.invalidParameter(
        "value",
        typeof message === "string" ? message : "Invalid value format or type conversion failed",
      );
    default:
      return undefined;
  }
}

/** A request body or query upstream's schema refuses (Fastify's validation error, rendered by
 * upstream's handler with its real status). */
export function validationError(message: string): Response {
  return Response.json(
    { statusCode: "400", error: "FastifyError", code: "InternalError", message },
    { status: 400 },
  );
}

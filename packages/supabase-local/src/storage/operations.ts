// The operation each route names, as upstream's routes do (http/routes/operations.ts, given to
// each route as its config.operation): every transaction a request makes as its caller carries its
// route's name in storage.operation, so a policy tells a download from a listing, or a resumable
// upload from a plain one, with storage.operation() or storage.allow_only_operation(). The names
// are upstream's to the letter, the two legacy ones without the storage. prefix too. Only the
// routes that read or write as the caller are here: a public object, a signed URL's object and a
// public or signed transformed image are read as the owner (upstream's superuser), which no policy
// asks.
export const OPERATIONS = {
  createBucket: "storage.bucket.create",
  deleteBucket: "storage.bucket.delete",
  emptyBucket: "storage.bucket.empty",
  listBuckets: "storage.bucket.list",
  getBucket: "storage.bucket.get",
  updateBucket: "storage.bucket.update",

  copyObject: "storage.object.copy",
  /** POST /object/:bucket/*. */
  createObject: "storage.object.upload",
  /** PUT /object/:bucket/*. */
  updateObject: "storage.object.upload_update",
  deleteObject: "storage.object.delete",
  deleteObjects: "storage.object.delete_many",
  /** GET /object/authenticated/:bucket/* and the legacy GET /object/:bucket/*. */
  getAuthObject: "storage.object.get_authenticated",
  /** GET /object/info/authenticated/:bucket/* and /object/info/:bucket/* (a legacy name). */
  getAuthObjectInfo: "object.get_authenticated_info",
  /** HEAD /object/authenticated/:bucket/* and /object/:bucket/* (a legacy name). */
  headAuthObjectInfo: "object.head_authenticated_info",
  /** POST /object/upload/sign/:bucket/*: making a signed upload URL. */
  signUploadUrl: "storage.object.sign_upload_url",
  /** PUT /object/upload/sign/:bucket/*: using one. */
  uploadSignedObject: "storage.object.upload_signed",
  signObjectUrl: "storage.object.sign",
  signObjectUrls: "storage.object.sign_many",
  listObjects: "storage.object.list",
  listObjectsV2: "storage.object.list_v2",
  moveObject: "storage.object.move",

  renderAuthImage: "storage.render.image_authenticated",

  /** The S3 endpoint's (s3/routes.ts), one per S3 operation. */
  s3: {
    abortMultipart: "storage.s3.upload.abort_multipart",
    completeMultipart: "storage.s3.upload.complete_multipart",
    createMultipart: "storage.s3.upload.create_multipart",
    listMultipart: "storage.s3.upload.list_multipart",
    listParts: "storage.s3.upload.list_parts",
    uploadPart: "storage.s3.upload.part",
    uploadPartCopy: "storage.s3.upload.part_copy",
    upload: "storage.s3.upload",
    copyObject: "storage.s3.object.copy",
    getObject: "storage.s3.object.get",
    listObjects: "storage.s3.object.list",
    headObject: "storage.s3.object.info",
    deleteObjects: "storage.s3.object.delete_many",
    deleteObject: "storage.s3.object.delete",
    getObjectTagging: "storage.s3.object.get_tagging",
    createBucket: "storage.s3.bucket.create",
    deleteBucket: "storage.s3.bucket.delete",
    headBucket: "storage.s3.bucket.head",
    listBuckets: "storage.s3.bucket.list",
    getBucketLocation: "storage.s3.bucket.get_location",
    getBucketVersioning: "storage.s3.bucket.get_versioning",
  },
} as const;

/**
 * A resumable upload request's operation, by its method, as upstream's TUS routes name them;
 * under /sign (a signed upload URL's) with `_signed` after it. A method upstream has no route for
 * has none (its empty setting).
 */
export function tusOperation(method: string, signed: boolean): string {
  const operation = TUS_OPERATIONS[method];
  if (!operation) return "";
  return signed ? `${operation}_signed` : operation;
}

const TUS_OPERATIONS: Record<string, string> = {
  POST: "storage.tus.upload.create",
  PUT: "storage.tus.upload.part",
  PATCH: "storage.tus.upload.part",
  HEAD: "storage.tus.upload.get",
  DELETE: "storage.tus.upload.delete",
  OPTIONS: "storage.tus.options",
};

// Storage's S3 endpoint (/storage/v1/s3) driven by the AWS SDK for JavaScript, as a project's
// scripts and tools reach it: the CLI's access keys (the service role) or a user's JWT as the
// session token (that user, under the app's RLS policies), over HTTP to the test backend, which
// serves it because supabase/config.toml turns [storage.s3_protocol] on.

import { Readable } from "node:stream";
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetBucketLocationCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListMultipartUploadsCommand,
  ListObjectsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  PutObjectCommand,
  S3Client,
  type S3ServiceException,
  UploadPartCommand,
  UploadPartCopyCommand,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { createPresignedPost } from "@aws-sdk/s3-presigned-post";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { SignJWT } from "jose";
import { afterAll, describe, expect, test } from "vitest";
import { ANON_KEY, BACKEND_URL, signedInClient } from "../../../../tests/support/backend.ts";
import { memoryBackend } from "../../../../tests/support/memory-backend.ts";
import { KEYS } from "../../src/project/keys.ts";
import { S3_CREDENTIALS } from "../../src/storage/s3/credentials.ts";

const ENDPOINT = `${BACKEND_URL}/storage/v1/s3`;

function client(credentials: {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}): S3Client {
  return new S3Client({
    endpoint: ENDPOINT,
    region: S3_CREDENTIALS.region,
    forcePathStyle: true,
    credentials,
    // every failure is the test's to see, at once
    maxAttempts: 1,
  });
}

const service = client(S3_CREDENTIALS);

/** A user's client: the `stub` tenant and the anon key, the user's access token as session. */
async function userClient() {
  const user = await signedInClient();
  const token = user.session?.access_token as string;
  return {
    id: user.user.id,
    s3: client({ accessKeyId: "stub", secretAccessKey: ANON_KEY, sessionToken: token }),
  };
}

const made: string[] = [];

/** A bucket of this test's own, emptied and removed after the file. */
async function bucket(options: { acl?: "public-read" } = {}): Promise<string> {
  const name = `s3-${crypto.randomUUID().slice(0, 8)}`;
  await service.send(new CreateBucketCommand({ Bucket: name, ACL: options.acl }));
  made.push(name);
  return name;
}

afterAll(async () => {
  for (const name of made) {
    const listed = await service.send(new ListObjectsV2Command({ Bucket: name }));
    const keys = (listed.Contents ?? []).map((o) => ({ Key: o.Key as string }));
    if (keys.length)
      await service.send(new DeleteObjectsCommand({ Bucket: name, Delete: { Objects: keys } }));
    const uploads = await service.send(new ListMultipartUploadsCommand({ Bucket: name }));
    for (const u of uploads.Uploads ?? [])
      await service.send(
        new AbortMultipartUploadCommand({ Bucket: name, Key: u.Key, UploadId: u.UploadId }),
      );
    await service.send(new DeleteBucketCommand({ Bucket: name }));
  }
});

/** The error an S3 call fails with: its code, status and message. */
async function failure(call: Promise<unknown>) {
  try {
    await call;
  } catch (error) {
    const e = error as S3ServiceException;
    return { code: e.name, status: e.$metadata?.httpStatusCode, message: e.message };
  }
  throw new Error("the call succeeded");
}

async function text(s3: S3Client, Bucket: string, Key: string, Range?: string) {
  const got = await s3.send(new GetObjectCommand({ Bucket, Key, Range }));
  return (await got.Body?.transformToString()) ?? "";
}

describe("the service role's keys", () => {
  test("buckets: created, found, listed with their region, and refused while they hold objects", async () => {
    const name = await bucket();
    const head = await service.send(new HeadBucketCommand({ Bucket: name }));
    expect(head.BucketRegion).toBe("local");
    const location = await service.send(new GetBucketLocationCommand({ Bucket: name }));
    expect(location.LocationConstraint).toBe("local");
    const listed = await service.send(new ListBucketsCommand({}));
    expect(listed.Buckets?.map((b) => b.Name)).toContain(name);
    expect(await failure(service.send(new CreateBucketCommand({ Bucket: name })))).toMatchObject({
      code: "BucketAlreadyExists",
      status: 409,
    });
    await service.send(new PutObjectCommand({ Bucket: name, Key: "x", Body: "x" }));
    expect(await failure(service.send(new DeleteBucketCommand({ Bucket: name })))).toMatchObject({
      code: "ResourceNotEmpty",
      status: 409,
    });
    expect(
      await failure(service.send(new HeadBucketCommand({ Bucket: "no-such-bucket-here" }))),
    ).toMatchObject({ status: 404 });
  });

  test("objects: put with type and metadata, read whole or by range, replaced, copied and deleted", async () => {
    const name = await bucket();
    const put = await service.send(
      new PutObjectCommand({
        Bucket: name,
        Key: "notes/hello world.txt",
        Body: "hello, world",
        ContentType: "text/plain",
        CacheControl: "max-age=60",
        Metadata: { author: "ada" },
      }),
    );
    expect(put.ETag).toBe('"e4d7f1b4ed2e42d15898f4b27b019da4"');
    const got = await service.send(
      new GetObjectCommand({ Bucket: name, Key: "notes/hello world.txt" }),
    );
    expect(await got.Body?.transformToString()).toBe("hello, world");
    expect(got).toMatchObject({
      ContentType: "text/plain",
      CacheControl: "max-age=60",
      Metadata: { author: "ada" },
      ETag: put.ETag,
      ContentLength: 12,
    });
    expect(await text(service, name, "notes/hello world.txt", "bytes=7-11")).toBe("world");
    const head = await service.send(
      new HeadObjectCommand({ Bucket: name, Key: "notes/hello world.txt" }),
    );
    expect(head).toMatchObject({ ContentLength: 12, ETag: put.ETag });

    // a put replaces; the copy keeps the source's metadata unless told to replace it
    await service.send(new PutObjectCommand({ Bucket: name, Key: "b.txt", Body: "one" }));
    await service.send(new PutObjectCommand({ Bucket: name, Key: "b.txt", Body: "two" }));
    expect(await text(service, name, "b.txt")).toBe("two");
    const copied = await service.send(
      new CopyObjectCommand({
        Bucket: name,
        Key: "copy.txt",
        CopySource: `${name}/${encodeURIComponent("notes/hello world.txt")}`,
      }),
    );
    expect(copied.CopyObjectResult?.ETag).toBe(put.ETag);
    expect(
      (await service.send(new HeadObjectCommand({ Bucket: name, Key: "copy.txt" }))).Metadata,
    ).toEqual({ author: "ada" });
    await service.send(
      new CopyObjectCommand({
        Bucket: name,
        Key: "replaced.txt",
        CopySource: `${name}/b.txt`,
        MetadataDirective: "REPLACE",
        ContentType: "text/markdown",
        Metadata: { author: "grace" },
      }),
    );
    const replaced = await service.send(
      new HeadObjectCommand({ Bucket: name, Key: "replaced.txt" }),
    );
    expect(replaced).toMatchObject({ ContentType: "text/markdown", Metadata: { author: "grace" } });

    // deleting what is not there is done too; a batch says which went
    await service.send(new DeleteObjectCommand({ Bucket: name, Key: "b.txt" }));
    await service.send(new DeleteObjectCommand({ Bucket: name, Key: "b.txt" }));
    expect(await failure(text(service, name, "b.txt"))).toMatchObject({
      code: "NoSuchKey",
      status: 404,
      message: "Object not found",
    });
    const batch = await service.send(
      new DeleteObjectsCommand({
        Bucket: name,
        Delete: { Objects: [{ Key: "copy.txt" }, { Key: "replaced.txt" }, { Key: "ghost" }] },
      }),
    );
    expect(batch.Deleted?.map((d) => d.Key)).toEqual(["copy.txt", "replaced.txt", "ghost"]);
    expect(batch.Errors ?? []).toEqual([]);
    expect(
      await failure(
        service.send(new DeleteObjectCommand({ Bucket: "no-such-bucket-here", Key: "k" })),
      ),
    ).toMatchObject({ code: "NoSuchBucket", status: 404 });
  });

  test("a streamed body arrives whole: aws-chunked, with its checksum in the trailer", async () => {
    const name = await bucket();
    const chunks = Array.from({ length: 40 }, (_, i) => Buffer.alloc(4096, i));
    // a Node stream: the SDK cannot hash it ahead, so it frames it with a CRC32 trailer
    await service.send(
      new PutObjectCommand({
        Bucket: name,
        Key: "streamed.bin",
        Body: Readable.from(chunks),
        ContentLength: 40 * 4096,
      }),
    );
    const got = await service.send(new GetObjectCommand({ Bucket: name, Key: "streamed.bin" }));
    const bytes = await got.Body?.transformToByteArray();
    expect(Buffer.from(bytes ?? []).equals(Buffer.concat(chunks))).toBe(true);
  });

  test('keys with "." and ".." segments are keys of their own, as the client signed them', async () => {
    const name = await bucket();
    const keys = ["a/../b.txt", "a/./c.txt", "./d.txt"];
    for (const Key of keys)
      await service.send(new PutObjectCommand({ Bucket: name, Key, Body: `body of ${Key}` }));
    const listed = await service.send(new ListObjectsV2Command({ Bucket: name }));
    expect(listed.Contents?.map((o) => o.Key)).toEqual(["./d.txt", "a/../b.txt", "a/./c.txt"]);
    expect(await text(service, name, "a/../b.txt")).toBe("body of a/../b.txt");
  });

  test("listings: by prefix and delimiter, page by page, V1 and V2, keys URL-encoded when asked", async () => {
    const name = await bucket();
    const keys = ["a.txt", "docs/1.txt", "docs/2.txt", "docs/deep/3.txt", "sp ace/x.txt", "z.txt"];
    for (const Key of keys)
      await service.send(new PutObjectCommand({ Bucket: name, Key, Body: Key }));

    const all = await service.send(new ListObjectsV2Command({ Bucket: name }));
    expect(all.Contents?.map((o) => o.Key)).toEqual(keys);
    expect(all.Contents?.[0]).toMatchObject({ Size: 5, StorageClass: "STANDARD" });
    expect(all.KeyCount).toBe(6);

    const top = await service.send(new ListObjectsV2Command({ Bucket: name, Delimiter: "/" }));
    expect(top.Contents?.map((o) => o.Key)).toEqual(["a.txt", "z.txt"]);
    expect(top.CommonPrefixes?.map((p) => p.Prefix)).toEqual(["docs/", "sp ace/"]);

    const docs = await service.send(
      new ListObjectsV2Command({ Bucket: name, Prefix: "docs/", Delimiter: "/" }),
    );
    expect(docs.Contents?.map((o) => o.Key)).toEqual(["docs/1.txt", "docs/2.txt"]);
    expect(docs.CommonPrefixes?.map((p) => p.Prefix)).toEqual(["docs/deep/"]);

    // page by page, two entries at a time, a common prefix counting as one
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await service.send(
        new ListObjectsV2Command({
          Bucket: name,
          Delimiter: "/",
          MaxKeys: 2,
          ContinuationToken: token,
        }),
      );
      seen.push(
        ...(page.Contents ?? []).map((o) => o.Key as string),
        ...(page.CommonPrefixes ?? []).map((p) => p.Prefix as string),
      );
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
      pages++;
    } while (token);
    expect(seen.sort()).toEqual(["a.txt", "docs/", "sp ace/", "z.txt"].sort());
    expect(pages).toBe(2);

    const after = await service.send(
      new ListObjectsV2Command({ Bucket: name, StartAfter: "docs/2.txt" }),
    );
    expect(after.Contents?.map((o) => o.Key)).toEqual(["docs/deep/3.txt", "sp ace/x.txt", "z.txt"]);

    const v1 = await service.send(
      new ListObjectsCommand({ Bucket: name, Delimiter: "/", MaxKeys: 1 }),
    );
    expect(v1.Contents?.map((o) => o.Key)).toEqual(["a.txt"]);
    expect(v1).toMatchObject({ IsTruncated: true, NextMarker: "a.txt" });
    const v1Next = await service.send(
      new ListObjectsCommand({ Bucket: name, Delimiter: "/", Marker: "a.txt" }),
    );
    expect(v1Next.CommonPrefixes?.map((p) => p.Prefix)).toEqual(["docs/", "sp ace/"]);

    // what the AWS CLI asks for: keys percent-encoded in the XML, decoded by the SDK
    const encoded = await fetch(
      await getSignedUrl(
        service,
        new ListObjectsV2Command({ Bucket: name, Prefix: "sp ace/", EncodingType: "url" }),
      ),
    );
    expect(await encoded.text()).toContain("<Key>sp%20ace/x.txt</Key>");
    // a key Storage refuses (its allow-list is ASCII) is refused by S3 as by the JSON API
    expect(
      await failure(service.send(new PutObjectCommand({ Bucket: name, Key: "ö.txt", Body: "" }))),
    ).toMatchObject({ code: "InvalidKey", status: 400 });
  });

  test("a presigned URL reads and writes, until it expires or is changed", async () => {
    const name = await bucket();
    const putUrl = await getSignedUrl(
      service,
      new PutObjectCommand({ Bucket: name, Key: "via-url.txt", ContentType: "text/plain" }),
      { expiresIn: 60 },
    );
    const put = await fetch(putUrl, {
      method: "PUT",
      body: "uploaded by URL",
      headers: { "content-type": "text/plain" },
    });
    expect(put.status).toBe(200);
    const getUrl = await getSignedUrl(
      service,
      new GetObjectCommand({ Bucket: name, Key: "via-url.txt" }),
      { expiresIn: 60 },
    );
    const got = await fetch(getUrl);
    expect(got.status).toBe(200);
    expect(await got.text()).toBe("uploaded by URL");

    const old = await getSignedUrl(
      service,
      new GetObjectCommand({ Bucket: name, Key: "via-url.txt" }),
      { expiresIn: 60, signingDate: new Date(Date.now() - 3_600_000) },
    );
    const expired = await fetch(old);
    expect(expired.status).toBe(400);
    expect(await expired.text()).toContain("<Code>ExpiredToken</Code>");

    const changed = await fetch(getUrl.replace("via-url.txt", "other.txt"));
    expect(changed.status).toBe(403);
    const body = await changed.text();
    expect(body).toContain("<Code>SignatureDoesNotMatch</Code>");
    expect(changed.headers.get("content-type")).toBe("application/xml; charset=utf-8");
  });
});

describe("POST uploads (a form with a signed policy)", () => {
  /** Posts the fields, then the file, as a browser's form sends them. */
  async function postForm(
    url: string,
    fields: Record<string, string>,
    file: string,
    headers: Record<string, string> = {},
  ) {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    form.append("file", new Blob([file], { type: "text/plain" }), "upload.txt");
    const response = await fetch(url, { method: "POST", body: form, headers });
    const text = await response.text();
    return {
      status: response.status,
      etag: response.headers.get("etag"),
      code: /<Code>([^<]*)<\/Code>/.exec(text)?.[1],
      message: /<Message>([^<]*)<\/Message>/.exec(text)?.[1]?.replace(/&quot;/g, '"'),
    };
  }

  test("createPresignedPost's fields upload under its conditions, and only under them", async () => {
    const name = await bucket();
    const { url, fields } = await createPresignedPost(service, {
      Bucket: name,
      Key: "forms/report.txt",
      Conditions: [
        ["starts-with", "$Content-Type", "text/"],
        ["content-length-range", 1, 64],
      ],
      Fields: { "Content-Type": "text/plain" },
      Expires: 60,
    });
    const done = await postForm(url, fields, "filed by a form");
    expect(done).toMatchObject({ status: 200, etag: expect.stringMatching(/^"[0-9a-f]{32}"$/) });
    const got = await service.send(new GetObjectCommand({ Bucket: name, Key: "forms/report.txt" }));
    expect(await got.Body?.transformToString()).toBe("filed by a form");
    expect(got.ContentType).toBe("text/plain");

    // the policy's conditions: another key, a type it excludes, a file past its range
    expect(await postForm(url, { ...fields, key: "forms/other.txt" }, "x")).toMatchObject({
      status: 403,
      code: "AccessDenied",
      message: 'Policy condition failed: "key" does not match',
    });
    expect(await postForm(url, { ...fields, "Content-Type": "image/png" }, "x")).toMatchObject({
      status: 403,
      message: 'Policy condition failed: "content-type" does not start with "text/"',
    });
    expect(await postForm(url, fields, "y".repeat(65))).toMatchObject({
      status: 413,
      code: "EntityTooLarge",
    });
    expect(await postForm(url, fields, "")).toMatchObject({ status: 400, code: "EntityTooSmall" });
    // a field the policy does not name, a policy changed after signing, one for another bucket
    expect(await postForm(url, { ...fields, "x-amz-meta-extra": "1" }, "x")).toMatchObject({
      status: 403,
      message: 'Policy condition failed: field "x-amz-meta-extra" is not covered by the policy',
    });
    const policy = JSON.parse(Buffer.from(fields.Policy as string, "base64").toString());
    policy.conditions.push(["content-length-range", 0, 10_000_000]);
    const changed = Buffer.from(JSON.stringify(policy)).toString("base64");
    expect(await postForm(url, { ...fields, Policy: changed }, "x")).toMatchObject({
      status: 403,
      code: "SignatureDoesNotMatch",
    });
    const other = await bucket();
    expect(await postForm(url.replace(name, other), fields, "x")).toMatchObject({
      status: 403,
      message: 'Policy condition failed: "bucket" does not match',
    });

    const expired = await createPresignedPost(service, {
      Bucket: name,
      Key: "late.txt",
      Expires: -60,
    });
    expect(await postForm(expired.url, expired.fields, "x")).toMatchObject({
      status: 400,
      code: "ExpiredToken",
    });
    // a form with the keys from another website's page: refused like the secret key
    expect(await postForm(url, fields, "x", { origin: "https://evil.example" })).toMatchObject({
      status: 403,
      code: "AccessDenied",
    });
    // a form that is not one: a 400, not a crash
    const broken = await fetch(url, {
      method: "POST",
      headers: { "content-type": "multipart/form-data; boundary=x" },
      body: "--x\r\nContent-Disposition: form-data; name=key\r\n\r\nk",
    });
    expect(broken.status).toBe(400);
  });
});

describe("multipart uploads", () => {
  test("lib-storage's Upload in two parts (5 MiB and 1 KiB) arrives whole, with the whole's MD5", async () => {
    const name = await bucket();
    const data = Buffer.alloc(5 * 1024 * 1024 + 1024);
    for (let i = 0; i < data.length; i += 4096) data[i] = (i / 4096) % 251;
    const done = await new Upload({
      client: service,
      params: { Bucket: name, Key: "big.bin", Body: data, ContentType: "application/x-test" },
      partSize: 5 * 1024 * 1024,
    }).done();
    const md5 = (await import("node:crypto")).createHash("md5").update(data).digest("hex");
    expect(done.ETag).toBe(`"${md5}"`);
    const got = await service.send(new GetObjectCommand({ Bucket: name, Key: "big.bin" }));
    expect(got.ContentType).toBe("application/x-test");
    expect(Buffer.from((await got.Body?.transformToByteArray()) ?? []).equals(data)).toBe(true);
    // the upload is gone once complete
    const uploads = await service.send(new ListMultipartUploadsCommand({ Bucket: name }));
    expect(uploads.Uploads ?? []).toEqual([]);
  });

  test("parts listed, replaced, copied from an object, checked on completion, and an abort leaves nothing", async () => {
    const name = await bucket();
    const Key = "parts.bin";
    const { UploadId } = await service.send(
      new CreateMultipartUploadCommand({ Bucket: name, Key }),
    );
    expect(UploadId).toMatch(/^[0-9a-f-]{36}$/);
    const part = (PartNumber: number, Body: string) =>
      service.send(new UploadPartCommand({ Bucket: name, Key, UploadId, PartNumber, Body }));
    const first = await part(1, "first ");
    await part(2, "draft");
    const second = await part(2, "second ");
    await service.send(
      new PutObjectCommand({ Bucket: name, Key: "source.txt", Body: "0123456789" }),
    );
    const third = await service.send(
      new UploadPartCopyCommand({
        Bucket: name,
        Key,
        UploadId,
        PartNumber: 3,
        CopySource: `${name}/source.txt`,
        CopySourceRange: "bytes=2-5",
      }),
    );
    const listed = await service.send(new ListPartsCommand({ Bucket: name, Key, UploadId }));
    expect(listed.Parts?.map((p) => [p.PartNumber, p.ETag, p.Size])).toEqual([
      [1, first.ETag, 6],
      [2, second.ETag, 7],
      [3, third.CopyPartResult?.ETag, 4],
    ]);
    const inProgress = await service.send(new ListMultipartUploadsCommand({ Bucket: name }));
    expect(inProgress.Uploads?.map((u) => [u.Key, u.UploadId])).toEqual([[Key, UploadId]]);

    // the list must name each part with its ETag
    const complete = (Parts: Array<{ PartNumber: number; ETag?: string }>) =>
      service.send(
        new CompleteMultipartUploadCommand({
          Bucket: name,
          Key,
          UploadId,
          MultipartUpload: { Parts },
        }),
      );
    expect(await failure(complete([{ PartNumber: 1, ETag: '"0"' }]))).toMatchObject({
      code: "InvalidChecksum",
      status: 400,
      message: "Invalid ETag for part 1",
    });
    expect(await failure(complete([{ PartNumber: 9, ETag: first.ETag }]))).toMatchObject({
      code: "MissingPart",
      status: 400,
    });
    // an upload's id works for its own key only
    expect(
      await failure(
        service.send(
          new UploadPartCommand({ Bucket: name, Key: "other", UploadId, PartNumber: 1, Body: "x" }),
        ),
      ),
    ).toMatchObject({ code: "NoSuchUpload", status: 404 });

    await complete([
      { PartNumber: 1, ETag: first.ETag },
      { PartNumber: 2, ETag: second.ETag },
      { PartNumber: 3, ETag: third.CopyPartResult?.ETag },
    ]);
    expect(await text(service, name, Key)).toBe("first second 2345");

    const aborted = await service.send(
      new CreateMultipartUploadCommand({ Bucket: name, Key: "abandoned.bin" }),
    );
    await service.send(
      new UploadPartCommand({
        Bucket: name,
        Key: "abandoned.bin",
        UploadId: aborted.UploadId,
        PartNumber: 1,
        Body: "lost",
      }),
    );
    await service.send(
      new AbortMultipartUploadCommand({
        Bucket: name,
        Key: "abandoned.bin",
        UploadId: aborted.UploadId,
      }),
    );
    expect(
      await failure(
        service.send(
          new ListPartsCommand({ Bucket: name, Key: "abandoned.bin", UploadId: aborted.UploadId }),
        ),
      ),
    ).toMatchObject({ code: "NoSuchUpload", status: 404 });
    expect(await failure(text(service, name, "abandoned.bin"))).toMatchObject({
      code: "NoSuchKey",
    });
  });

  test("an upload past the bucket's size limit is refused as its parts come", async () => {
    const name = `s3-${crypto.randomUUID().slice(0, 8)}`;
    // a bucket of 1 KiB, made through the JSON API (S3 has no size limit to set)
    const made_ = await fetch(`${BACKEND_URL}/storage/v1/bucket`, {
      method: "POST",
      headers: { apikey: KEYS.secret, "content-type": "application/json" },
      body: JSON.stringify({ name, file_size_limit: 1024 }),
    });
    expect(made_.status).toBe(200);
    made.push(name);
    expect(
      await failure(
        service.send(new PutObjectCommand({ Bucket: name, Key: "big", Body: "x".repeat(2048) })),
      ),
    ).toMatchObject({ code: "EntityTooLarge", status: 413 });
    const { UploadId } = await service.send(
      new CreateMultipartUploadCommand({ Bucket: name, Key: "big" }),
    );
    await service.send(
      new UploadPartCommand({
        Bucket: name,
        Key: "big",
        UploadId,
        PartNumber: 1,
        Body: "x".repeat(1000),
      }),
    );
    expect(
      await failure(
        service.send(
          new UploadPartCommand({
            Bucket: name,
            Key: "big",
            UploadId,
            PartNumber: 2,
            Body: "x".repeat(100),
          }),
        ),
      ),
    ).toMatchObject({ code: "EntityTooLarge", status: 413 });
  });
});

describe("a user's session token", () => {
  test("writes and reads their own folder under the app's policies, and nobody else's", async () => {
    const ada = await userClient();
    const grace = await userClient();
    const png = Buffer.from("89504e470d0a1a0a", "hex");
    await ada.s3.send(
      new PutObjectCommand({
        Bucket: "avatars",
        Key: `${ada.id}/me.png`,
        Body: png,
        ContentType: "image/png",
      }),
    );
    // the policy: only into one's own folder, as the JSON API refuses it
    expect(
      await failure(
        ada.s3.send(
          new PutObjectCommand({
            Bucket: "avatars",
            Key: `${grace.id}/me.png`,
            Body: png,
            ContentType: "image/png",
          }),
        ),
      ),
    ).toMatchObject({
      code: "AccessDenied",
      status: 403,
      message: "new row violates row-level security policy",
    });
    // the bucket's types hold for S3 too
    expect(
      await failure(
        ada.s3.send(
          new PutObjectCommand({
            Bucket: "avatars",
            Key: `${ada.id}/me.png`,
            Body: "<svg/>",
            ContentType: "image/svg+xml",
          }),
        ),
      ),
    ).toMatchObject({ code: "InvalidMimeType", status: 415 });
    const listed = await grace.s3.send(new ListObjectsV2Command({ Bucket: "avatars" }));
    expect((listed.Contents ?? []).some((o) => o.Key?.startsWith(ada.id))).toBe(false);
    expect(await failure(text(grace.s3, "avatars", `${ada.id}/me.png`))).toMatchObject({
      code: "NoSuchKey",
      status: 404,
    });
    const own = await ada.s3.send(new ListObjectsV2Command({ Bucket: "avatars", Prefix: ada.id }));
    expect(own.Contents?.map((o) => o.Key)).toEqual([`${ada.id}/me.png`]);
    // uploads in progress are the service role's to list (upstream's grants)
    expect(
      await failure(ada.s3.send(new ListMultipartUploadsCommand({ Bucket: "avatars" }))),
    ).toMatchObject({ code: "AccessDenied", status: 403 });
    await ada.s3.send(new DeleteObjectCommand({ Bucket: "avatars", Key: `${ada.id}/me.png` }));
  });

  test("a forged, expired or mis-signed token is refused", async () => {
    const ada = await userClient();
    const forged = await new SignJWT({ role: "service_role", sub: ada.id })
      .setProtectedHeader({ alg: "HS256" })
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode("not-the-project-secret-not-the-project-secret"));
    const withToken = (sessionToken: string, secretAccessKey = ANON_KEY) =>
      client({ accessKeyId: "stub", secretAccessKey, sessionToken }).send(
        new ListBucketsCommand({}),
      );
    expect(await failure(withToken(forged))).toMatchObject({
      code: "AccessDenied",
      status: 403,
      message: "signature verification failed",
    });
    // a role the API does not know (a database superuser's) is never taken on
    const admin = await new SignJWT({ role: "supabase_admin", sub: ada.id })
      .setProtectedHeader({ alg: "HS256" })
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode(KEYS.jwtSecret));
    expect(await failure(withToken(admin))).toMatchObject({
      code: "AccessDenied",
      status: 403,
      message: "Access denied: Invalid role",
    });
    expect(await failure(withToken("not-a-jwt"))).toMatchObject({
      code: "AccessDenied",
      message: "Invalid Compact JWS",
    });
    expect(await failure(withToken(forged, "not-the-anon-key"))).toMatchObject({
      code: "SignatureDoesNotMatch",
      status: 403,
      message: expect.stringContaining("The session token should be a valid JWT token"),
    });
    expect(
      await failure(
        client({ accessKeyId: "wrong", secretAccessKey: ANON_KEY, sessionToken: forged }).send(
          new ListBucketsCommand({}),
        ),
      ),
    ).toMatchObject({ code: "AccessDenied", message: "Invalid Access Key" });
  });
});

describe("refusals", () => {
  test("the wrong secret, no signature, an operation S3 does not have, bad XML", async () => {
    expect(
      await failure(
        client({ ...S3_CREDENTIALS, secretAccessKey: "wrong" }).send(new ListBucketsCommand({})),
      ),
    ).toMatchObject({ code: "SignatureDoesNotMatch", status: 403 });
    expect(
      await failure(
        client({ ...S3_CREDENTIALS, accessKeyId: "wrong" }).send(new ListBucketsCommand({})),
      ),
    ).toMatchObject({ code: "AccessDenied", status: 403, message: "Invalid Access Key" });

    const unsigned = await fetch(`${ENDPOINT}/avatars`);
    expect(unsigned.status).toBe(403);
    const body = await unsigned.text();
    expect(body).toMatch(/^<\?xml version="1.0" encoding="UTF-8" standalone="yes"\?>/);
    expect(body).toContain(
      '<Error xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Resource>avatars</Resource><Code>AccessDenied</Code><Message>Missing signature</Message></Error>',
    );
    // a POST to a bucket without ?delete is no S3 operation: upstream's empty 404
    const none = await fetch(`${ENDPOINT}/avatars`, { method: "POST" });
    expect(none.status).toBe(404);
    expect(await none.text()).toBe("");
  });

  test("bad input is a 4xx in S3's words: bodies, parameters, tokens", async () => {
    const name = await bucket();
    // a DeleteObjects whose body is replaced before it is signed: well signed, any body
    const post = async (body: string) => {
      const command = new DeleteObjectsCommand({
        Bucket: name,
        Delete: { Objects: [{ Key: "a" }] },
      });
      command.middlewareStack.add(
        (next) => (args) => {
          (args.request as { body: unknown }).body = body;
          return next(args);
        },
        { step: "build", priority: "high" },
      );
      const { code, status, message } = await failure(service.send(command));
      return { status, code, message };
    };
    expect(await post("<Delete><Object></Object></Delete>")).toEqual({
      status: 400,
      code: "InvalidRequest",
      message: "Body, Delete, Object, 0 must have required property 'Key'",
    });
    expect(await post("<Other/>")).toMatchObject({ status: 400, code: "InvalidRequest" });
    expect(await post('<!DOCTYPE d [<!ENTITY x "y">]><Delete/>')).toMatchObject({
      status: 400,
      code: "MalformedXML",
    });
    expect(
      await post(`<Delete>${"<Object><Key>k</Key></Object>".repeat(40_000)}</Delete>`),
    ).toMatchObject({
      status: 413,
      code: "EntityTooLarge",
    });

    // (any command: getSignedUrl's own type takes each one's)
    const asked = async (command: any, method = "GET") => {
      const response = await fetch(await getSignedUrl(service, command), { method });
      const text = await response.text();
      const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1];
      return { status: response.status, message: message?.replace(/&gt;/g, ">") };
    };
    expect(await asked(new ListObjectsV2Command({ Bucket: name, MaxKeys: -1 }))).toEqual({
      status: 400,
      message: "Querystring, max-keys must be >= 0",
    });
    expect(
      await asked(new ListObjectsV2Command({ Bucket: name, ContinuationToken: "bm9wZQ==" })),
    ).toMatchObject({ status: 400 });
    expect(
      await asked(
        new UploadPartCommand({ Bucket: name, Key: "k", UploadId: "u", PartNumber: 0 }),
        "PUT",
      ),
    ).toEqual({ status: 400, message: "Querystring, partNumber must be >= 1" });
    expect(
      await asked(
        new UploadPartCommand({ Bucket: name, Key: "k", UploadId: "no-such", PartNumber: 1 }),
        "PUT",
      ),
    ).toMatchObject({ status: 404 });
  });

  test("the CLI's public keys and HS256 tokens are refused from another website's page", async () => {
    const name = await bucket();
    const url = await getSignedUrl(service, new ListObjectsV2Command({ Bucket: name }));
    expect((await fetch(url)).status).toBe(200);
    const foreign = await fetch(url, { headers: { origin: "https://evil.example" } });
    expect(foreign.status).toBe(403);
    expect(await foreign.text()).toContain("from another origin");
    // a page of the project's own may (its site_url's origin)
    const own = await fetch(url, { headers: { origin: "http://localhost:5173" } });
    expect(own.status).toBe(200);
    // a session token anyone can mint with the CLI's public JWT secret: not from elsewhere either
    const minted = await new SignJWT({ role: "authenticated", sub: crypto.randomUUID() })
      .setProtectedHeader({ alg: "HS256" })
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode(KEYS.jwtSecret));
    const asUser = client({ accessKeyId: "stub", secretAccessKey: ANON_KEY, sessionToken: minted });
    const userUrl = await getSignedUrl(asUser, new ListObjectsV2Command({ Bucket: name }));
    expect((await fetch(userUrl)).status).toBe(200);
    const minted_ = await fetch(userUrl, { headers: { "sec-fetch-site": "cross-site" } });
    expect(minted_.status).toBe(403);
  });

  test("with [storage.s3_protocol] off there is no S3 endpoint: Storage's 404", async () => {
    const local = await memoryBackend({ storage: { s3Protocol: { enabled: false } } });
    try {
      const response = await local.fetch(`${local.backend.url}/storage/v1/s3/avatars`);
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({
        message: "Route GET:/s3/avatars not found",
      });
    } finally {
      await local.close();
    }
  });
});

// Resumable uploads (TUS) at /storage/v1/upload/resumable: an upload whose connection drops
// halfway resumes from the bytes that arrived (tus-js-client, as an app would use it), under the
// same rules as any upload: another user may neither start nor continue one in the owner's folder.
import { request as httpRequest } from "node:http";
import { Upload } from "tus-js-client";
import { describe, expect, test } from "vitest";
import { SECRET_KEY } from "../../../../tests/support/backend.ts";
import { adminClient, member, PUBLISHABLE_KEY, STORAGE_URL } from "./support.ts";

const ENDPOINT = `${STORAGE_URL}/upload/resumable`;

function metadata(fields: Record<string, string>): string {
  return Object.entries(fields)
    .map(([k, v]) => `${k} ${Buffer.from(v).toString("base64")}`)
    .join(",");
}

/** Starts an upload (the TUS creation request), returning its URL. */
async function create(token: string, objectName: string, length: number): Promise<Response> {
  return fetch(ENDPOINT, {
    method: "POST",
    headers: {
      apikey: PUBLISHABLE_KEY,
      authorization: `Bearer ${token}`,
      "tus-resumable": "1.0.0",
      "upload-length": String(length),
      "upload-metadata": metadata({
        bucketName: "storage-private",
        objectName,
        contentType: "application/octet-stream",
        cacheControl: "3600",
      }),
    },
  });
}

/** A 4-byte upload made in one PATCH: the creation's answer if it was refused, else the PATCH's. */
async function uploadInOne(
  headers: Record<string, string>,
  fields: Record<string, string>,
): Promise<Response> {
  const created = await fetch(ENDPOINT, {
    method: "POST",
    headers: { ...headers, "upload-length": "4", "upload-metadata": metadata(fields) },
  });
  if (created.status !== 201) return created;
  return fetch(created.headers.get("location") ?? "", {
    method: "PATCH",
    headers: {
      ...headers,
      "upload-offset": "0",
      "content-type": "application/offset+octet-stream",
    },
    body: "data",
  });
}

async function offsetOf(url: string, token: string): Promise<number> {
  const head = await fetch(url, {
    method: "HEAD",
    headers: {
      apikey: PUBLISHABLE_KEY,
      authorization: `Bearer ${token}`,
      "tus-resumable": "1.0.0",
    },
  });
  return Number(head.headers.get("upload-offset"));
}

/** A PATCH that sends `part` of the body it announces, then drops the connection after `wait` ms. */
async function droppedPatch(url: string, token: string, body: Buffer, part: number, wait: number) {
  const req = httpRequest(url, {
    method: "PATCH",
    headers: {
      apikey: PUBLISHABLE_KEY,
      authorization: `Bearer ${token}`,
      "tus-resumable": "1.0.0",
      "upload-offset": "0",
      "content-type": "application/offset+octet-stream",
      "content-length": String(body.length),
    },
  });
  req.on("error", () => {});
  await new Promise<void>((resolve) => req.write(body.subarray(0, part), () => resolve()));
  await new Promise((r) => setTimeout(r, wait));
  req.destroy();
  // the server lets go of the dropped request before another may continue the upload
  await new Promise((r) => setTimeout(r, 100));
}

describe("resumable uploads", () => {
  test("a dropped connection resumes from the bytes that arrived, and the object is whole", async () => {
    const owner = await member();
    const objectName = `${owner.id}/big.bin`;
    const body = Buffer.alloc(256 * 1024, 0);
    for (let i = 0; i < body.length; i++) body[i] = (i * 7) % 251;

    const created = await create(owner.token, objectName, body.length);
    expect(created.status).toBe(201);
    const url = created.headers.get("location") ?? "";
    expect(url.startsWith(`${ENDPOINT}/`)).toBe(true);

    // dropped once some bytes were stored (on a busy machine, the first tries may be too quick)
    let offset = 0;
    for (const wait of [200, 1000, 4000]) {
      await droppedPatch(url, owner.token, body, 100 * 1024, wait);
      offset = await offsetOf(url, owner.token);
      if (offset > 0) break;
    }
    expect(offset).toBeGreaterThan(0);
    expect(offset).toBeLessThan(body.length);

    let resumedFrom = -1;
    await new Promise<void>((resolve, reject) => {
      const upload = new Upload(body, {
        uploadUrl: url,
        headers: { apikey: PUBLISHABLE_KEY, authorization: `Bearer ${owner.token}` },
        chunkSize: 64 * 1024,
        // a lock the dropped request still holds is released within a moment
        retryDelays: [100, 500, 1000],
        onProgress: (sent) => {
          if (resumedFrom < 0) resumedFrom = sent;
        },
        onSuccess: () => resolve(),
        onError: reject,
      });
      upload.start();
    });
    expect(resumedFrom).toBeGreaterThan(offset - 1);

    const { data } = await owner.client.storage.from("storage-private").download(objectName);
    expect(Buffer.from(await (data as Blob).arrayBuffer()).equals(body)).toBe(true);
    const info = await owner.client.storage.from("storage-private").info(objectName);
    expect(info.data).toMatchObject({ size: body.length, cacheControl: "max-age=3600" });
  });

  test("another user can neither start an upload in the owner's folder nor continue the owner's", async () => {
    const owner = await member();
    const other = await member();
    const refused = await create(other.token, `${owner.id}/theirs.bin`, 10);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toBe("new row violates row-level security policy");

    const created = await create(owner.token, `${owner.id}/mine.bin`, 4);
    const url = created.headers.get("location") ?? "";
    const hijack = await fetch(url, {
      method: "PATCH",
      headers: {
        apikey: PUBLISHABLE_KEY,
        authorization: `Bearer ${other.token}`,
        "tus-resumable": "1.0.0",
        "upload-offset": "0",
        "content-type": "application/offset+octet-stream",
      },
      body: "evil",
    });
    expect(hijack.status).toBe(403);
    expect(await offsetOf(url, owner.token)).toBe(0);
  });

  test("through a signed upload URL: its token in x-signature, for its own path only", async () => {
    const owner = await member();
    const objectName = `${owner.id}/signed.bin`;
    const made = await owner.client.storage
      .from("storage-private")
      .createSignedUploadUrl(objectName);
    const token = made.data?.token ?? "";
    const body = Buffer.from("uploaded by whoever holds the link");
    const upload = (name: string) =>
      new Promise<void>((resolve, reject) => {
        new Upload(body, {
          endpoint: `${ENDPOINT}/sign`,
          headers: { "x-signature": token },
          metadata: { bucketName: "storage-private", objectName: name, contentType: "text/plain" },
          retryDelays: [],
          onSuccess: () => resolve(),
          onError: reject,
        }).start();
      });
    await upload(objectName);
    const { data } = await owner.client.storage.from("storage-private").download(objectName);
    expect(await data?.text()).toBe("uploaded by whoever holds the link");
    await expect(upload(`${owner.id}/elsewhere.bin`)).rejects.toThrow(/Invalid signature/);
  });

  test("an upload of a deferred length is held to the bucket's limit as its bytes come", async () => {
    const owner = await member();
    const headers = {
      apikey: PUBLISHABLE_KEY,
      authorization: `Bearer ${owner.token}`,
      "tus-resumable": "1.0.0",
    };
    // storage-limited: 64 bytes at most
    const created = await fetch(ENDPOINT, {
      method: "POST",
      headers: {
        ...headers,
        "upload-defer-length": "1",
        "upload-metadata": metadata({
          bucketName: "storage-limited",
          objectName: `${owner.id}/deferred.png`,
          contentType: "image/png",
        }),
      },
    });
    expect(created.status).toBe(201);
    const patch = await fetch(created.headers.get("location") ?? "", {
      method: "PATCH",
      headers: {
        ...headers,
        "upload-offset": "0",
        "upload-length": "1000",
        "content-type": "application/offset+octet-stream",
      },
      body: new Uint8Array(1000),
    });
    expect(patch.status).toBe(413);
    const { data } = await owner.client.storage
      .from("storage-limited")
      .exists(`${owner.id}/deferred.png`);
    expect(data).toBe(false);
  });

  test("upstream's metadata rules: cacheControl in seconds or no-cache, a type checked when named", async () => {
    const owner = await member();
    const headers = {
      apikey: PUBLISHABLE_KEY,
      authorization: `Bearer ${owner.token}`,
      "tus-resumable": "1.0.0",
    };
    const uploadWhole = (bucketName: string, name: string, fields: Record<string, string>) =>
      uploadInOne(headers, { bucketName, objectName: name, ...fields });
    const storage = owner.client.storage.from("storage-private");
    const cases: [string, string][] = [
      ["60", "max-age=60"],
      ["3600, public", "no-cache"],
      ["max-age=60", "no-cache"],
    ];
    for (const [i, [cacheControl, kept]] of cases.entries()) {
      const name = `${owner.id}/cache-${i}.bin`;
      expect((await uploadWhole("storage-private", name, { cacheControl })).status).toBe(204);
      expect((await storage.info(name)).data?.cacheControl).toBe(kept);
    }

    // storage-limited allows image/png only: a type named is checked; none named is not (stored
    // as application/octet-stream), as upstream's onCreate
    const named = await uploadWhole("storage-limited", `${owner.id}/named.txt`, {
      contentType: "text/plain",
    });
    expect(named.status).toBe(415);
    const unnamed = await uploadWhole("storage-limited", `${owner.id}/unnamed.bin`, {});
    expect(unnamed.status).toBe(204);
    const info = await owner.client.storage.from("storage-limited").info(`${owner.id}/unnamed.bin`);
    expect(info.data?.contentType).toBe("application/octet-stream");
  });

  test("a bucket's file_size_limit of 0: a plain upload may hold no byte, a resumable one has no limit", async () => {
    // upstream reads the limit twice: getStandardMaxFileSizeLimit counts any number, the TUS
    // server's `bucket.file_size_limit || global` counts 0 as none
    const admin = adminClient();
    const bucket = `zero-limit-${crypto.randomUUID().slice(0, 8)}`;
    expect(
      (await admin.storage.createBucket(bucket, { public: false, fileSizeLimit: 0 })).error,
    ).toBeNull();
    try {
      const plain = await admin.storage.from(bucket).upload("plain.txt", "some bytes");
      expect(plain.error).toMatchObject({
        statusCode: "413",
        message: "The object exceeded the maximum allowed size",
      });
      const form = new FormData();
      form.append("file", new Blob(["some bytes"], { type: "text/plain" }));
      const multipart = await fetch(`${STORAGE_URL}/object/${bucket}/form.txt`, {
        method: "POST",
        headers: { apikey: SECRET_KEY },
        body: form,
      });
      expect(await multipart.json()).toMatchObject({ statusCode: "413", code: "EntityTooLarge" });
      expect((await admin.storage.from(bucket).list()).data).toEqual([]);

      const headers = { apikey: SECRET_KEY, "tus-resumable": "1.0.0" };
      const patch = await uploadInOne(headers, { bucketName: bucket, objectName: "tus.bin" });
      // 204: the creation was taken (a refused one would be answered here) and so was the PATCH
      expect(patch.status).toBe(204);
      expect((await admin.storage.from(bucket).info("tus.bin")).data?.size).toBe(4);
    } finally {
      await admin.storage.emptyBucket(bucket);
      await admin.storage.deleteBucket(bucket);
    }
  });

  test("the PATCH that completes an upload answers Tus-Complete: 1; one that does not, none", async () => {
    const owner = await member();
    const created = await create(owner.token, `${owner.id}/in-two.bin`, 8);
    expect(created.status).toBe(201);
    const patch = (offset: number, body: string) =>
      fetch(created.headers.get("location") ?? "", {
        method: "PATCH",
        headers: {
          apikey: PUBLISHABLE_KEY,
          authorization: `Bearer ${owner.token}`,
          "tus-resumable": "1.0.0",
          "upload-offset": String(offset),
          "content-type": "application/offset+octet-stream",
        },
        body,
      });
    const first = await patch(0, "half");
    expect(first.status).toBe(204);
    expect(first.headers.get("tus-complete")).toBeNull();
    const last = await patch(4, "done");
    expect(last.status).toBe(204);
    expect(last.headers.get("tus-complete")).toBe("1");
    const { data } = await owner.client.storage
      .from("storage-private")
      .download(`${owner.id}/in-two.bin`);
    expect(await data?.text()).toBe("halfdone");
  });

  test("upstream's refusals of a creation without metadata or a signed one without its token", async () => {
    const owner = await member();
    const headers = {
      apikey: PUBLISHABLE_KEY,
      authorization: `Bearer ${owner.token}`,
      "tus-resumable": "1.0.0",
      "upload-length": "4",
    };
    const bare = await fetch(ENDPOINT, { method: "POST", headers });
    expect(bare.status).toBe(400);
    expect(await bare.text()).toBe("Metadata header is required");
    const unsigned = await fetch(`${ENDPOINT}/sign`, {
      method: "POST",
      headers: {
        ...headers,
        "upload-metadata": metadata({
          bucketName: "storage-private",
          objectName: `${owner.id}/unsigned.bin`,
        }),
      },
    });
    expect(unsigned.status).toBe(400);
    expect(await unsigned.text()).toBe("Missing x-signature header");
  });

  test("an upload over the size limit is refused at creation", async () => {
    const owner = await member();
    const refused = await create(owner.token, `${owner.id}/huge.bin`, 10 * 1024 ** 3);
    expect(refused.status).toBe(413);
  });
});

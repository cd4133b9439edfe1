// Buckets through storage-js: the secret key's service role creates, reads, updates, empties and
// deletes them; a signed-in user or anon is refused by RLS on storage.buckets (no policy), as on
// hosted Supabase; upstream's checks and answers for names, sizes, types, a non-empty bucket.
import { describe, expect, test } from "vitest";
import { adminClient, anonClient, member, storageFetch } from "./support.ts";

const unique = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}`;

describe("buckets", () => {
  test("create, get, list, update, empty, delete with the secret key", async () => {
    const storage = adminClient().storage;
    const id = unique("bucket");
    const created = await storage.createBucket(id, {
      public: false,
      fileSizeLimit: "1MB",
      allowedMimeTypes: ["image/png", "text/*"],
    });
    expect(created).toEqual({ data: { name: id }, error: null });
    const got = await storage.getBucket(id);
    expect(got.data).toMatchObject({
      id,
      name: id,
      owner: "",
      public: false,
      file_size_limit: 1_000_000,
      allowed_mime_types: ["image/png", "text/*"],
    });
    const listed = await storage.listBuckets({ search: id });
    expect(listed.data?.map((b) => [b.id, b.type])).toEqual([[id, "STANDARD"]]);

    expect(
      await storage.updateBucket(id, { public: true, fileSizeLimit: null, allowedMimeTypes: null }),
    ).toEqual({ data: { message: "Successfully updated" }, error: null });
    expect((await storage.getBucket(id)).data).toMatchObject({
      public: true,
      file_size_limit: null,
      allowed_mime_types: null,
    });

    await storage.from(id).upload("a.txt", new Blob(["a"], { type: "text/plain" }));
    const notEmpty = await storage.deleteBucket(id);
    expect(notEmpty.error).toMatchObject({
      statusCode: "409",
      message: "The bucket you tried to delete is not empty",
    });
    expect((await storage.emptyBucket(id)).data).toEqual({
      message: "Empty bucket has been queued. Completion may take up to an hour.",
    });
    expect((await storage.from(id).list()).data).toEqual([]);
    expect(await storage.deleteBucket(id)).toEqual({
      data: { message: "Successfully deleted" },
      error: null,
    });
    expect((await storage.getBucket(id)).error).toMatchObject({
      statusCode: "404",
      message: "Bucket not found",
    });
  });

  test("a signed-in user and anon are refused by RLS; they see no bucket", async () => {
    const user = await member();
    const refused = await user.client.storage.createBucket(unique("mine"));
    expect(refused.error).toMatchObject({
      statusCode: "403",
      message: "new row violates row-level security policy",
    });
    expect((await anonClient().storage.createBucket(unique("anon"))).error?.message).toBe(
      "new row violates row-level security policy",
    );
    expect((await user.client.storage.listBuckets()).data).toEqual([]);
    expect((await user.client.storage.getBucket("storage-private")).error?.message).toBe(
      "Bucket not found",
    );
  });

  test("emptying a bucket is the service role's alone, whatever the policies", async () => {
    const user = await member();
    const key = `${user.id}/kept.txt`;
    const bucket = user.client.storage.from("storage-private");
    expect((await bucket.upload(key, new Blob(["kept"], { type: "text/plain" }))).error).toBeNull();
    for (const token of [user.token, undefined]) {
      const answer = await storageFetch("/bucket/storage-private/empty", { method: "POST", token });
      expect(answer.status).toBe(403);
      expect(await answer.json()).toEqual({
        statusCode: "403",
        code: "AccessDenied",
        error: "Unauthorized",
        message: "Access denied: Invalid role",
      });
    }
    expect((await bucket.list(user.id)).data?.map((o) => o.name)).toEqual(["kept.txt"]);
  });

  test("upstream's refusals: names, duplicates, sizes, MIME types, bad bodies", async () => {
    const storage = adminClient().storage;
    expect((await storage.createBucket("no/slash")).error).toMatchObject({
      statusCode: "400",
      message: "Bucket name invalid",
    });
    expect((await storage.createBucket(" padded")).error?.message).toBe("Bucket name invalid");
    // the suffix hosted Storage keeps for its analytics (Iceberg) buckets
    expect((await storage.createBucket(`${unique("analytics")}--table-s3`)).error?.message).toBe(
      "Bucket name invalid",
    );
    expect((await storage.createBucket("storage-private")).error).toMatchObject({
      statusCode: "409",
      message: "The resource already exists",
    });
    expect(
      (await storage.createBucket(unique("big"), { public: false, fileSizeLimit: "100GB" })).error,
    ).toMatchObject({ statusCode: "413", message: "The object exceeded the maximum allowed size" });
    expect(
      (await storage.createBucket(unique("size"), { public: false, fileSizeLimit: "lots" })).error
        ?.message,
    ).toBe("Invalid file size format, hint: use 20GB / 20MB / 30KB / 3B");
    expect(
      (
        await storage.createBucket(unique("mime"), {
          public: false,
          allowedMimeTypes: ["not a type"],
        })
      ).error,
    ).toMatchObject({ statusCode: "415", message: "mime type not a type is not supported" });
    const raw = await storageFetch("/bucket", {
      method: "POST",
      headers: { authorization: `Bearer ${adminKey()}`, "content-type": "application/json" },
      body: "{not json",
    });
    expect(raw.status).toBe(400);
    expect((await raw.json()).statusCode).toBe("400");
    const empty = await storageFetch("/bucket", {
      method: "POST",
      headers: { authorization: `Bearer ${adminKey()}`, "content-type": "application/json" },
      body: JSON.stringify({}),
    });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toMatchObject({
      message: "body must have required property 'name'",
    });
  });
});

function adminKey(): string {
  return (adminClient() as unknown as { supabaseKey: string }).supabaseKey;
}

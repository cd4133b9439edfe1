// Objects through storage-js, as the caller, with RLS deciding (test/fixtures/storage.sql): the
// owner, another user and anon on a private bucket; upsert needing select, insert and update;
// remove needing select and delete; download, ranges, info, exists, list and list v2, move, copy;
// upstream's errors (HTTP 400 with the real status in the body).
import { describe, expect, test } from "vitest";
import { adminClient, anonClient, member, storageFetch } from "./support.ts";

const text = (s: string) => new Blob([s], { type: "text/plain" });

describe("an object in a private bucket", () => {
  test("the owner uploads, downloads, lists and removes it; another user and anon get nothing", async () => {
    const owner = await member();
    const other = await member();
    const path = `${owner.id}/notes/hello.txt`;
    const mine = owner.client.storage.from("storage-private");

    const uploaded = await mine.upload(path, text("hello world"));
    expect(uploaded.error).toBeNull();
    expect(uploaded.data).toMatchObject({ path, fullPath: `storage-private/${path}` });
    expect(uploaded.data?.id).toMatch(/^[0-9a-f-]{36}$/);

    const downloaded = await mine.download(path);
    expect(await downloaded.data?.text()).toBe("hello world");

    const listed = await mine.list(`${owner.id}/notes`);
    expect(listed.data?.map((o) => o.name)).toEqual(["hello.txt"]);
    expect(listed.data?.[0]?.metadata).toMatchObject({ size: 11, mimetype: "text/plain" });
    const folders = await mine.list(owner.id);
    expect(folders.data).toEqual([expect.objectContaining({ name: "notes", id: null })]);

    // another user: the object does not exist for them, and they cannot write into its folder
    const theirs = other.client.storage.from("storage-private");
    const denied = await theirs.download(path);
    expect(denied.error).toMatchObject({ name: "StorageApiError", status: 400 });
    expect((await theirs.list(`${owner.id}/notes`)).data).toEqual([]);
    const intrusion = await theirs.upload(`${owner.id}/notes/evil.txt`, text("x"));
    expect(intrusion.error).toMatchObject({
      message: "new row violates row-level security policy",
      statusCode: "403",
    });
    expect(await theirs.remove([path])).toMatchObject({ data: [], error: null });
    expect((await theirs.exists(path)).data).toBe(false);

    // anon: the same
    const anon = anonClient().storage.from("storage-private");
    expect((await anon.download(path)).error).not.toBeNull();
    expect((await anon.upload(`${owner.id}/anon.txt`, text("x"))).error?.message).toBe(
      "new row violates row-level security policy",
    );

    // the owner's remove returns the row, and the object is gone
    const removed = await mine.remove([path]);
    expect(removed.data?.map((o) => o.name)).toEqual([path]);
    expect((await mine.exists(path)).data).toBe(false);
  });

  test("list() by name in upstream's order: by the full keys, so a file sorts before a folder of its stem", async () => {
    const owner = await member();
    const mine = owner.client.storage.from("storage-private");
    for (const name of ["c.txt", "b/x.txt", "B.txt", "a/y.txt"])
      expect((await mine.upload(`${owner.id}/${name}`, text(name))).error).toBeNull();
    const names = async (order: "asc" | "desc") =>
      (await mine.list(owner.id, { sortBy: { column: "name", order } })).data?.map((o) =>
        o.id === null ? `${o.name}/` : o.name,
      );
    // "a/y.txt" < "B.txt" < "b/x.txt" < "c.txt" in lower(name) byte order ('.' before '/')
    expect(await names("asc")).toEqual(["a/", "B.txt", "b/", "c.txt"]);
    expect(await names("desc")).toEqual(["c.txt", "b/", "B.txt", "a/"]);
  });

  test("list() searches from where prefix and search end together: a search with a slash reaches below the prefix", async () => {
    const owner = await member();
    const mine = owner.client.storage.from("storage-private");
    const ids: Record<string, string | undefined> = {};
    for (const name of ["lst/a.txt", "lst/sub/b.txt", "lst/sub/bee/c.txt", "lst/sub/x.txt"]) {
      const { data, error } = await mine.upload(`${owner.id}/${name}`, text(name));
      expect(error).toBeNull();
      ids[name] = data?.id;
    }
    // the file lst/sub/b.txt and the folder lst/sub/bee (entries of the level "sub/b" ends in),
    // not the folder lst/sub the prefix's own level would show; named from after the prefix, as
    // upstream's storage.search names them since its migration 0063, so prefix + name is the path
    const { data, error } = await mine.list(`${owner.id}/lst`, { search: "sub/b" });
    expect(error).toBeNull();
    expect(data?.map((o) => [o.name, o.id, o.id === null ? null : o.metadata?.size])).toEqual([
      ["sub/b.txt", ids["lst/sub/b.txt"], 13],
      ["sub/bee", null, null],
    ]);
    // without a slash in the search, the prefix's level as before
    const plain = await mine.list(`${owner.id}/lst`, { search: "s" });
    expect(plain.data?.map((o) => o.name)).toEqual(["sub"]);
  });

  test("list()'s sortBy as upstream's schema: a column of its four, required, and asc or desc", async () => {
    const owner = await member();
    const list = (sortBy: unknown) =>
      storageFetch("/object/list/storage-private", {
        method: "POST",
        token: owner.token,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ prefix: owner.id, sortBy }),
      });
    for (const column of ["name", "updated_at", "created_at", "last_accessed_at"])
      expect([column, (await list({ column, order: "desc" })).status]).toEqual([column, 200]);
    for (const [sortBy, message] of [
      [{ column: "size" }, "body/sortBy/column must be equal to one of the allowed values"],
      [{ order: "desc" }, "body/sortBy must have required property 'column'"],
      [
        { column: "name", order: "up" },
        "body/sortBy/order must be equal to one of the allowed values",
      ],
    ] as const) {
      const refused = await list(sortBy);
      expect(refused.status).toBe(400);
      expect(await refused.json()).toEqual({
        statusCode: "400",
        error: "FastifyError",
        code: "InternalError",
        message,
      });
    }
  });

  test("list v2 pages through folders, sorts by a timestamp, and refuses a cursor that is not one", async () => {
    const owner = await member();
    const mine = owner.client.storage.from("storage-private");
    // created in this order: c.txt, then b/1.txt, a/1.txt, a/2.txt (folder a dated by a/1.txt)
    for (const name of ["c.txt", "b/1.txt", "a/1.txt", "a/2.txt"]) {
      expect((await mine.upload(`${owner.id}/${name}`, text(name))).error).toBeNull();
      await new Promise((r) => setTimeout(r, 5));
    }
    const prefix = `${owner.id}/`;
    const short = (e: { name: string }) => e.name.slice(prefix.length);
    type Options = NonNullable<Parameters<typeof mine.listV2>[0]>;
    const pages = async (options: Options) => {
      const seen: string[][] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 10; i++) {
        const { data, error } = await mine.listV2({ ...options, prefix, limit: 1, cursor });
        expect(error).toBeNull();
        seen.push([...(data?.folders ?? []), ...(data?.objects ?? [])].map(short));
        if (!data?.hasNext) return seen;
        cursor = data.nextCursor;
      }
      throw new Error(`no last page: ${JSON.stringify(seen)}`);
    };
    // a page that ends on a folder goes on past everything under it
    expect(await pages({ with_delimiter: true })).toEqual([["a/"], ["b/"], ["c.txt"]]);
    expect(
      await pages({ with_delimiter: true, sortBy: { column: "name", order: "desc" } }),
    ).toEqual([["c.txt"], ["b/"], ["a/"]]);
    const newest = { column: "created_at", order: "desc" } as const;
    expect(await pages({ with_delimiter: true, sortBy: newest })).toEqual([
      ["a/"],
      ["b/"],
      ["c.txt"],
    ]);
    expect(await pages({ sortBy: newest })).toEqual([
      ["a/2.txt"],
      ["a/1.txt"],
      ["b/1.txt"],
      ["c.txt"],
    ]);

    const whole = await mine.listV2({ prefix, with_delimiter: true });
    expect(whole.data?.folders[0]).toMatchObject({ key: "a", name: `${prefix}a/`, id: null });
    expect(whole.data?.objects[0]).toMatchObject({ key: "c.txt", name: `${prefix}c.txt` });

    const list = (body: object) =>
      storageFetch("/object/list-v2/storage-private", {
        method: "POST",
        token: owner.token,
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const forged = await list({ cursor: Buffer.from("not a cursor").toString("base64") });
    expect(forged.status).toBe(400);
    expect(await forged.json()).toMatchObject({
      error: "InvalidParameter",
      message: "Invalid Parameter continuation token",
    });
    const badTime = await list({
      cursor: Buffer.from("l:x\nc:created_at\na:soon").toString("base64"),
    });
    expect(badTime.status).toBe(400);
    const column = await list({ sortBy: { column: "size" } });
    expect(column.status).toBe(400);
    expect((await column.json()).message).toBe(
      "body/sortBy/column must be equal to one of the allowed values",
    );
  });

  test("errors are upstream's: HTTP 400 with the real status in the body", async () => {
    const owner = await member();
    const missing = await storageFetch(`/object/storage-private/${owner.id}/nothing.txt`, {
      token: owner.token,
    });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({
      statusCode: "404",
      code: "NoSuchKey",
      error: "not_found",
      message: "Object not found",
    });
    const noBucket = await storageFetch("/object/no-such-bucket/x.txt", { token: owner.token });
    expect(noBucket.status).toBe(400);
    expect(await noBucket.json()).toEqual({
      statusCode: "404",
      code: "NoSuchBucket",
      error: "Bucket not found",
      message: "Bucket not found",
    });
    const info = await owner.client.storage
      .from("storage-private")
      .exists(`${owner.id}/nothing.txt`);
    expect(info.data).toBe(false);
  });

  test("upload without upsert refuses an existing key; upsert replaces it", async () => {
    const owner = await member();
    const path = `${owner.id}/twice.txt`;
    const bucket = owner.client.storage.from("storage-private");
    expect((await bucket.upload(path, text("one"))).error).toBeNull();
    const again = await bucket.upload(path, text("two"));
    expect(again.error).toMatchObject({
      statusCode: "409",
      message: "The resource already exists",
    });
    expect((await bucket.upload(path, text("three"), { upsert: true })).error).toBeNull();
    expect(await (await bucket.download(path)).data?.text()).toBe("three");
    expect((await bucket.update(path, text("four"))).error).toBeNull();
    expect(await (await bucket.download(path)).data?.text()).toBe("four");
  });

  test("upsert needs update rights and remove needs delete rights: a bucket with only select and insert", async () => {
    const owner = await member();
    const path = `${owner.id}/dropped.txt`;
    const bucket = owner.client.storage.from("storage-dropbox");
    expect((await bucket.upload(path, text("first"))).error).toBeNull();
    const replaced = await bucket.upload(path, text("second"), { upsert: true });
    expect(replaced.error?.message).toBe("new row violates row-level security policy");
    expect(await (await bucket.download(path)).data?.text()).toBe("first");
    expect(await bucket.remove([path])).toMatchObject({ data: [], error: null });
    expect((await bucket.exists(path)).data).toBe(true);
    // a new key with upsert: the insert alone decides (no row to update)
    expect(
      (await bucket.upload(`${owner.id}/new.txt`, text("n"), { upsert: true })).error,
    ).toBeNull();
  });
});

describe("move, copy, info, list v2", () => {
  test("move and copy within the owner's folder; info and list v2 see the result", async () => {
    const owner = await member();
    const bucket = owner.client.storage.from("storage-private");
    const a = `${owner.id}/a.txt`;
    await bucket.upload(a, text("alpha"), { cacheControl: "60", metadata: { label: "A" } });
    expect((await bucket.move(a, `${owner.id}/moved/a.txt`)).error).toBeNull();
    expect((await bucket.exists(a)).data).toBe(false);
    const copied = await bucket.copy(`${owner.id}/moved/a.txt`, `${owner.id}/copy.txt`);
    expect(copied.error).toBeNull();
    expect(copied.data?.path).toBe(`storage-private/${owner.id}/copy.txt`);
    expect(await (await bucket.download(`${owner.id}/copy.txt`)).data?.text()).toBe("alpha");

    const info = await bucket.info(`${owner.id}/copy.txt`);
    expect(info.data).toMatchObject({
      name: `${owner.id}/copy.txt`,
      size: 5,
      contentType: "text/plain",
      cacheControl: "max-age=60",
      metadata: { label: "A" },
    });

    const v2 = await bucket.listV2({ prefix: `${owner.id}/`, with_delimiter: true });
    expect(v2.error).toBeNull();
    expect(v2.data?.folders.map((f) => f.name)).toEqual([`${owner.id}/moved/`]);
    expect(v2.data?.objects.map((o) => o.name)).toEqual([`${owner.id}/copy.txt`]);
    const paged = await bucket.listV2({ prefix: `${owner.id}/`, limit: 1 });
    expect(paged.data?.hasNext).toBe(true);
    const next = await bucket.listV2({ prefix: `${owner.id}/`, cursor: paged.data?.nextCursor });
    expect(next.data?.objects.map((o) => o.name)).toEqual([`${owner.id}/moved/a.txt`]);

    // another user cannot move the owner's object into their own folder
    const other = await member();
    const stolen = await other.client.storage
      .from("storage-private")
      .move(`${owner.id}/copy.txt`, `${other.id}/copy.txt`);
    expect(stolen.error).toMatchObject({ statusCode: "404", message: "Object not found" });
  });

  test("a copy without copyMetadata replaces only the metadata it names; the rest is the source's", async () => {
    const owner = await member();
    const bucket = owner.client.storage.from("storage-private");
    const source = `${owner.id}/partial/source.txt`;
    await bucket.upload(source, text("alpha"), { cacheControl: "60" });
    const copy = (destination: string, metadata: Record<string, string>) =>
      storageFetch("/object/copy", {
        method: "POST",
        token: owner.token,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          bucketId: "storage-private",
          sourceKey: source,
          destinationKey: `${owner.id}/partial/${destination}`,
          copyMetadata: false,
          metadata,
        }),
      });
    expect((await copy("typed.csv", { mimetype: "text/csv" })).status).toBe(200);
    expect((await bucket.info(`${owner.id}/partial/typed.csv`)).data).toMatchObject({
      contentType: "text/csv",
      cacheControl: "max-age=60",
    });
    expect((await copy("cached.txt", { cacheControl: "no-store" })).status).toBe(200);
    expect((await bucket.info(`${owner.id}/partial/cached.txt`)).data).toMatchObject({
      contentType: "text/plain",
      cacheControl: "no-store",
    });
  });

  test("the service role's overwrite, move and upload URL keep the object its owner's", async () => {
    // upstream writes an owner column only when the writer has a value for it; the service role
    // has no sub, so the row keeps its owner, and a policy keyed on owner_id keeps letting them in
    const owner = await member();
    const mine = owner.client.storage.from("storage-owned");
    const admin = adminClient().storage.from("storage-owned");
    const path = (name: string) => `${owner.id}/${name}`;
    await mine.upload(path("overwritten.txt"), text("mine"));
    expect(
      (await admin.upload(path("overwritten.txt"), text("theirs"), { upsert: true })).error,
    ).toBeNull();
    await mine.upload(path("moved.txt"), text("moved"));
    expect((await admin.move(path("moved.txt"), path("moved-here.txt"))).error).toBeNull();
    await mine.upload(path("signed.txt"), text("first"));
    const made = await admin.createSignedUploadUrl(path("signed.txt"), { upsert: true });
    expect(
      (await admin.uploadToSignedUrl(path("signed.txt"), made.data?.token ?? "", text("second")))
        .error,
    ).toBeNull();
    for (const [name, body] of [
      ["overwritten.txt", "theirs"],
      ["moved-here.txt", "moved"],
      ["signed.txt", "second"],
    ] as const) {
      expect(await (await mine.download(path(name))).data?.text()).toBe(body);
    }
  });
});

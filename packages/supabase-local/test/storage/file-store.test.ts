// The file store on its own: a version is whole or absent (an upload over its limit leaves
// nothing), a version is never a path, and a sweep removes what no row names (an upload a crash
// cut short, a file whose row is gone), keeping what is recent (another backend's upload).
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, expect, test } from "vitest";
import { FileStore } from "../../src/storage/file-store.ts";

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "file-store-"));
});
afterAll(() => rm(root, { recursive: true, force: true }));

test("writes whole versions with their MD5, refuses past the limit, sweeps what no row names", async () => {
  const files = new FileStore(root);
  const kept = await files.write(Readable.from([Buffer.from("hello "), Buffer.from("world")]), 100);
  expect(kept).toMatchObject({ size: 11, eTag: '"5eb63bbbe01eeed093cb22bb8f5acdc3"' });
  await expect(files.write(Readable.from([Buffer.alloc(101)]), 100)).rejects.toMatchObject({
    code: "EntityTooLarge",
  });
  expect(await readdir(join(root, "uploads"))).toEqual([]);
  expect(() => files.pathOf("../../etc/passwd")).toThrow("Object not found");

  const orphan = await files.write(Readable.from([Buffer.from("orphan")]), 100);
  const recent = await files.write(Readable.from([Buffer.from("recent")]), 100);
  const old = new Date(Date.now() - 120_000);
  await utimes(join(root, "objects", orphan.version), old, old);
  await writeFile(join(root, "uploads", "cut-short"), "partial");
  await utimes(join(root, "uploads", "cut-short"), old, old);
  await files.sweep(async () => new Set([kept.version]));
  expect((await readdir(join(root, "objects"))).sort()).toEqual(
    [kept.version, recent.version].sort(),
  );
  expect(await readdir(join(root, "uploads"))).toEqual([]);
});

test("a sweep of a store without versions asks nothing of the database, and still removes cut-short uploads", async () => {
  const empty = join(root, "empty");
  const files = new FileStore(empty);
  await files.sweep(async () => new Set());
  const old = new Date(Date.now() - 120_000);
  await writeFile(join(empty, "uploads", "cut-short"), "partial");
  await utimes(join(empty, "uploads", "cut-short"), old, old);
  let asked = 0;
  await files.sweep(async () => {
    asked++;
    return new Set();
  });
  expect(asked).toBe(0);
  expect(await readdir(join(empty, "uploads"))).toEqual([]);
});

test("uploads of several batches, side by side, keep their bytes and their own MD5 (hashed in a thread)", async () => {
  const files = new FileStore(root);
  const bodies = [randomBytes(3 * 1024 * 1024 + 17), randomBytes(2 * 1024 * 1024 - 5)];
  // network-sized chunks, interleaved by running both writes at once
  const chunked = (bytes: Buffer) =>
    Readable.from(
      Array.from({ length: Math.ceil(bytes.length / 65_536) }, (_, i) =>
        bytes.subarray(i * 65_536, (i + 1) * 65_536),
      ),
    );
  try {
    const written = await Promise.all(bodies.map((b) => files.write(chunked(b), 10 << 20)));
    for (const [i, w] of written.entries()) {
      const body = bodies[i] as Buffer;
      expect(w.eTag).toBe(`"${createHash("md5").update(body).digest("hex")}"`);
      expect(w.size).toBe(body.length);
      expect(Buffer.compare(await readFile(join(root, "objects", w.version)), body)).toBe(0);
    }
    // an upload refused midway leaves the thread's other hashes intact
    await expect(files.write(chunked(randomBytes(3 << 20)), 2 << 20)).rejects.toMatchObject({
      code: "EntityTooLarge",
    });
    const after = await files.write(Readable.from([Buffer.from("hello world")]), 100);
    expect(after.eTag).toBe('"5eb63bbbe01eeed093cb22bb8f5acdc3"');
  } finally {
    await files.close();
  }
});

test("chunks of their own go to the hashing thread uncopied, views are copied, an upload cut short leaves no file", async () => {
  const files = new FileStore(root);
  const chunkSize = 65_536;
  const bytes = randomBytes(3 * 1024 * 1024 + 5);
  const md5 = `"${createHash("md5").update(bytes).digest("hex")}"`;
  // each chunk a buffer of its own, as Node's request stream gives them
  const own = () =>
    Array.from(
      { length: Math.ceil(bytes.length / chunkSize) },
      (_, i) => new Uint8Array(bytes.subarray(i * chunkSize, (i + 1) * chunkSize)),
    );
  try {
    const chunks = own();
    const written = await files.write(Readable.from(chunks), 10 << 20, { ownChunks: true });
    expect(written).toMatchObject({ size: bytes.length, eTag: md5 });
    expect(Buffer.compare(await readFile(join(root, "objects", written.version)), bytes)).toBe(0);
    // handed over, not copied: the thread took their memory (all but the last batch's were
    // written before the digest was asked for)
    expect(chunks.filter((c) => c.buffer.byteLength === 0).length).toBe(chunks.length);

    // views into one buffer (a caller's, a multipart part's) are copied: the buffer stays whole
    const views = Array.from({ length: Math.ceil(bytes.length / chunkSize) }, (_, i) =>
      bytes.subarray(i * chunkSize, (i + 1) * chunkSize),
    );
    const copied = await files.write(Readable.from(views), 10 << 20, { ownChunks: true });
    expect(copied.eTag).toBe(md5);
    expect(bytes.buffer.byteLength).toBeGreaterThanOrEqual(bytes.length);
    expect(views.every((v) => v.length > 0)).toBe(true);

    // an upload whose body fails after two batches leaves no file, and the next one's MD5 is right
    const before = await readdir(join(root, "objects"));
    async function* cutShort() {
      yield* own().slice(0, 40);
      throw new Error("the client went away");
    }
    await expect(files.write(cutShort(), 10 << 20, { ownChunks: true })).rejects.toThrow(
      "the client went away",
    );
    expect(await readdir(join(root, "uploads"))).toEqual([]);
    expect((await readdir(join(root, "objects"))).sort()).toEqual(before.sort());
    const next = await files.write(Readable.from(own()), 10 << 20, { ownChunks: true });
    expect(next.eTag).toBe(md5);
  } finally {
    await files.close();
  }
});

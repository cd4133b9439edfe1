// The file store on its own: a version is whole or absent (an upload over its limit leaves
// nothing), a version is never a path, and a sweep removes what no row names (an upload a crash
// cut short, a file whose row is gone), keeping what is recent (another backend's upload).
import { mkdtemp, readdir, rm, utimes, writeFile } from "node:fs/promises";
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
  expect(() => files.read("../../etc/passwd")).toThrow("Object not found");

  const orphan = await files.write(Readable.from([Buffer.from("orphan")]), 100);
  const recent = await files.write(Readable.from([Buffer.from("recent")]), 100);
  const old = new Date(Date.now() - 120_000);
  await utimes(join(root, "objects", orphan.version), old, old);
  await writeFile(join(root, "uploads", "cut-short"), "partial");
  await utimes(join(root, "uploads", "cut-short"), old, old);
  await files.sweep(new Set([kept.version]));
  expect((await readdir(join(root, "objects"))).sort()).toEqual(
    [kept.version, recent.version].sort(),
  );
  expect(await readdir(join(root, "uploads"))).toEqual([]);
});

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { inSharedMemory, readShared } from "../src/database/shared-memory.ts";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "shared-memory-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a file is read whole into shared memory of its own", async () => {
  const bytes = Buffer.alloc(3 * 1024 * 1024 + 17);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31) % 251;
  const path = join(dir, "file.bin");
  writeFileSync(path, bytes);
  const read = await readShared(path);
  expect(read.buffer).toBeInstanceOf(SharedArrayBuffer);
  expect(read.byteOffset).toBe(0);
  expect(Buffer.from(read).equals(bytes)).toBe(true);
  // an empty file is an empty array, and a missing one the open's error
  writeFileSync(join(dir, "empty"), "");
  expect((await readShared(join(dir, "empty"))).byteLength).toBe(0);
  await expect(readShared(join(dir, "missing"))).rejects.toMatchObject({ code: "ENOENT" });
});

test("bytes copied into shared memory are a copy", () => {
  const bytes = new Uint8Array([1, 2, 3]);
  const shared = inSharedMemory(bytes);
  expect(shared.buffer).toBeInstanceOf(SharedArrayBuffer);
  bytes[0] = 9;
  expect([...shared]).toEqual([1, 2, 3]);
});

// A stored object's body in process (tests calling `fetch` on the app, with no Node server to send
// it into): an ordinary Web stream that opens its file only when read, reads the range asked, and
// closes the file when the reader stops early. (Through the Node server, test/storage/serving.test.ts.)
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readlink, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { nodeBody } from "../src/http/node-body.ts";

let dir: string;
let path: string;
// three reads of 1 MiB and a bit
const bytes = randomBytes(3 * 1024 * 1024 + 17);
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "node-body-"));
  path = join(dir, "object");
  await writeFile(path, bytes);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** How many of this process's open files are `path`. */
async function openCopies(): Promise<number> {
  const fds = await readdir("/proc/self/fd");
  const targets = await Promise.all(
    fds.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => "")),
  );
  return targets.filter((t) => t === path).length;
}

test("opened on first read, read whole or in part, closed when cancelled", async () => {
  const unread = nodeBody({ path });
  expect(await openCopies()).toBe(0);
  const whole = Buffer.from(await new Response(unread).arrayBuffer());
  expect(Buffer.compare(whole, bytes)).toBe(0);

  const part = nodeBody({ path, start: 1024 * 1024 - 5, end: 2 * 1024 * 1024 + 4 });
  const got = Buffer.from(await new Response(part).arrayBuffer());
  expect(Buffer.compare(got, bytes.subarray(1024 * 1024 - 5, 2 * 1024 * 1024 + 5))).toBe(0);

  const reader = nodeBody({ path }).getReader();
  expect((await reader.read()).value?.length).toBeGreaterThan(0);
  expect(await openCopies()).toBe(1);
  await reader.cancel();
  await expect.poll(openCopies).toBe(0);
});

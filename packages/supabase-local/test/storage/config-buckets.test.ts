// config.toml's [storage.buckets.<name>], as the CLI seeds them on a fresh start and after a
// reset: created (or updated), their objects_path uploaded; and the bytes of a persisted backend
// kept across restarts, removed by a reset with the database.
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createClient } from "@supabase/supabase-js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createLocalBackend, loadConfig, reset } from "../../src/index.ts";
import { KEYS } from "../../src/project/keys.ts";

const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "storage-config-"));
  await mkdir(join(dir, "seed", "avatars", "nested"), { recursive: true });
  await writeFile(join(dir, "seed", "avatars", "default.png"), "not really a png");
  await writeFile(join(dir, "seed", "avatars", "nested", "readme.txt"), "hello");
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const buckets = () => ({
  avatars: {
    public: true,
    fileSizeLimit: 1024 * 1024,
    allowedMimeTypes: ["image/png", "text/plain"],
    objectsPath: join(dir, "seed", "avatars"),
  },
});

function admin(url: string, fetch: (r: Request) => Promise<Response>) {
  return createClient(url, KEYS.secret, {
    auth: { persistSession: false },
    global: { fetch: (input, init) => fetch(new Request(input, init)) },
  });
}

describe("buckets from config.toml", () => {
  test("sizes and paths are read as the CLI reads them", async () => {
    const project = join(dir, "project");
    await mkdir(join(project, "supabase"), { recursive: true });
    await writeFile(
      join(project, "supabase", "config.toml"),
      `[storage]
file_size_limit = "50MiB"
[storage.image_transformation]
enabled = true
[storage.vector]
max_buckets = 3
[storage.s3_protocol]
[storage.buckets.images]
public = false
file_size_limit = "1.5MB"
allowed_mime_types = ["image/png"]
objects_path = "./images"
`,
    );
    const config = loadConfig({ projectDir: project });
    expect(config.storage).toEqual({
      enabled: true,
      fileSizeLimit: 50 * 1024 * 1024,
      imageTransformation: { enabled: true },
      vector: { enabled: true, maxBuckets: 3, maxIndexes: 5 },
      // the table without `enabled`: off, as Go reads a missing bool
      s3Protocol: { enabled: false },
      buckets: {
        images: {
          public: false,
          fileSizeLimit: 1.5 * 1024 * 1024,
          allowedMimeTypes: ["image/png"],
          objectsPath: join(project, "supabase", "images"),
        },
      },
    });
  });

  test("a persisted backend: seeded on its fresh start, its bytes kept in its data directory, seeded again after a reset", async () => {
    const dataDir = join(dir, "data");
    const start = () =>
      createLocalBackend({
        projectDir: ROOT,
        dataDir,
        host: false,
        seed: false,
        config: { storage: { buckets: buckets() } },
      });
    let backend = await start();
    try {
      const storage = admin(backend.url, backend.fetch).storage;
      expect((await storage.getBucket("avatars")).data).toMatchObject({
        public: true,
        file_size_limit: 1024 * 1024,
        allowed_mime_types: ["image/png", "text/plain"],
      });
      const listed = await storage.from("avatars").list("", { sortBy: { column: "name" } });
      expect(listed.data?.map((o) => o.name)).toEqual(["default.png", "nested"]);
      const readme = await storage.from("avatars").download("nested/readme.txt");
      expect(await readme.data?.text()).toBe("hello");
      expect(readme.data?.type).toBe("text/plain");
      // (a string goes as text/plain;charset=UTF-8, which upstream's type check refuses here)
      const added = await storage
        .from("avatars")
        .upload("mine.txt", new Blob(["added later"], { type: "text/plain" }));
      expect(added.error).toBeNull();
    } finally {
      await backend.close();
    }

    // closed, the bytes stay with the database (a restart serves them: the database and its
    // storage/ are the same data directory)
    expect((await readdir(join(dataDir, "storage", "objects"))).length).toBe(3);

    // a reset: the database and the bytes go together; the next start seeds again
    await reset({ dataDir });
    backend = await start();
    try {
      const storage = admin(backend.url, backend.fetch).storage;
      expect((await storage.from("avatars").exists("mine.txt")).data).toBe(false);
      expect((await storage.from("avatars").exists("default.png")).data).toBe(true);
      expect((await readdir(join(dataDir, "storage", "objects"))).length).toBe(2);
    } finally {
      await backend.close();
    }
  }, 60_000);
});

// Image transformations (/render/image/…) with sharp, on a backend with the CLI's
// [storage.image_transformation] enabled = true: width, height, resize, quality, the format the
// Accept header allows (Vary: Accept) unless format=origin, upstream's size clamp; signed URLs of
// a transformation. Off (as on a free hosted project, and locally when the table is absent):
// upstream's FeatureNotEnabled.
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type MemoryBackend, memoryBackend } from "../../../../tests/support/memory-backend.ts";
import { PUBLISHABLE_KEY } from "./support.ts";

let local: MemoryBackend;
const bucket = `images-${crypto.randomUUID().slice(0, 8)}`;
const path = "photo.png";

beforeAll(async () => {
  local = await memoryBackend({ storage: { imageTransformation: { enabled: true } } });
  const storage = local.admin().storage;
  await storage.createBucket(bucket, { public: true });
  // noise, so that quality makes a difference to the size
  const pixels = Buffer.alloc(400 * 200 * 3);
  for (let i = 0; i < pixels.length; i++) pixels[i] = (i * 2654435761) >>> 24;
  const png = await sharp(pixels, { raw: { width: 400, height: 200, channels: 3 } })
    .png()
    .toBuffer();
  const { error } = await storage.from(bucket).upload(path, png, { contentType: "image/png" });
  if (error) throw error;
}, 30_000);
afterAll(() => local?.close());

async function render(query: string, accept = "image/png"): Promise<Response> {
  return local.fetch(
    `${local.backend.url}/storage/v1/render/image/public/${bucket}/${path}?${query}`,
    {
      headers: { accept },
    },
  );
}

describe("image transformations", () => {
  test("width, height and resize: cover crops, contain fits inside, fill stretches", async () => {
    const sizes: Record<string, [number, number]> = {};
    for (const resize of ["cover", "contain", "fill"]) {
      const response = await render(`width=100&height=100&resize=${resize}`);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("image/png");
      expect(response.headers.get("vary")).toBe("Accept");
      const meta = await sharp(Buffer.from(await response.arrayBuffer())).metadata();
      sizes[resize] = [meta.width ?? 0, meta.height ?? 0];
    }
    expect(sizes).toEqual({ cover: [100, 100], contain: [100, 50], fill: [100, 100] });
    const wide = await render("width=5000");
    const meta = await sharp(Buffer.from(await wide.arrayBuffer())).metadata();
    expect(meta.width).toBe(2000);
  });

  test("WebP or AVIF as the browser's Accept allows, unless format=origin", async () => {
    const webp = await render("width=50", "image/webp,image/*");
    expect(webp.headers.get("content-type")).toBe("image/webp");
    const avif = await render("width=50", "image/avif,image/webp,*/*");
    expect(avif.headers.get("content-type")).toBe("image/avif");
    const origin = await render("width=50&format=origin", "image/avif,image/webp,*/*");
    expect(origin.headers.get("content-type")).toBe("image/png");
    const low = await render("width=200&quality=20", "image/webp");
    const high = await render("width=200&quality=100", "image/webp");
    expect((await low.arrayBuffer()).byteLength).toBeLessThan(
      (await high.arrayBuffer()).byteLength,
    );
    for (const r of [webp, avif, origin]) await r.arrayBuffer();
  });

  test("a signed URL carries its transformation; bad parameters are refused", async () => {
    const signed = await local
      .admin()
      .storage.from(bucket)
      .createSignedUrl(path, 60, { transform: { width: 40, height: 40 } });
    expect(signed.data?.signedUrl).toContain("/render/image/sign/");
    const response = await local.fetch(signed.data?.signedUrl ?? "");
    const meta = await sharp(Buffer.from(await response.arrayBuffer())).metadata();
    expect([meta.width, meta.height]).toEqual([40, 40]);
    // as upstream's signed render: the link's expiry, not the object's Cache-Control (an image
    // behind a link valid for a minute is not to be kept for an hour)
    expect(response.headers.get("cache-control")).toBeNull();
    const expires = Date.parse(response.headers.get("expires") ?? "");
    expect(Math.abs(expires - (Date.now() + 60_000))).toBeLessThan(5_000);
    const open = await render("width=40");
    expect(open.headers.get("cache-control")).toBe("max-age=3600");
    expect(open.headers.get("expires")).toBeNull();
    await open.arrayBuffer();

    const bad = await render("quality=5");
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ statusCode: "400", code: "InvalidRequest" });
  });

  test("an image uploaded with an X-Robots-Tag is rendered with it; the original's none", async () => {
    const storage = local.admin().storage.from(bucket);
    const tagged = "tagged.png";
    const original = await local.fetch(
      `${local.backend.url}/storage/v1/object/public/${bucket}/${path}`,
    );
    const { error } = await storage.upload(tagged, await original.arrayBuffer(), {
      contentType: "image/png",
      headers: { "x-robots-tag": "noimageindex" },
    });
    expect(error).toBeNull();
    const response = await local.fetch(
      `${local.backend.url}/storage/v1/render/image/public/${bucket}/${tagged}?width=20`,
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("x-robots-tag")).toBe("noimageindex");
    await response.arrayBuffer();
    const plain = await render("width=20");
    expect(plain.headers.get("x-robots-tag")).toBe("none");
    await plain.arrayBuffer();

    // a stored value no longer valid (edited in SQL) is served as none, as upstream re-checks it
    await local.backend.db.query(
      `update storage.objects set metadata = metadata || '{"xRobotsTag":"noindex, bogus"}'
       where bucket_id = $1 and name = $2`,
      [bucket, tagged],
    );
    for (const url of [
      `render/image/public/${bucket}/${tagged}?width=20`,
      `object/public/${bucket}/${tagged}`,
    ]) {
      const edited = await local.fetch(`${local.backend.url}/storage/v1/${url}`);
      expect(edited.status).toBe(200);
      expect(edited.headers.get("x-robots-tag")).toBe("none");
      await edited.arrayBuffer();
    }
  });
});

test("without [storage.image_transformation] enabled: upstream's FeatureNotEnabled", async () => {
  const off = await memoryBackend({ storage: { imageTransformation: { enabled: false } } });
  try {
    const response = await off.fetch(
      `${off.backend.url}/storage/v1/render/image/public/storage-public/x.png?width=10`,
      { headers: { apikey: PUBLISHABLE_KEY } },
    );
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({
      error: "FeatureNotEnabled",
      statusCode: "403",
      message: "feature not enabled for this tenant",
    });
  } finally {
    await off.close();
  }
});

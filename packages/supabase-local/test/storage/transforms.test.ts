// Image transformations (/render/image/…) with sharp, on a backend with the CLI's
// [storage.image_transformation] enabled = true, as the CLI's imgproxy answers: width, height,
// resize (no enlargement; the default preset's 3000x8192 box fills what is not given), quality,
// WebP when Accept allows it (AVIF only when asked for), upstream's size clamp; SVG sent back as
// it is, never rasterized; animations kept up to 60 frames within 50 megapixels; one render at a
// time, a short queue, a 10-second deadline; signed URLs of a transformation. Off (as on a free
// hosted project, and locally when the table is absent): upstream's FeatureNotEnabled.
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type MemoryBackend, memoryBackend } from "../../../../tests/support/memory-backend.ts";
import {
  acquireRenderSlot,
  renderLimits,
  renderQueueLength,
} from "../../src/storage/transforms.ts";
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

async function render(
  query: string,
  accept = "image/png",
  signal?: AbortSignal,
): Promise<Response> {
  return local.fetch(
    `${local.backend.url}/storage/v1/render/image/public/${bucket}/${path}?${query}`,
    { headers: { accept }, signal },
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
  });

  test("never enlarged; what is not given is the default preset's (3000 x 8192)", async () => {
    const size = async (query: string) => {
      const response = await render(query);
      expect(response.status).toBe(200);
      const meta = await sharp(Buffer.from(await response.arrayBuffer())).metadata();
      return [meta.width, meta.height];
    };
    // 400 x 200: width=5000 is clamped to 2000, and the image is not enlarged (nor cropped)
    expect(await size("width=5000")).toEqual([400, 200]);
    // cover a box larger than the image: not enlarged, cropped to the box
    expect(await size("width=1000&height=1000")).toEqual([400, 200]);
    expect(await size("width=300&height=300")).toEqual([300, 200]);
    // a width alone: cover of width x 8192 (the preset's height), cropped to the width
    expect(await size("width=100")).toEqual([100, 200]);
    expect(await size("width=100&resize=contain")).toEqual([100, 50]);
    expect(await size("")).toEqual([400, 200]);
  });

  test("WebP as the browser's Accept allows (AVIF only when asked), unless format=origin", async () => {
    const webp = await render("width=50", "image/webp,image/*");
    expect(webp.headers.get("content-type")).toBe("image/webp");
    // the CLI's imgproxy has WebP detection only: a browser that takes AVIF gets WebP
    const preferred = await render("width=50", "image/avif,image/webp,*/*");
    expect(preferred.headers.get("content-type")).toBe("image/webp");
    const avif = await render("width=50&format=avif", "image/png");
    expect(avif.headers.get("content-type")).toBe("image/avif");
    const origin = await render("width=50&format=origin", "image/avif,image/webp,*/*");
    expect(origin.headers.get("content-type")).toBe("image/png");
    const low = await render("width=200&quality=20", "image/webp");
    const high = await render("width=200&quality=100", "image/webp");
    expect((await low.arrayBuffer()).byteLength).toBeLessThan(
      (await high.arrayBuffer()).byteLength,
    );
    for (const r of [webp, preferred, avif, origin]) await r.arrayBuffer();
    // IMGPROXY_FORMAT_QUALITY=jpeg=80,avif=62,webp=80 when no quality is given
    const bytes = async (query: string, accept = "image/png") =>
      Buffer.from(await (await render(query, accept)).arrayBuffer());
    expect(await bytes("width=64&format=avif")).toEqual(
      await bytes("width=64&format=avif&quality=62"),
    );
    expect(await bytes("width=64", "image/webp")).toEqual(
      await bytes("width=64&quality=80", "image/webp"),
    );
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

    // upstream's schema refuses them before the handler (Fastify's validation error)
    const bad = await render("quality=5");
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({
      statusCode: "400",
      error: "FastifyError",
      code: "InternalError",
      message: "querystring/quality must be >= 20",
    });
    const badSign = await local
      .admin()
      .storage.from(bucket)
      .createSignedUrl(path, 60, { transform: { quality: 5 } });
    expect(badSign.error?.message).toBe("body/transform/quality must be >= 20");
  });

  test("an authenticated render reads the object as the caller, under RLS, in a public bucket too", async () => {
    // storage-js's download with a transform is the authenticated render; no policy lets a user
    // select this bucket's objects, though anyone may fetch them by their public URL
    const { client } = await local.signedIn();
    const asUser = await client.storage.from(bucket).download(path, { transform: { width: 20 } });
    expect(asUser.error).toMatchObject({ statusCode: "404", message: "Object not found" });
    const asAdmin = await local
      .admin()
      .storage.from(bucket)
      .download(path, { transform: { width: 20 } });
    expect(asAdmin.error).toBeNull();
    const meta = await sharp(Buffer.from(await (asAdmin.data as Blob).arrayBuffer())).metadata();
    expect(meta.width).toBe(20);
    // no bucket is looked up first: a missing one is a missing object
    const nowhere = await local
      .admin()
      .storage.from("no-such-bucket")
      .download(path, { transform: { width: 20 } });
    expect(nowhere.error).toMatchObject({ statusCode: "404", message: "Object not found" });
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

/** An upload of `bytes` as `name` (declared `type`) to a fresh public bucket of `local`. */
async function uploaded(
  local: MemoryBackend,
  name: string,
  bytes: Uint8Array,
  type: string,
): Promise<(query: string, accept?: string) => Promise<Response>> {
  const bucket = `img-${crypto.randomUUID().slice(0, 8)}`;
  const storage = local.admin().storage;
  await storage.createBucket(bucket, { public: true });
  const { error } = await storage.from(bucket).upload(name, bytes, { contentType: type });
  if (error) throw error;
  return (query, accept = "image/png") =>
    local.fetch(`${local.backend.url}/storage/v1/render/image/public/${bucket}/${name}?${query}`, {
      headers: { accept },
    });
}

/**
 * A GIF declaring `frames` frames of `width` x `height` whose data stops after a pixel: tiny, but
 * its declared size is what the resolution rule counts (no pixel of it is decoded to refuse it).
 */
function declaredGif(width: number, height: number, frames: number): Uint8Array {
  const bytes = [...Buffer.from("GIF89a")];
  bytes.push(width & 255, width >> 8, height & 255, height >> 8, 0x80, 0, 0);
  bytes.push(0, 0, 0, 255, 255, 255); // a global palette of two colours
  bytes.push(0x21, 0xff, 11, ...Buffer.from("NETSCAPE2.0"), 3, 1, 0, 0, 0); // loop forever
  for (let i = 0; i < frames; i++) {
    bytes.push(0x21, 0xf9, 4, 0, 10, 0, 0, 0); // 100 ms
    // a frame of the whole screen, whose data stops after one pixel (LZW, minimum code size 2)
    bytes.push(0x2c, 0, 0, 0, 0, width & 255, width >> 8, height & 255, height >> 8, 0);
    bytes.push(2, 2, 0x44, 0x01, 0);
  }
  bytes.push(0x3b);
  return new Uint8Array(bytes);
}

/** An animated GIF of `frames` frames, `width` x `height`, each a different colour. */
async function animatedGif(width: number, height: number, frames: number): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * frames * 3);
  for (let f = 0; f < frames; f++)
    pixels.fill((f * 37) % 256, f * width * height * 3, (f + 1) * width * height * 3);
  return sharp(pixels, { raw: { width, height: height * frames, channels: 3, pageHeight: height } })
    .gif({ delay: Array(frames).fill(100), loop: 0 })
    .toBuffer();
}

describe("what is not rendered", () => {
  test("an SVG, under any declared type, is sent back as it is (never rasterized)", async () => {
    const svg = Buffer.from(
      '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>',
    );
    const get = await uploaded(local, "drawing.png", svg, "image/png");
    const response = await get("width=5&height=5", "image/webp,*/*");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("image/svg+xml");
    // an SVG is a document: sandboxed and downloaded, as serve.ts sends one
    expect(response.headers.get("content-security-policy")).toBe("sandbox");
    expect(response.headers.get("content-disposition")).toBe("attachment");
    expect(Buffer.from(await response.arrayBuffer())).toEqual(svg);
    // a format asked for would rasterize it: refused, in imgproxy's words
    const webp = await get("width=5&format=webp");
    expect(webp.status).toBe(400);
    expect(await webp.json()).toEqual({
      statusCode: "422",
      code: "InvalidRequest",
      error: "InvalidRequest",
      message: "Invalid source image",
    });
  });

  test("what is not an image, or is too big, is imgproxy's Invalid source image", async () => {
    const text = await uploaded(local, "notes.png", Buffer.from("just some text"), "image/png");
    const response = await text("width=10");
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      statusCode: "422",
      code: "InvalidRequest",
      error: "InvalidRequest",
      message: "Invalid source image",
    });
    // over IMGPROXY_MAX_SRC_FILE_SIZE (25,000,000 bytes), by the stored size
    const name = `big-${crypto.randomUUID().slice(0, 8)}.png`;
    const big = await uploaded(
      local,
      name,
      await sharp({ create: { width: 8, height: 8, channels: 3, background: "red" } })
        .png()
        .toBuffer(),
      "image/png",
    );
    expect((await big("width=4")).status).toBe(200);
    await local.backend.db.query(
      `update storage.objects set metadata = metadata || '{"size": 25000001}' where name = $1`,
      [name],
    );
    const refused = await big("width=4");
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      statusCode: "422",
      message: "Invalid source image",
    });
  });

  test("a wide image asked for as WebP is shrunk by the preset, not refused", async () => {
    const wide = await sharp({
      create: { width: 17000, height: 10, channels: 3, background: "blue" },
    })
      .png()
      .toBuffer();
    const get = await uploaded(local, "wide.png", wide, "image/png");
    const response = await get("", "image/webp");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("image/webp");
    const meta = await sharp(Buffer.from(await response.arrayBuffer())).metadata();
    expect([meta.width, meta.height]).toEqual([3000, 2]);
  });
});

describe("animations", () => {
  test("kept, up to 60 frames, in GIF or WebP", async () => {
    const get = await uploaded(local, "anim.gif", await animatedGif(20, 10, 70), "image/gif");
    const gif = await get("width=10&height=10");
    expect(gif.status).toBe(200);
    expect(gif.headers.get("content-type")).toBe("image/gif");
    const meta = await sharp(Buffer.from(await gif.arrayBuffer()), { animated: true }).metadata();
    expect([meta.pages, meta.width, meta.pageHeight ?? meta.height]).toEqual([60, 10, 10]);
    const webp = await get("width=10", "image/webp");
    expect(webp.headers.get("content-type")).toBe("image/webp");
    const webpMeta = await sharp(Buffer.from(await webp.arrayBuffer())).metadata();
    expect(webpMeta.pages).toBe(60);
  });

  test("refused when width x frame height x frames (at most 60) is over 50 megapixels", async () => {
    // 4000 x 4000 x 4 = 64 MP; one frame (16 MP) alone would do
    const get = await uploaded(local, "declared.gif", declaredGif(4000, 4000, 4), "image/gif");
    const response = await get("width=10", "image/webp");
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      statusCode: "422",
      message: "Invalid source image",
    });
    // 3000 x 3000 x 5 = 45 MP: rendered
    const fits = await uploaded(local, "fits.gif", declaredGif(3000, 3000, 5), "image/gif");
    const ok = await fits("width=10&height=10");
    expect(ok.status).toBe(200);
    await ok.arrayBuffer();
  });
});

describe("one render at a time, a short queue, a deadline", () => {
  test("a render waits for the one before; a full queue is imgproxy's Too many requests", async () => {
    const limits = { ...renderLimits };
    const release = await acquireRenderSlot(Date.now() + 5_000);
    try {
      renderLimits.queued = 1;
      const waiting = render("width=10");
      await expect.poll(renderQueueLength).toBe(1);
      const refused = await render("width=10");
      expect(refused.status).toBe(400);
      expect(await refused.json()).toEqual({
        statusCode: "429",
        code: "InvalidRequest",
        error: "InvalidRequest",
        message: "Too many requests",
      });
      release();
      const served = await waiting;
      expect(served.status).toBe(200);
      await served.arrayBuffer();
    } finally {
      release();
      Object.assign(renderLimits, limits);
    }
  });

  test("past the deadline, waiting or rendering: imgproxy's Timeout", async () => {
    const limits = { ...renderLimits };
    const release = await acquireRenderSlot(Date.now() + 5_000);
    try {
      renderLimits.timeoutMs = 200;
      const queued = await render("width=10");
      expect(queued.status).toBe(400);
      expect(await queued.json()).toEqual({
        statusCode: "503",
        code: "InternalError",
        error: "InternalError",
        message: "Timeout",
      });
      expect(renderQueueLength()).toBe(0);
      release();
      // a deadline met wherever the render is (it takes more than a millisecond): the slot stays
      // taken until sharp, stopped by its own timeout, lets go
      renderLimits.timeoutMs = 1;
      const slow = await render("width=399&format=avif&quality=100");
      expect(await slow.json()).toMatchObject({ statusCode: "503", message: "Timeout" });
    } finally {
      release();
      Object.assign(renderLimits, limits);
    }
    const after = await render("width=10");
    expect(after.status).toBe(200);
    await after.arrayBuffer();
  });

  test("a caller that goes away while waiting leaves the queue", async () => {
    const release = await acquireRenderSlot(Date.now() + 5_000);
    try {
      const abort = new AbortController();
      const waiting = render("width=10", "image/png", abort.signal).catch(() => undefined);
      await expect.poll(renderQueueLength).toBe(1);
      abort.abort();
      await waiting;
      await expect.poll(renderQueueLength).toBe(0);
    } finally {
      release();
    }
  });
});

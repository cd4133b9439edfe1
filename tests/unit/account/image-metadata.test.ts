// The Worker's metadata removal (decision 036) on files built byte by byte: what each format keeps
// and drops, and that no malformed file (cut anywhere, lengths past the end) throws or passes.
// tests/integration/account/avatar.test.ts does the same on real photos made with sharp.
import { describe, expect, it } from "vitest";
import { withoutMetadata } from "../../../app/routes/account/parts/image-metadata.server";

const enc = new TextEncoder();
const bytes = (...parts: (number[] | Uint8Array | string)[]) =>
  Uint8Array.from(parts.flatMap((p) => [...(typeof p === "string" ? enc.encode(p) : p)]));
const u32be = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
const u32le = (n: number) => [n & 255, (n >>> 8) & 255, (n >>> 16) & 255, n >>> 24];
const has = (data: Uint8Array, text: string) =>
  new TextDecoder("latin1").decode(data).includes(text);

/** A PNG chunk (the CRC is not checked by the rewrite: zeros). */
const chunk = (type: string, data: number[] | string) => {
  const payload = typeof data === "string" ? [...enc.encode(data)] : data;
  return bytes(u32be(payload.length), type, payload, [0, 0, 0, 0]);
};
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

function png() {
  return bytes(
    PNG_SIGNATURE,
    chunk("IHDR", [0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]),
    chunk("tEXt", "Author\0Ada at home"),
    chunk("eXIf", "MM\0*GPS 51.5N"),
    chunk("IDAT", [1, 2, 3]),
    chunk("tIME", [7, 234, 11, 28, 1, 2, 3]),
    chunk("IEND", []),
  );
}

/** A JPEG's segment: marker and payload with its length. */
const segment = (marker: number, payload: number[] | Uint8Array | string) => {
  const body = typeof payload === "string" ? [...enc.encode(payload)] : [...payload];
  return bytes([0xff, marker, (body.length + 2) >> 8, (body.length + 2) & 255], body);
};

function jpeg(orientation = 1) {
  const exif = bytes(
    "Exif\0\0MM\0*",
    [0, 0, 0, 8, 0, 2],
    [0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, orientation, 0, 0], // Orientation
    [0x01, 0x0f, 0, 2, 0, 0, 0, 10, 0, 0, 0, 38], // Make, at 38
    [0, 0, 0, 0],
    "SecretCam\0",
  );
  return bytes(
    [0xff, 0xd8],
    segment(0xe0, "JFIF\0\x01\x01"),
    segment(0xe1, exif),
    segment(0xe1, "http://ns.adobe.com/xap/1.0/\0<x:xmpmeta>GPS</x:xmpmeta>"),
    segment(0xed, "Photoshop 3.0\0IPTC city London"),
    segment(0xfe, "a comment"),
    segment(0xe2, "ICC_PROFILE\0\x01\x01profile"),
    segment(0xdb, [0, ...Array(64).fill(1)]),
    segment(0xc0, [8, 0, 1, 0, 1, 1, 1, 0x11, 0]),
    segment(0xc4, [0, ...Array(16).fill(0)]),
    segment(0xda, [1, 1, 0, 0, 63, 0]),
    [0x12, 0xff, 0x00, 0x34, 0xff, 0xd0, 0x56], // entropy data: a stuffed byte, a restart
    [0xff, 0xd9],
    "trailing second image SecretCam",
  );
}

function webp() {
  const riffChunk = (type: string, data: number[] | string) => {
    const payload = typeof data === "string" ? [...enc.encode(data)] : data;
    return bytes(type, u32le(payload.length), payload, payload.length % 2 ? [0] : []);
  };
  const body = bytes(
    "WEBP",
    riffChunk("VP8X", [0x08 | 0x04 | 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
    riffChunk("VP8L", [0x2f, 0, 0, 0, 0]),
    riffChunk("EXIF", "MM\0*SecretCam"),
    riffChunk("XMP ", "<x:xmpmeta>GPS</x:xmpmeta>"),
  );
  return bytes("RIFF", u32le(body.length), body);
}

describe("withoutMetadata", () => {
  it("PNG: the image and colour chunks stay; text, EXIF and time go", () => {
    const out = withoutMetadata(png());
    expect(out?.type).toBe("image/png");
    const text = new TextDecoder("latin1").decode(out?.bytes);
    expect(["IHDR", "IDAT", "IEND"].every((t) => text.includes(t))).toBe(true);
    for (const gone of ["tEXt", "eXIf", "tIME", "Ada", "GPS"]) expect(text).not.toContain(gone);
  });

  it("JPEG: frame, tables, scan and ICC stay; EXIF, XMP, IPTC, comments, JFIF and trailers go", () => {
    const out = withoutMetadata(jpeg());
    expect(out?.type).toBe("image/jpeg");
    const data = out?.bytes ?? new Uint8Array();
    for (const gone of ["Exif", "SecretCam", "xmpmeta", "IPTC", "comment", "JFIF", "trailing"]) {
      expect(has(data, gone), gone).toBe(false);
    }
    expect(has(data, "ICC_PROFILE")).toBe(true);
    expect([...data.subarray(0, 2)]).toEqual([0xff, 0xd8]);
    expect([...data.subarray(-2)]).toEqual([0xff, 0xd9]);
    // The entropy-coded data, stuffed byte and restart marker included, is untouched.
    expect(has(data, "\x12\xff\x00\x34\xff\xd0\x56")).toBe(true);
  });

  it("JPEG: an orientation other than upright is kept, alone", () => {
    const data = withoutMetadata(jpeg(6))?.bytes ?? new Uint8Array();
    expect(has(data, "Exif\0\0MM\0*")).toBe(true);
    expect(has(data, "SecretCam")).toBe(false);
    // SOI, then the one-entry EXIF segment: orientation 6
    expect([...data.subarray(2, 4)]).toEqual([0xff, 0xe1]);
    expect(data[2 + 4 + 6 + 8 + 2 + 8 + 1]).toBe(6);
  });

  it("WebP: EXIF and XMP chunks go, their flags are cleared, the RIFF size matches", () => {
    const out = withoutMetadata(webp());
    expect(out?.type).toBe("image/webp");
    const data = out?.bytes ?? new Uint8Array();
    expect(has(data, "SecretCam") || has(data, "xmpmeta") || has(data, "EXIF")).toBe(false);
    expect(new DataView(data.buffer).getUint32(4, true)).toBe(data.length - 8);
    expect((data[20] ?? 0) & (0x08 | 0x04)).toBe(0);
    expect((data[20] ?? 0) & 0x10).toBe(0x10); // alpha flag kept
  });

  it("refuses what is not a whole PNG, JPEG or WebP, and never throws", () => {
    const withTrailer = jpeg();
    // (what follows the JPEG's end of image is dropped anyway: cutting it leaves a whole image)
    const jpegEnd = withTrailer.length - "trailing second image SecretCam".length;
    for (const file of [png(), withTrailer.subarray(0, jpegEnd), webp()]) {
      for (let cut = 0; cut < file.length; cut++) {
        const truncated = file.subarray(0, cut);
        expect(() => withoutMetadata(truncated)).not.toThrow();
        // A PNG cut before IEND, a JPEG before EOI, a WebP shorter than its RIFF size: refused.
        expect(withoutMetadata(truncated), `${cut}`).toBeNull();
      }
    }
    expect(withoutMetadata(enc.encode("<svg onload=alert(1)>"))).toBeNull();
    expect(withoutMetadata(new Uint8Array())).toBeNull();
    // A segment length pointing past the end.
    expect(withoutMetadata(bytes([0xff, 0xd8, 0xff, 0xe1, 0xff, 0xff, 1, 2]))).toBeNull();
  });

  it("refuses a file of more parts than any real image has (each is work: 2 MB of them took 0.7 s)", () => {
    const many = (part: number[] | Uint8Array, count: number) =>
      Array.from({ length: count }, () => part).flatMap((p) => [...p]);
    const pngOf = (count: number) =>
      bytes(
        PNG_SIGNATURE,
        chunk("IHDR", [0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]),
        many(chunk("IDAT", []), count),
        chunk("IEND", []),
      );
    const jpegOf = (count: number) =>
      bytes([0xff, 0xd8], many([0xff, 0xd0], count), segment(0xc0, [8, 0, 1, 0, 1]), [0xff, 0xd9]);
    expect(withoutMetadata(pngOf(4000))).not.toBeNull();
    expect(withoutMetadata(pngOf(5000))).toBeNull();
    expect(withoutMetadata(jpegOf(4000))).not.toBeNull();
    expect(withoutMetadata(jpegOf(5000))).toBeNull();
  });
});

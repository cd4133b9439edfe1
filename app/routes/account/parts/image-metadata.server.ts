/**
 * An avatar is public, so what it says beyond its pixels must go before it is stored: where a
 * photo was taken (EXIF GPS), the camera and its serial number, the software, the owner's name,
 * XMP and IPTC captions, comments, embedded thumbnails. The Worker cannot decode and re-encode an
 * image (no sharp, no canvas; a WebAssembly codec would not fit its upload budget), so it rewrites
 * the file's container keeping only what draws the picture, an allow-list per format: anything it
 * does not know is dropped. Browsers with JavaScript re-encode through a canvas before the upload
 * (avatar-form.tsx), which drops everything too; this is what holds for every upload. Decision 036.
 *
 * Returns the cleaned bytes and their real type (from the bytes, never the name or the declared
 * type), or null when the bytes are not a well-formed PNG, JPEG or WebP file.
 */
export function withoutMetadata(
  bytes: Uint8Array,
): { bytes: Uint8Array; type: "image/png" | "image/jpeg" | "image/webp" } | null {
  try {
    if (startsWith(bytes, PNG_SIGNATURE)) return wrap(png(bytes), "image/png");
    if (bytes[0] === 0xff && bytes[1] === 0xd8) return wrap(jpeg(bytes), "image/jpeg");
    if (ascii(bytes, 0, 4) === "RIFF" && ascii(bytes, 8, 4) === "WEBP") {
      return wrap(webp(bytes), "image/webp");
    }
  } catch {
    // a length that points past the end, a truncated segment: not an image we store
  }
  return null;
}

/**
 * The most chunks or segments a file may have: real images have tens, a few hundred at most (a PNG
 * written in small IDAT chunks); each is work here, and 2 MB of empty ones took 0.7 s.
 */
const PARTS_MAX = 4096;

const wrap = <T extends string>(bytes: Uint8Array | null, type: T) =>
  bytes ? { bytes, type } : null;

// PNG: chunks of length, type, data, CRC. Kept: the image and how to draw its colours.
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const PNG_KEEP = new Set([
  "IHDR",
  "PLTE",
  "IDAT",
  "IEND",
  "tRNS",
  "cHRM",
  "gAMA",
  "iCCP",
  "sBIT",
  "sRGB",
  "cICP",
  "bKGD",
  "pHYs",
]);

function png(bytes: Uint8Array): Uint8Array | null {
  const out = new Chunks();
  out.push(bytes.subarray(0, 8));
  let at = 8;
  let first = true;
  for (let parts = 0; at < bytes.length; parts++) {
    if (parts === PARTS_MAX) return null;
    const length = u32be(bytes, at);
    const type = ascii(bytes, at + 4, 4);
    const end = at + 12 + length;
    if (end > bytes.length || (first && type !== "IHDR")) return null;
    first = false;
    if (PNG_KEEP.has(type)) out.push(bytes.subarray(at, end));
    at = end;
    if (type === "IEND") return out.join();
  }
  return null; // no IEND
}

// JPEG: markers and segments. Kept: the frame, tables, scans, restart intervals, the ICC colour
// profile and Adobe's colour transform flag. Dropped: APP1 (EXIF, XMP), APP13 (IPTC), comments,
// JFIF's thumbnail, every other APPn, and whatever follows the end of the image. An EXIF
// orientation other than "upright" is written back alone, so a phone photo is not turned sideways.
function jpeg(bytes: Uint8Array): Uint8Array | null {
  const out = new Chunks();
  out.push(bytes.subarray(0, 2));
  let orientation = 1;
  let at = 2;
  const kept: Uint8Array[] = [];
  for (let parts = 0; at < bytes.length; parts++) {
    if (parts === PARTS_MAX) return null;
    if (bytes[at] !== 0xff) return null;
    while (bytes[at] === 0xff) at++; // fill bytes
    const marker = bytes[at++];
    if (marker === undefined) return null;
    if (marker === 0xd9) {
      kept.push(Uint8Array.of(0xff, 0xd9));
      if (orientation !== 1) out.push(orientationSegment(orientation));
      for (const part of kept) out.push(part);
      return out.join();
    }
    if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      kept.push(Uint8Array.of(0xff, marker));
      continue;
    }
    const length = u16be(bytes, at);
    const end = at + length;
    if (length < 2 || end > bytes.length) return null;
    const segment = bytes.subarray(at - 2, end);
    if (marker === 0xe1 && ascii(bytes, at + 2, 6) === "Exif\0\0") {
      orientation = exifOrientation(bytes.subarray(at + 8, end)) ?? orientation;
    }
    if (keepJpegSegment(marker, bytes.subarray(at + 2, end))) kept.push(segment);
    at = end;
    if (marker === 0xda) {
      // The entropy-coded data runs to the next marker that is not a stuffed 0xFF00 or a restart.
      const start = at;
      while (at < bytes.length - 1) {
        if (bytes[at] === 0xff) {
          const next = bytes[at + 1] ?? 0;
          if (next !== 0 && !(next >= 0xd0 && next <= 0xd7)) break;
        }
        at++;
      }
      kept.push(bytes.subarray(start, at));
    }
  }
  return null; // no end of image
}

function keepJpegSegment(marker: number, payload: Uint8Array): boolean {
  if (marker >= 0xc0 && marker <= 0xcf) return true; // frames, DHT, DAC
  if (marker === 0xdb || marker === 0xdd || marker === 0xda || marker === 0xdc) return true;
  if (marker === 0xe2) return ascii(payload, 0, 12) === "ICC_PROFILE\0";
  if (marker === 0xee) return ascii(payload, 0, 5) === "Adobe";
  return false;
}

/** Tag 0x0112 of a TIFF structure's first IFD (EXIF's own layout), if it is a valid one (1–8). */
function exifOrientation(tiff: Uint8Array): number | null {
  const little = ascii(tiff, 0, 2) === "II";
  if (!little && ascii(tiff, 0, 2) !== "MM") return null;
  const u16 = (at: number) => (little ? u16le(tiff, at) : u16be(tiff, at));
  const u32 = (at: number) => (little ? u32le(tiff, at) : u32be(tiff, at));
  const ifd = u32(4);
  const count = u16(ifd);
  for (let i = 0; i < count; i++) {
    const entry = ifd + 2 + i * 12;
    if (entry + 12 > tiff.length) return null;
    if (u16(entry) === 0x0112) {
      const value = u16(entry + 8);
      return value >= 1 && value <= 8 ? value : null;
    }
  }
  return null;
}

/** An APP1 EXIF segment holding the orientation and nothing else (big-endian TIFF, one entry). */
function orientationSegment(orientation: number): Uint8Array {
  const tiff = [
    0x4d,
    0x4d,
    0x00,
    0x2a,
    0x00,
    0x00,
    0x00,
    0x08, // "MM", 42, first IFD at 8
    0x00,
    0x01, // one entry
    0x01,
    0x12,
    0x00,
    0x03,
    0x00,
    0x00,
    0x00,
    0x01,
    0x00,
    orientation,
    0x00,
    0x00, // SHORT
    0x00,
    0x00,
    0x00,
    0x00, // no next IFD
  ];
  const payload = [0x45, 0x78, 0x69, 0x66, 0x00, 0x00, ...tiff]; // "Exif\0\0"
  const length = payload.length + 2;
  return Uint8Array.from([0xff, 0xe1, length >> 8, length & 0xff, ...payload]);
}

// WebP: a RIFF file of chunks. Kept: the bitstreams, alpha, animation, the ICC profile. Dropped:
// EXIF, XMP and anything unknown, with VP8X's flags for EXIF and XMP cleared to match.
const WEBP_KEEP = new Set(["VP8 ", "VP8L", "VP8X", "ALPH", "ICCP", "ANIM", "ANMF"]);

function webp(bytes: Uint8Array): Uint8Array | null {
  const riffEnd = 8 + u32le(bytes, 4);
  if (riffEnd > bytes.length) return null;
  const out = new Chunks();
  out.push(bytes.subarray(0, 12));
  let at = 12;
  let images = 0;
  for (let parts = 0; at + 8 <= riffEnd; parts++) {
    if (parts === PARTS_MAX) return null;
    const type = ascii(bytes, at, 4);
    const size = u32le(bytes, at + 4);
    const end = at + 8 + size + (size % 2);
    if (at + 8 + size > riffEnd) return null;
    if (type === "VP8X") {
      const chunk = bytes.slice(at, Math.min(end, riffEnd));
      chunk[8] = (chunk[8] ?? 0) & ~(0x08 | 0x04); // EXIF and XMP flags
      out.push(chunk);
    } else if (WEBP_KEEP.has(type)) {
      out.push(bytes.subarray(at, Math.min(end, riffEnd)));
    }
    if (type === "VP8 " || type === "VP8L" || type === "ANMF") images++;
    at = end;
  }
  if (images === 0) return null;
  const result = out.join();
  new DataView(result.buffer).setUint32(4, result.length - 8, true);
  return result;
}

class Chunks {
  private parts: Uint8Array[] = [];
  push(part: Uint8Array) {
    this.parts.push(part);
  }
  join(): Uint8Array {
    const result = new Uint8Array(this.parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const part of this.parts) {
      result.set(part, at);
      at += part.length;
    }
    return result;
  }
}

function startsWith(bytes: Uint8Array, prefix: number[]) {
  return prefix.every((b, i) => bytes[i] === b);
}

function ascii(bytes: Uint8Array, at: number, length: number) {
  return String.fromCharCode(...bytes.subarray(at, at + length));
}

function need(bytes: Uint8Array, at: number, length: number) {
  if (at < 0 || at + length > bytes.length) throw new RangeError("past the end");
}

function u16be(b: Uint8Array, at: number) {
  need(b, at, 2);
  return ((b[at] ?? 0) << 8) | (b[at + 1] ?? 0);
}
function u16le(b: Uint8Array, at: number) {
  need(b, at, 2);
  return ((b[at + 1] ?? 0) << 8) | (b[at] ?? 0);
}
function u32be(b: Uint8Array, at: number) {
  need(b, at, 4);
  return (u16be(b, at) * 0x10000 + u16be(b, at + 2)) >>> 0;
}
function u32le(b: Uint8Array, at: number) {
  need(b, at, 4);
  return (u16le(b, at + 2) * 0x10000 + u16le(b, at)) >>> 0;
}

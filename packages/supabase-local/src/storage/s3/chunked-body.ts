// An `aws-chunked` body, as the AWS SDKs stream an upload whose x-amz-content-sha256 is one of
// the STREAMING-* algorithms: chunks of `<hex size>[;chunk-signature=<sig>]\r\n<bytes>\r\n`, a last
// chunk of size 0, then trailer lines (a checksum, its signature) and an empty line. Decoded as it
// streams: the bytes go on as they come, and each signed chunk's signature is checked when its last
// byte has come, so a forged chunk fails the upload before it completes. Upstream's limits: a
// chunk header of 256 bytes, a chunk of 8 MiB. Trailing checksums are read, not checked, as
// upstream reads them.
import { createHash, timingSafeEqual } from "node:crypto";
import { ERRORS } from "../errors.ts";

const MAX_HEADER = 256;
const MAX_CHUNK = 8 * 1024 * 1024;
const CRLF = Buffer.from("\r\n");

export const STREAMING_ALGORITHMS = [
  "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
  "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER",
  "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
];

export function isChunked(contentSha: string | undefined): boolean {
  return (
    contentSha !== undefined &&
    (contentSha.startsWith("STREAMING-AWS4-HMAC-SHA256-PAYLOAD") ||
      contentSha.startsWith("STREAMING-UNSIGNED-PAYLOAD"))
  );
}

/**
 * The decoded bytes of `source`. `sign(previous, chunkHash)` gives the signature a chunk must
 * carry (signed algorithms); the first chunk's previous signature is `seed`, the request's.
 */
export async function* decodeChunked(
  source: AsyncIterable<Uint8Array>,
  algorithm: string,
  signing?: { seed: string; sign: (previous: string, chunkHash: string) => string },
): AsyncGenerator<Uint8Array> {
  if (!STREAMING_ALGORITHMS.includes(algorithm))
    throw ERRORS.invalidRequest(`Invalid streaming algorithm: ${algorithm}`);
  const signed = algorithm.startsWith("STREAMING-AWS4-HMAC-SHA256-PAYLOAD");
  const reader = new BufferedReader(source);
  let previous = signing?.seed ?? "";
  for (;;) {
    const header = await reader.line(MAX_HEADER, "chunk header");
    if (header === undefined) throw ERRORS.invalidRequest("Missing final chunk");
    const [sizeText = "", ...extensions] = header.split(";");
    if (!/^[0-9a-fA-F]{1,8}$/.test(sizeText)) throw ERRORS.invalidRequest("Invalid chunk size");
    const size = Number.parseInt(sizeText, 16);
    if (size > MAX_CHUNK) throw ERRORS.entityTooLarge("chunk");
    const signature = extensions
      .find((e) => e.startsWith("chunk-signature="))
      ?.slice("chunk-signature=".length);
    if (signed && !signature) throw ERRORS.invalidSignature("Missing chunk signature");
    const hash = createHash("sha256");
    let left = size;
    while (left > 0) {
      const piece = await reader.take(left);
      if (!piece) throw ERRORS.invalidRequest("Unexpected end of chunk data");
      hash.update(piece);
      left -= piece.length;
      yield piece;
    }
    if (signed && signing && signature !== undefined) {
      const expected = Buffer.from(signing.sign(previous, hash.digest("hex")));
      const given = Buffer.from(signature);
      if (given.length !== expected.length || !timingSafeEqual(given, expected))
        throw ERRORS.signatureDoesNotMatch(
          "The request signature we calculated does not match the signature you provided. Check your key and signing method.",
        );
      previous = signature;
    }
    if (size === 0) break;
    if (!(await reader.expect(CRLF))) throw ERRORS.invalidRequest("Missing CRLF after chunk data");
  }
  // the trailer: header lines up to an empty one (none: the empty line at once)
  for (;;) {
    const line = await reader.line(MAX_HEADER, "trailer");
    if (line === undefined) throw ERRORS.invalidRequest("Incomplete trailer section");
    if (line === "") break;
  }
  if (await reader.more()) throw ERRORS.invalidRequest("Unexpected data after final chunk");
}

/** Reads lines and byte counts off an async iterable of chunks. */
class BufferedReader {
  private readonly iterator: AsyncIterator<Uint8Array>;
  private buffer: Buffer<ArrayBufferLike> = Buffer.alloc(0);
  private done = false;

  constructor(source: AsyncIterable<Uint8Array>) {
    this.iterator = source[Symbol.asyncIterator]();
  }

  private async fill(): Promise<boolean> {
    if (this.done) return false;
    const next = await this.iterator.next();
    if (next.done) {
      this.done = true;
      return false;
    }
    this.buffer =
      this.buffer.length === 0
        ? Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength)
        : Buffer.concat([this.buffer, next.value]);
    return true;
  }

  /** The next line without its CRLF; undefined at the end of the body. */
  async line(max: number, what: string): Promise<string | undefined> {
    for (;;) {
      const end = this.buffer.indexOf(CRLF);
      if (end !== -1) {
        if (end > max) throw ERRORS.entityTooLarge(what);
        const line = this.buffer.subarray(0, end).toString("latin1");
        this.buffer = this.buffer.subarray(end + 2);
        return line;
      }
      if (this.buffer.length > max) throw ERRORS.entityTooLarge(what);
      if (!(await this.fill())) {
        if (this.buffer.length > 0) throw ERRORS.invalidRequest(`Incomplete ${what}`);
        return undefined;
      }
    }
  }

  /** Up to `max` bytes (at least one), or undefined at the end of the body. */
  async take(max: number): Promise<Buffer | undefined> {
    if (this.buffer.length === 0 && !(await this.fill())) return undefined;
    const piece = this.buffer.subarray(0, Math.min(max, this.buffer.length));
    this.buffer = this.buffer.subarray(piece.length);
    return piece;
  }

  async expect(bytes: Buffer): Promise<boolean> {
    while (this.buffer.length < bytes.length) if (!(await this.fill())) return false;
    if (!this.buffer.subarray(0, bytes.length).equals(bytes)) return false;
    this.buffer = this.buffer.subarray(bytes.length);
    return true;
  }

  async more(): Promise<boolean> {
    return this.buffer.length > 0 || (await this.fill());
  }
}

/** The body was longer than the reader's limit (whatever Content-Length said). */
export class BodyTooLarge extends Error {
  constructor(limit: number) {
    super(`request body larger than ${limit} bytes`);
    this.name = "BodyTooLarge";
  }
}

/**
 * Reads at most `limit` bytes of a request body as text: a declared Content-Length over the limit
 * is refused before reading, and the stream is cancelled as soon as it passes the limit.
 */
export async function readLimitedBody(request: Request, limit: number): Promise<string> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > limit) throw new BodyTooLarge(limit);
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw new BodyTooLarge(limit);
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

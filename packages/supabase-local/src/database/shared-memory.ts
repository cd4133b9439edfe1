// Bytes every database thread is sent (PGlite's file bundle, the extensions' files), kept in
// memory the threads share. postMessage copies an ArrayBuffer through V8's serializer, and the
// receiving thread copies it again: 11 MB on the way to every open, about 50 ms on each side on
// this VM, where memory written for the first time costs more than the copying itself. A
// SharedArrayBuffer is sent without a copy. The files are read straight into it, so the bytes are
// written once per process; a thread copies out only what PGlite must own.
import { open } from "node:fs/promises";

/** A file's bytes, read into shared memory of their own. */
export async function readShared(path: string | URL): Promise<Uint8Array<SharedArrayBuffer>> {
  const file = await open(path);
  try {
    const { size } = await file.stat();
    const bytes = new Uint8Array(new SharedArrayBuffer(size));
    for (let read = 0; read < size; ) {
      const { bytesRead } = await file.read(bytes, read, size - read, read);
      if (bytesRead === 0) throw new Error(`${path} ended before its ${size} bytes`);
      read += bytesRead;
    }
    return bytes;
  } finally {
    await file.close();
  }
}

/** The bytes, copied into shared memory of their own. */
export function inSharedMemory(bytes: Uint8Array): Uint8Array<SharedArrayBuffer> {
  const copy = new Uint8Array(new SharedArrayBuffer(bytes.byteLength));
  copy.set(bytes);
  return copy;
}

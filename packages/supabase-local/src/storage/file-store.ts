// The bytes of every object, on disk: one file per object version, named by the version (a UUID
// the backend makes), never by the object's key, so no key can name a path (`../`, a leading `/`)
// and a move is a change of row, not of file. Bytes are streamed in and out, never held whole in
// memory: an upload is written to uploads/ while its MD5 (the ETag) is computed, then renamed into
// objects/ once whole. The directory lives beside the database (the data directory's storage/, or
// the scratch directory of an in-memory one), so a reset removes both together; sweep() removes
// what no row names (an upload cut short by a crash, a delete whose row went first).
import { createHash, randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import {
  copyFile,
  type FileHandle,
  mkdir,
  open,
  readdir,
  rename,
  rm,
  stat,
} from "node:fs/promises";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { Worker } from "node:worker_threads";
import { ERRORS } from "./errors.ts";

export interface Written {
  version: string;
  size: number;
  /** The MD5 of the bytes, quoted, as S3 (and so hosted Storage) gives it. */
  eTag: string;
  lastModified: Date;
}

/** An upload goes to disk in writes of at least this many bytes. */
const WRITE_BATCH = 1 << 20;

/**
 * MD5 in a thread of its own: the ETag of an upload is half its CPU on this side (MD5 runs at
 * ~600 MB/s, about as fast as the disk takes the bytes), and the main thread also parses the
 * request and serves every other one. Batches are handed over (transferred, not copied) once
 * written, in order, as a list of buffers; the digest comes back when asked. One thread per store,
 * started by its first upload, keeping no process alive, ended by close().
 */
const HASHER = `const { createHash } = require("node:crypto");
  const { parentPort } = require("node:worker_threads");
  const hashes = new Map();
  parentPort.on("message", ({ id, buffers, end }) => {
    let hash = hashes.get(id);
    if (!hash) hashes.set(id, (hash = createHash("md5")));
    if (buffers) for (const bytes of buffers) hash.update(new Uint8Array(bytes));
    if (end) {
      hashes.delete(id);
      if (end === "digest") parentPort.postMessage({ id, digest: hash.digest("hex") });
    }
  });`;

class Hasher {
  readonly #thread = new Worker(HASHER, { eval: true });
  readonly #waiting = new Map<number, { resolve(digest: string): void; reject(e: Error): void }>();
  #next = 0;
  #failed: Error | undefined;

  constructor() {
    this.#thread.unref();
    this.#thread.on("message", ({ id, digest }: { id: number; digest: string }) => {
      this.#waiting.get(id)?.resolve(digest);
      this.#waiting.delete(id);
    });
    const fail = (error: Error) => {
      this.#failed ??= error;
      for (const { reject } of this.#waiting.values()) reject(error);
      this.#waiting.clear();
    };
    this.#thread.on("error", fail);
    this.#thread.once("exit", () => fail(new Error("the hashing thread stopped")));
  }

  /** A new MD5: update() hands each batch over in order (the thread takes the buffers' memory). */
  start() {
    const id = this.#next++;
    return {
      update: (buffers: ArrayBuffer[]) => this.#thread.postMessage({ id, buffers }, buffers),
      digest: () =>
        new Promise<string>((resolve, reject) => {
          if (this.#failed) return reject(this.#failed);
          this.#waiting.set(id, { resolve, reject });
          this.#thread.postMessage({ id, end: "digest" });
        }),
      drop: () => this.#thread.postMessage({ id, end: "drop" }),
    };
  }

  close(): Promise<number> {
    return this.#thread.terminate();
  }
}

/**
 * A batch as it goes to disk and then, its memory, to the hashing thread: the chunks themselves
 * when `owned` and each is the whole of a buffer of its own, else one copy of them all (a chunk
 * may be a view into memory something else still uses: a multipart part, a caller's Buffer, Node's
 * buffer pool).
 */
function batchOf(
  chunks: Uint8Array[],
  length: number,
  owned: boolean,
): { chunks: Uint8Array[]; buffers: ArrayBuffer[] } {
  if (owned && chunks.every(isWholeBuffer)) {
    const buffers = chunks.map((c) => c.buffer as ArrayBuffer);
    if (new Set(buffers).size === buffers.length) return { chunks, buffers };
  }
  const bytes = gather(chunks, length);
  return { chunks: [bytes], buffers: [bytes.buffer as ArrayBuffer] };
}

function isWholeBuffer(chunk: Uint8Array): boolean {
  return (
    chunk.buffer instanceof ArrayBuffer &&
    chunk.byteOffset === 0 &&
    chunk.byteLength === chunk.buffer.byteLength
  );
}

/** One buffer of its own for `chunks` (a copy: its memory can then be handed to the thread). */
function gather(chunks: Uint8Array[], length: number): Buffer {
  const bytes = Buffer.allocUnsafeSlow(length);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return bytes;
}

/** Writes `chunks` whole (writev may write part of them). */
async function writeAll(file: FileHandle, chunks: Uint8Array[]): Promise<void> {
  let rest = chunks;
  while (rest.length) {
    let { bytesWritten } = await file.writev(rest);
    while (rest.length && bytesWritten >= (rest[0] as Uint8Array).length) {
      bytesWritten -= (rest[0] as Uint8Array).length;
      rest = rest.slice(1);
    }
    if (bytesWritten > 0) rest = [(rest[0] as Uint8Array).subarray(bytesWritten), ...rest.slice(1)];
  }
}

export class FileStore {
  readonly root: string;
  readonly #objects: string;
  readonly #uploads: string;
  #ready: Promise<unknown> | undefined;
  #hasher: Hasher | undefined;

  constructor(root: string) {
    this.root = root;
    this.#objects = join(root, "objects");
    this.#uploads = join(root, "uploads");
  }

  /** The folder the TUS server keeps its uploads in progress in. */
  get resumableDir(): string {
    return join(this.root, "resumable");
  }

  #prepare(): Promise<unknown> {
    this.#ready ??= Promise.all([
      mkdir(this.#objects, { recursive: true }),
      mkdir(this.#uploads, { recursive: true }),
      mkdir(this.resumableDir, { recursive: true }),
    ]);
    return this.#ready;
  }

  #path(version: string): string {
    if (!/^[0-9a-f-]{36}$/.test(version)) throw ERRORS.noSuchKey();
    return join(this.#objects, version);
  }

  /** Ends the hashing thread (the backend closes). */
  async close(): Promise<void> {
    await this.#hasher?.close();
    this.#hasher = undefined;
  }

  /**
   * Streams `body` into a new version, refusing it (EntityTooLarge) past `limit` bytes. The file
   * appears under its version only once whole; a failure leaves nothing behind.
   *
   * `ownChunks`: each chunk of `body` is a buffer of its own that nothing else keeps (Node's
   * request stream makes a new one for every read), so once written its memory goes to the hashing
   * thread as it is. Otherwise each batch is copied into one buffer first. Handing them over
   * uncopied spares the main thread 50 MB of copies and allocations per 50 MB upload, and with
   * them the full garbage collections that so much new memory set off.
   */
  async write(
    body: AsyncIterable<Uint8Array>,
    limit: number,
    { ownChunks = false }: { ownChunks?: boolean } = {},
  ): Promise<Written> {
    await this.#prepare();
    const version = randomUUID();
    const partial = join(this.#uploads, version);
    const hash = (this.#hasher ??= new Hasher()).start();
    let size = 0;
    const file = await open(partial, "w");
    let inFlight: Promise<unknown> = Promise.resolve();
    // A batch goes to disk (one writev of its chunks, or of their copy), then to the hashing
    // thread, which takes its memory: one write in flight while the next batch fills, so reading,
    // writing and hashing overlap.
    const flush = async (chunks: Uint8Array[], length: number) => {
      const batch = batchOf(chunks, length, ownChunks);
      await writeAll(file, batch.chunks);
      hash.update(batch.buffers);
    };
    let eTag: string;
    try {
      // One pass: each chunk is counted as it arrives, and chunks go to disk gathered into writes
      // of WRITE_BATCH bytes (not a write per network chunk of 64 KiB, nor a Transform and a
      // WriteStream between them).
      let batch: Uint8Array[] = [];
      let batched = 0;
      for await (const chunk of body) {
        size += chunk.length;
        if (size > limit) throw ERRORS.entityTooLarge();
        batch.push(chunk);
        batched += chunk.length;
        if (batched >= WRITE_BATCH) {
          await inFlight;
          inFlight = flush(batch, batched);
          // (a failed write is thrown by the next await of it, not left unhandled meanwhile)
          inFlight.catch(() => {});
          batch = [];
          batched = 0;
        }
      }
      await inFlight;
      await flush(batch, batched);
      await file.close();
      eTag = await hash.digest();
      await rename(partial, this.#path(version));
    } catch (error) {
      await inFlight.catch(() => {});
      hash.drop();
      await file.close().catch(() => {});
      await rm(partial, { force: true });
      throw error;
    }
    const { mtime } = await stat(this.#path(version));
    return { version, size, eTag: `"${eTag}"`, lastModified: mtime };
  }

  /** Takes a finished file (a TUS upload) in as a new version, moving it. */
  async adopt(path: string): Promise<Written> {
    await this.#prepare();
    const hash = createHash("md5");
    await pipeline(createReadStream(path), hash);
    const version = randomUUID();
    await rename(path, this.#path(version));
    const { size, mtime } = await stat(this.#path(version));
    return { version, size, eTag: `"${hash.digest("hex")}"`, lastModified: mtime };
  }

  /** A copy of a version under a new one (a copied object has bytes of its own). */
  async copy(version: string): Promise<string> {
    await this.#prepare();
    const copy = randomUUID();
    await copyFile(this.#path(version), this.#path(copy));
    return copy;
  }

  /** The file of a version (a download reads it, http/node-body.ts; sharp reads it itself). */
  pathOf(version: string): string {
    return this.#path(version);
  }

  async remove(versions: Iterable<string | null | undefined>): Promise<void> {
    await Promise.all(
      [...versions].flatMap((v) => (v ? [rm(this.#path(v), { force: true }).catch(() => {})] : [])),
    );
  }

  /**
   * Removes every version no row names (`known`, asked only when there are versions at all: a
   * start with none asks the database nothing), and uploads left unfinished: run at start, when
   * no upload is under way. Files newer than a minute are kept (another backend sharing the
   * database may be mid-upload).
   */
  async sweep(known: () => Promise<Set<string>>): Promise<void> {
    await this.#prepare();
    const cutoff = Date.now() - 60_000;
    const versions = await readdir(this.#objects);
    const named = versions.length ? await known() : new Set<string>();
    for (const [dir, names] of [
      [this.#objects, versions],
      [this.#uploads, await readdir(this.#uploads)],
    ] as const) {
      for (const name of names) {
        if (dir === this.#objects && named.has(name)) continue;
        const path = join(dir, name);
        const { mtimeMs } = await stat(path).catch(() => ({ mtimeMs: Date.now() }));
        if (mtimeMs < cutoff) await rm(path, { force: true, recursive: true });
      }
    }
  }
}

// The frontend side of the Postgres wire protocol as the Postgres port reads it (postgres-port.js):
// the untyped packets of the startup phase, then typed messages, each refused by its declared
// length before its body is read, with the limits Postgres itself applies:
//
// - a startup packet (or SSL, GSSAPI or cancel request) whose length after the length word is
//   under 4 or over 10 000 bytes (MAX_STARTUP_PACKET_LENGTH, backend_startup.c): "invalid length
//   of startup packet";
// - an authentication message over 65 535 bytes (PG_MAX_AUTH_TOKEN_LENGTH, auth.c);
// - later messages by type (SocketBackend in postgres.c): Query, FunctionCall, Parse, Bind and
//   CopyData up to PQ_LARGE_MESSAGE_LIMIT (1 GB less two bytes), every other type up to
//   PQ_SMALL_MESSAGE_LIMIT (10 000 bytes, libpq.h): "invalid message length". An unknown type is
//   "invalid frontend message type".
//
// Postgres logs such a connection and closes it without a reply (pq_getmessage's COMMERROR), and
// so does the port: a client that declares 2 GB costs eight bytes of reading, not 2 GB of
// buffering on the database's thread.
//
// JavaScript for the reason worker.js gives (the database thread loads it).

export const MAX_STARTUP_PACKET_LENGTH = 10_000;
export const PG_MAX_AUTH_TOKEN_LENGTH = 65_535;
export const PQ_SMALL_MESSAGE_LIMIT = 10_000;
/** MaxAllocSize - 1 */
export const PQ_LARGE_MESSAGE_LIMIT = 0x3fffffff - 1;

/** The types SocketBackend accepts, with their limits (the body and the length word). */
const MESSAGE_LIMITS = new Map(
  [
    ["Q", PQ_LARGE_MESSAGE_LIMIT], // Query
    ["F", PQ_LARGE_MESSAGE_LIMIT], // FunctionCall
    ["P", PQ_LARGE_MESSAGE_LIMIT], // Parse
    ["B", PQ_LARGE_MESSAGE_LIMIT], // Bind
    ["d", PQ_LARGE_MESSAGE_LIMIT], // CopyData
    ["X", PQ_SMALL_MESSAGE_LIMIT], // Terminate
    ["C", PQ_SMALL_MESSAGE_LIMIT], // Close
    ["D", PQ_SMALL_MESSAGE_LIMIT], // Describe
    ["E", PQ_SMALL_MESSAGE_LIMIT], // Execute
    ["H", PQ_SMALL_MESSAGE_LIMIT], // Flush
    ["S", PQ_SMALL_MESSAGE_LIMIT], // Sync
    ["c", PQ_SMALL_MESSAGE_LIMIT], // CopyDone
    ["f", PQ_SMALL_MESSAGE_LIMIT], // CopyFail
  ].map(([type, limit]) => [
    /** @type {string} */ (type).charCodeAt(0),
    /** @type {number} */ (limit),
  ]),
);
const PASSWORD_MESSAGE = 0x70; // 'p': SASLInitialResponse, SASLResponse

export const SSL_REQUEST_CODE = 80877103;
export const GSSENC_REQUEST_CODE = 80877104;
export const CANCEL_REQUEST_CODE = 80877102;

/** A protocol violation: `fatal` is sent to the client before closing, else it is only logged. */
export class WireError extends Error {
  /**
   * @param {string} message
   * @param {{ code: string, detail?: string } | undefined} [fatal] the FATAL error the client gets
   */
  constructor(message, fatal) {
    super(message);
    this.fatal = fatal;
  }
}

/**
 * @typedef {{ kind: "startup", packet: Buffer } | { kind: "message", type: number, message: Buffer }} Frame
 */

/**
 * Splits what a client sends into frames: startup packets until `startupDone()`, then typed
 * messages. Chunks are kept as they came and joined once per frame (no copying of the whole
 * buffer at every chunk); a length is judged from its header alone.
 */
export class FrontendReader {
  /** @type {Buffer[]} */
  #chunks = [];
  #buffered = 0;
  /** @type {"startup" | "auth" | "ready"} */
  #phase = "startup";

  /** Bytes received and not yet taken as frames. */
  get buffered() {
    return this.#buffered;
  }

  /** The startup packet was taken: authentication messages follow. */
  startupDone() {
    this.#phase = "auth";
  }

  /** Authentication is over: the messages of a session follow. */
  authenticated() {
    this.#phase = "ready";
  }

  /** @param {Buffer} data */
  push(data) {
    if (data.length === 0) return;
    this.#chunks.push(data);
    this.#buffered += data.length;
  }

  /**
   * The next complete frame, or undefined until more arrives. Throws WireError for a length or
   * type Postgres would refuse, as soon as the header shows it.
   * @returns {Frame | undefined}
   */
  next() {
    if (this.#phase === "startup") {
      const header = this.#peek(4);
      if (!header) return undefined;
      const length = header.readInt32BE(0) - 4;
      if (length < 4 || length > MAX_STARTUP_PACKET_LENGTH) {
        throw new WireError(`invalid length of startup packet (${length} bytes after the length)`);
      }
      const packet = this.#take(length + 4);
      return packet && { kind: "startup", packet };
    }
    const header = this.#peek(5);
    if (!header) return undefined;
    const type = /** @type {number} */ (header[0]);
    const length = header.readInt32BE(1);
    const limit = this.#phase === "auth" ? PG_MAX_AUTH_TOKEN_LENGTH : MESSAGE_LIMITS.get(type);
    if (this.#phase === "auth" && type !== PASSWORD_MESSAGE) {
      throw new WireError(`expected SASL response, got message type ${type}`, { code: "08P01" });
    }
    if (limit === undefined) {
      throw new WireError(`invalid frontend message type ${type}`, { code: "08P01" });
    }
    if (length < 4 || length > limit) {
      const name = String.fromCharCode(type);
      throw new WireError(`invalid message length (${name} of ${length} bytes, at most ${limit})`);
    }
    const message = this.#take(length + 1);
    return message && { kind: "message", type, message };
  }

  /** The first `n` bytes without taking them (joined into one chunk), if they are here. */
  /** @param {number} n */
  #peek(n) {
    if (this.#buffered < n) return undefined;
    const first = /** @type {Buffer} */ (this.#chunks[0]);
    if (first.length >= n) return first;
    const joined = this.#join(n);
    this.#chunks.unshift(joined);
    this.#buffered += joined.length;
    return joined;
  }

  /** The first `n` bytes, taken, if they are here. */
  /** @param {number} n */
  #take(n) {
    if (this.#buffered < n) return undefined;
    return this.#join(n);
  }

  /** Removes the first `n` bytes (n <= buffered) and returns them as one buffer. */
  /** @param {number} n */
  #join(n) {
    /** @type {Buffer[]} */
    const parts = [];
    let needed = n;
    while (needed > 0) {
      const chunk = /** @type {Buffer} */ (this.#chunks[0]);
      if (chunk.length <= needed) {
        parts.push(chunk);
        this.#chunks.shift();
        needed -= chunk.length;
      } else {
        parts.push(chunk.subarray(0, needed));
        this.#chunks[0] = chunk.subarray(needed);
        needed = 0;
      }
    }
    this.#buffered -= n;
    return parts.length === 1 ? /** @type {Buffer} */ (parts[0]) : Buffer.concat(parts, n);
  }
}

/**
 * A startup packet's protocol version and parameters (name/value C strings, then a terminator).
 * @param {Buffer} packet
 * @returns {{ major: number, minor: number, params: Map<string, string> }}
 */
export function parseStartupPacket(packet) {
  const version = packet.readInt32BE(4);
  const params = new Map();
  let at = 8;
  for (;;) {
    const end = packet.indexOf(0, at);
    if (end === -1) break;
    if (end === at) {
      if (end === packet.length - 1)
        return { major: version >>> 16, minor: version & 0xffff, params };
      break;
    }
    const name = packet.toString("utf8", at, end);
    const valueEnd = packet.indexOf(0, end + 1);
    if (valueEnd === -1) break;
    params.set(name, packet.toString("utf8", end + 1, valueEnd));
    at = valueEnd + 1;
  }
  throw new WireError("invalid startup packet layout: expected terminator as last byte", {
    code: "08P01",
  });
}

/**
 * A backend message: its type, then its body with the length word before it.
 * @param {string} type
 * @param {Buffer} body
 */
function backendMessage(type, body) {
  const header = Buffer.alloc(5);
  header.write(type, 0, "latin1");
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

/**
 * An Authentication message: its code (10 SASL, 11 SASLContinue, 12 SASLFinal), then its data.
 * @param {number} code
 * @param {Buffer} data
 */
export function authenticationMessage(code, data) {
  const head = Buffer.alloc(4);
  head.writeInt32BE(code, 0);
  return backendMessage("R", Buffer.concat([head, data]));
}

/**
 * An ErrorResponse, as Postgres sends it (severity twice: localized and not).
 * @param {string} severity
 * @param {string} code
 * @param {string} message
 * @param {string} [detail]
 */
export function errorResponse(severity, code, message, detail) {
  /** @param {string} type @param {string} value */
  const field = (type, value) => Buffer.from(`${type}${value}\0`, "utf8");
  return backendMessage(
    "E",
    Buffer.concat([
      field("S", severity),
      field("V", severity),
      field("C", code),
      field("M", message),
      ...(detail ? [field("D", detail)] : []),
      Buffer.from([0]),
    ]),
  );
}

// NOTIFY from a Postgres port connection (postgres-port.js). PGlite is one Postgres backend: the
// channels the backend itself listens on (supabase_local_changes for Realtime's change feed, and
// the broadcasts realtime.send() makes) are that backend's LISTENs, so a NotificationResponse for
// them comes out in whatever answer the backend writes next. Through PGlite's own query calls it
// reaches the listener; through a connection's raw protocol stream it would reach the connection
// instead, and the backend would learn of a commit made in psql only when some API query came
// after it. So a connection's answer is read message by message as it streams: a notification on a
// channel the backend listens on goes to the backend's listener and not to the connection (which
// never asked for it); every other message, notifications of the connection's own LISTENs
// included, passes through as it came, in the chunks it came in.
//
// JavaScript for the reason worker.js gives (the database thread loads it).

const NOTIFICATION_RESPONSE = 0x41; // 'A'
const HEADER = 5; // type byte, then the length (which counts itself)

export class BackendNotifications {
  /** The channels the backend listens on, and what to call for each notification on them. */
  #take;
  /** The current message's header while it arrives split across chunks. */
  #header = new Uint8Array(HEADER);
  #headerLength = 0;
  /** Bytes of the current message still to pass through. */
  #passing = 0;
  /** A notification being gathered: its bytes, and how many it will have. @type {Uint8Array | undefined} */
  #notification;
  #gathered = 0;

  /**
   * @param {(channel: string, payload: string) => boolean} take Delivers a notification to the
   *   backend if it listens on the channel, and says whether it did.
   */
  constructor(take) {
    this.#take = take;
  }

  /**
   * The parts of `data` the connection gets, as views of it where they pass unchanged.
   * @param {Uint8Array} data
   * @returns {Uint8Array[]}
   */
  pass(data) {
    /** @type {Uint8Array[]} */
    const out = [];
    let at = 0;
    let from = 0; // the start of the run of bytes passing through
    const flush = () => {
      if (at > from) out.push(data.subarray(from, at));
    };
    while (at < data.length) {
      if (this.#passing > 0) {
        const n = Math.min(this.#passing, data.length - at);
        this.#passing -= n;
        at += n;
      } else if (this.#notification) {
        const n = Math.min(this.#notification.length - this.#gathered, data.length - at);
        this.#notification.set(data.subarray(at, at + n), this.#gathered);
        this.#gathered += n;
        at += n;
        from = at;
        if (this.#gathered === this.#notification.length) this.#finish(out);
      } else if (this.#headerLength === 0 && data.length - at >= HEADER) {
        const header = data.subarray(at, at + HEADER);
        if (header[0] === NOTIFICATION_RESPONSE) {
          flush();
          at += HEADER;
          from = at;
          this.#begin(header, out);
        } else {
          at += HEADER;
          this.#passing = bodyLength(header);
        }
      } else {
        // a header split across chunks: held back until it is whole
        if (this.#headerLength === 0) flush();
        const n = Math.min(HEADER - this.#headerLength, data.length - at);
        this.#header.set(data.subarray(at, at + n), this.#headerLength);
        this.#headerLength += n;
        at += n;
        from = at;
        if (this.#headerLength < HEADER) break;
        this.#headerLength = 0;
        if (this.#header[0] === NOTIFICATION_RESPONSE) {
          this.#begin(this.#header, out);
        } else {
          out.push(this.#header.slice());
          this.#passing = bodyLength(this.#header);
        }
      }
    }
    if (!this.#notification) flush();
    return out;
  }

  /** @param {Uint8Array} header @param {Uint8Array[]} out */
  #begin(header, out) {
    this.#notification = new Uint8Array(HEADER + bodyLength(header));
    this.#notification.set(header);
    this.#gathered = HEADER;
    if (this.#gathered === this.#notification.length) this.#finish(out);
  }

  /** @param {Uint8Array[]} out */
  #finish(out) {
    const message = /** @type {Uint8Array} */ (this.#notification);
    this.#notification = undefined;
    if (!this.#deliver(message)) out.push(message);
  }

  /** @param {Uint8Array} message @returns {boolean} */
  #deliver(message) {
    // NotificationResponse: the sender's pid (4 bytes), the channel, the payload (C strings)
    const body = message.subarray(HEADER + 4);
    const end = body.indexOf(0);
    if (end < 0) return false;
    const rest = body.subarray(end + 1);
    const payloadEnd = rest.indexOf(0);
    if (payloadEnd < 0) return false;
    const decoder = new TextDecoder();
    return this.#take(
      decoder.decode(body.subarray(0, end)),
      decoder.decode(rest.subarray(0, payloadEnd)),
    );
  }
}

/** The bytes after a message's header: its length counts itself (4 bytes) and not the type. */
/** @param {Uint8Array} header @returns {number} */
function bodyLength(header) {
  const length = new DataView(header.buffer, header.byteOffset, HEADER).getInt32(1);
  return Math.max(0, length - 4);
}

// SCRAM-SHA-256 (RFC 5802, RFC 7677), the server's side, as Postgres runs it (auth-scram.c) for
// the Postgres port's password: SASL mechanism SCRAM-SHA-256 only (no -PLUS: the port has no TLS
// to bind to), a 16-byte salt, 4096 iterations (scram_iterations), an 18-byte server nonce. A
// user other than the port's gets the same exchange against a made-up verifier, so it fails at
// the same step as a wrong password, with the same error ("password authentication failed for
// user …"), as Postgres does for an unknown role.
//
// Hand-written on node:crypto: no package on npm keeps a server side of SCRAM (pg-gateway's, in a
// beta for over a year, answers a wrong password with 28000 and has no message size limits).
// Decision 020. JavaScript for the reason worker.js gives (the database thread loads it).
import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from "node:crypto";
import { WireError } from "./postgres-wire.js";

export const SCRAM_SHA_256 = "SCRAM-SHA-256";
const ITERATIONS = 4096;
const SALT_BYTES = 16;
const NONCE_BYTES = 18;

/**
 * What a server keeps of a password (pg_authid.rolpassword's parts).
 * @typedef {{ salt: Buffer, iterations: number, storedKey: Buffer, serverKey: Buffer }} Verifier
 */

/** @param {Buffer} key @param {string} data */
const hmac = (key, data) => createHmac("sha256", key).update(data, "utf8").digest();
/** @param {Buffer} data */
const sha256 = (data) => createHash("sha256").update(data).digest();

/**
 * The verifier of `password` (ASCII: SASLprep leaves it as it is).
 * @param {string} password
 * @returns {Verifier}
 */
export function scramVerifier(password, salt = randomBytes(SALT_BYTES), iterations = ITERATIONS) {
  const salted = pbkdf2Sync(password, salt, iterations, 32, "sha256");
  return {
    salt,
    iterations,
    storedKey: sha256(hmac(salted, "Client Key")),
    serverKey: hmac(salted, "Server Key"),
  };
}

/** A malformed exchange: Postgres's FATAL 08P01. @param {string} detail */
const malformed = (detail) => new WireError("malformed SCRAM message", { code: "08P01", detail });

/**
 * The comma-separated attributes of a SCRAM message (`x=value`), in order.
 * @param {string} text
 * @returns {[string, string][]}
 */
function attributes(text) {
  return text.split(",").map((part) => {
    if (!/^[A-Za-z]=/.test(part)) throw malformed(`attribute expected, got "${part}"`);
    return [part.charAt(0), part.slice(2)];
  });
}

/** One client's exchange: `first()`, then `final()`. */
export class ScramExchange {
  /** @type {Verifier} */
  #verifier;
  /** Whether the verifier is the real one (a made-up one fails whatever the proof). */
  #known;
  #gs2Header = "";
  #clientFirstBare = "";
  #serverFirst = "";
  #nonce = "";

  /**
   * @param {Verifier} verifier the user's, or a made-up one for a user who may not log in
   * @param {boolean} known
   */
  constructor(verifier, known) {
    this.#verifier = verifier;
    this.#known = known;
  }

  /** Whether the client-first-message was answered (a SASLResponse comes next). */
  get started() {
    return this.#serverFirst !== "";
  }

  /**
   * SASLInitialResponse: the mechanism, then the client-first-message. Returns the server-first-
   * message for AuthenticationSASLContinue.
   * @param {Buffer} message the whole 'p' message
   * @returns {Buffer}
   */
  first(message) {
    const nameEnd = message.indexOf(0, 5);
    if (nameEnd === -1 || nameEnd + 5 > message.length) throw malformed("no mechanism");
    const mechanism = message.toString("utf8", 5, nameEnd);
    if (mechanism !== SCRAM_SHA_256) {
      throw new WireError("client selected an invalid SASL authentication mechanism", {
        code: "08P01",
      });
    }
    const length = message.readInt32BE(nameEnd + 1);
    const data = message.subarray(nameEnd + 5);
    if (length !== data.length) throw malformed("the initial response's length");
    const text = data.toString("utf8");
    // gs2-header: a channel-binding flag, an authzid, then client-first-message-bare
    const [flag = "", authzid = "", ...bare] = text.split(",");
    if (flag.startsWith("p=")) throw malformed("channel binding is not supported without TLS");
    if (flag !== "n" && flag !== "y") throw malformed(`unexpected channel-binding flag "${flag}"`);
    if (authzid !== "") {
      throw new WireError("client uses authorization identity, but it is not supported", {
        code: "0A000",
      });
    }
    this.#gs2Header = `${flag},,`;
    this.#clientFirstBare = bare.join(",");
    const [user, nonce, ...extensions] = attributes(this.#clientFirstBare);
    if (user?.[0] !== "n" || nonce?.[0] !== "r" || extensions.length > 0) {
      throw malformed("expected n= and r= only");
    }
    const clientNonce = nonce[1];
    if (clientNonce === "" || !/^[\x21-\x2b\x2d-\x7e]+$/.test(clientNonce)) {
      throw malformed("the client nonce");
    }
    this.#nonce = clientNonce + randomBytes(NONCE_BYTES).toString("base64");
    const { salt, iterations } = this.#verifier;
    this.#serverFirst = `r=${this.#nonce},s=${salt.toString("base64")},i=${iterations}`;
    return Buffer.from(this.#serverFirst, "utf8");
  }

  /**
   * SASLResponse: the client-final-message. Returns the server-final-message for
   * AuthenticationSASLFinal, or undefined when the proof does not hold (a wrong password).
   * @param {Buffer} message the whole 'p' message
   * @returns {Buffer | undefined}
   */
  final(message) {
    const text = message.toString("utf8", 5);
    const proofAt = text.lastIndexOf(",p=");
    if (proofAt === -1) throw malformed("no proof");
    const withoutProof = text.slice(0, proofAt);
    const [binding, nonce, ...extensions] = attributes(withoutProof);
    if (binding?.[0] !== "c" || nonce?.[0] !== "r" || extensions.length > 0) {
      throw malformed("expected c= and r=");
    }
    if (Buffer.from(binding[1], "base64").toString("utf8") !== this.#gs2Header) {
      throw malformed("the channel binding does not match");
    }
    if (nonce[1] !== this.#nonce) throw malformed("the nonce does not match");
    const proof = Buffer.from(text.slice(proofAt + 3), "base64");
    if (proof.length !== 32) throw malformed("the proof");
    const authMessage = `${this.#clientFirstBare},${this.#serverFirst},${withoutProof}`;
    const { storedKey, serverKey } = this.#verifier;
    const signature = hmac(storedKey, authMessage);
    const clientKey = Buffer.alloc(32);
    for (let i = 0; i < 32; i++)
      clientKey[i] = /** @type {number} */ (proof[i]) ^ /** @type {number} */ (signature[i]);
    const matches = timingSafeEqual(sha256(clientKey), storedKey);
    if (!matches || !this.#known) return undefined;
    return Buffer.from(`v=${hmac(serverKey, authMessage).toString("base64")}`, "utf8");
  }
}

/**
 * A made-up verifier for `user`: the same salt every time for the same name (as Postgres's mock
 * salt), so a probe cannot tell a user who may log in from one who may not.
 * @param {Buffer} secret
 * @param {string} user
 * @returns {Verifier}
 */
export function mockVerifier(secret, user) {
  return {
    salt: hmac(secret, user).subarray(0, SALT_BYTES),
    iterations: ITERATIONS,
    storedKey: randomBytes(32),
    serverKey: randomBytes(32),
  };
}

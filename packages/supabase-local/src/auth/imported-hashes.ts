// The password hashes Auth takes from another system (POST /admin/users `password_hash`) besides
// bcrypt: argon2 (argon2i and argon2id, as PHC strings) and Firebase's scrypt. Each is read with
// the rules of Auth v2.189.0 (crypto.ParseArgon2Hash, crypto.ParseFirebaseScryptHash): what they
// refuse is refused at import, with the reason; what they take is stored as it is and compared at
// sign-in (crypto.CompareHashAndPassword picks the algorithm by the prefix), never re-hashed. One
// longer than auth.users.encrypted_password holds (255 characters), which Auth fails to store (a
// 500), is refused here with the rest.
//
// Where Auth would compute a key this backend cannot, the hash matches no password (a wrong
// password's answer), never an error: parameters beyond the reference argon2's limits, which
// hash-wasm keeps (a salt under 8 bytes, a hash under 4, an empty password, m under 8·p, t or p of
// 0: Go's argon2 computes the first four and panics on the last two), a Firebase scrypt whose
// memory is over 1 GiB (Go would try to allocate it), and one with r under 4 and N of 2^(16·r) or
// more, which OpenSSL refuses (Firebase's own have r ≤ 8 and n ≤ 14).
import { createCipheriv, scrypt, timingSafeEqual } from "node:crypto";
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

const ARGON2_PREFIX = "$argon2";
const FIREBASE_SCRYPT_PREFIX = "$fbscrypt";

/** auth.users.encrypted_password is a varchar(255): a longer hash cannot be stored. */
const MAX_HASH_LENGTH = 255;

/** The most memory one comparison may take: Auth's limit on argon2's m, 1 GiB. */
const MAX_MEMORY = 1n << 30n;

interface Argon2Hash {
  kind: "argon2";
  algorithm: "argon2i" | "argon2id";
  /** m, in KiB */
  memory: number;
  iterations: number;
  parallelism: number;
  salt: Buffer;
  key: Buffer;
}

interface FirebaseScryptHash {
  kind: "fbscrypt";
  /** n: N is 2^n */
  log2N: number;
  /** r: a 64-bit number in Auth */
  blockSize: bigint;
  parallelism: number;
  saltSeparator: Buffer;
  signerKey: Buffer;
  salt: Buffer;
  key: Buffer;
}

/** Why Auth refuses a hash (the reason after "Invalid password_hash: "). */
class Refused extends Error {}

/** Whether Auth reads the hash as argon2 or Firebase scrypt (by its prefix), not as bcrypt. */
export function isImportedHash(hash: string): boolean {
  return hash.startsWith(ARGON2_PREFIX) || hash.startsWith(FIREBASE_SCRYPT_PREFIX);
}

/** Why Auth would refuse this argon2 or Firebase scrypt hash at import; undefined if it takes it. */
export function importedHashProblem(hash: string): string | undefined {
  try {
    parse(hash);
    return undefined;
  } catch (error) {
    if (error instanceof Refused) return error.message;
    throw error;
  }
}

/**
 * Whether the password matches an argon2 or Firebase scrypt hash (false for one Auth cannot parse,
 * as Authenticate answers). Off the thread that answers requests: argon2 in a thread of its own
 * (hash-wasm computes in WebAssembly, synchronously: 0.6 to 0.9 s at m=65536, t=3, p=4 on two
 * cores, a tenth of it the thread's start; up to a minute at Auth's limits), scrypt on libuv's
 * pool (Node's async scrypt: 50 ms at Firebase's n=14, r=8, p=1); callers bound how many run.
 */
export async function verifyImportedHash(password: string, hash: string): Promise<boolean> {
  let parsed: Argon2Hash | FirebaseScryptHash;
  try {
    parsed = parse(hash);
  } catch (error) {
    if (error instanceof Refused) return false;
    throw error;
  }
  const secret = Buffer.from(password);
  const key =
    parsed.kind === "argon2"
      ? await argon2Key(secret, parsed)
      : await firebaseScryptKey(secret, parsed);
  // Go's subtle.ConstantTimeCompare: keys of different lengths do not match
  return key !== undefined && key.length === parsed.key.length && timingSafeEqual(key, parsed.key);
}

function parse(hash: string): Argon2Hash | FirebaseScryptHash {
  // Checked first, so that no pattern below runs over a long string (they backtrack).
  if (hash.length > 2 * MAX_HASH_LENGTH || [...hash].length > MAX_HASH_LENGTH) {
    throw new Refused(`longer than the ${MAX_HASH_LENGTH} characters auth.users can store`);
  }
  return hash.startsWith(ARGON2_PREFIX) ? parseArgon2(hash) : parseFirebaseScrypt(hash);
}

// The PHC string of argon2, as Auth matches it (Go's `.` is any character but a newline).
const ARGON2 =
  /^\$(argon2(?:d|i|id))\$v=(16|19)\$m=([0-9]+),t=([0-9]+),p=([0-9]+)(?:,keyid=([^,$]+))?(?:,data=([^$]+))?\$([^$]*)\$([^\n]*)$/;

function parseArgon2(hash: string): Argon2Hash {
  const match = hash.match(ARGON2);
  if (!match)
    throw new Refused("not an argon2 hash in PHC format ($argon2id$v=19$m=,t=,p=$salt$hash)");
  const [, algorithm, version, m, t, p, keyid, data, salt, key] = match as unknown as string[];
  if (algorithm !== "argon2i" && algorithm !== "argon2id") {
    throw new Refused(`${algorithm} is not supported, only argon2i and argon2id`);
  }
  if (version !== "19") throw new Refused(`argon2 version ${version} is not supported, only 19`);
  if (data) throw new Refused("argon2 hashes with a data parameter are not supported");
  if (keyid) throw new Refused("argon2 hashes with a keyid parameter are not supported");
  const memory = unsigned(m as string, 32, "argon2 m");
  if (memory > 1024 * 1024) throw new Refused(`the argon2 m parameter ${memory} is over 1 GiB`);
  const iterations = unsigned(t as string, 32, "argon2 t");
  if (iterations > 20) throw new Refused(`the argon2 t parameter ${iterations} is over 20`);
  const parallelism = unsigned(p as string, 8, "argon2 p");
  if (parallelism > 16) throw new Refused(`the argon2 p parameter ${parallelism} is over 16`);
  const rawKey = base64(key as string, false, "the argon2 hash");
  if (rawKey.length === 0) throw new Refused("the argon2 hash is empty");
  const rawSalt = base64(salt as string, false, "the argon2 salt");
  if (rawSalt.length === 0) throw new Refused("the argon2 salt is empty");
  return { kind: "argon2", algorithm, memory, iterations, parallelism, salt: rawSalt, key: rawKey };
}

// Firebase's parameters in one string, as Auth matches it.
const FIREBASE_SCRYPT =
  /^\$fbscrypt\$v=([0-9]+),n=([0-9]+),r=([0-9]+),p=([0-9]+)(?:,ss=([^,]+))?(?:,sk=([^$]+))?\$([^$]+)\$([^\n]+)$/;

function parseFirebaseScrypt(hash: string): FirebaseScryptHash {
  const match = hash.match(FIREBASE_SCRYPT);
  if (!match) {
    throw new Refused("not a Firebase scrypt hash ($fbscrypt$v=1,n=,r=,p=,ss=,sk=$salt$hash)");
  }
  const [, version, n, r, p, ss = "", sk = "", salt, key] = match as unknown as string[];
  if (version !== "1") {
    throw new Refused(`Firebase scrypt version ${version} is not supported, only 1`);
  }
  const log2N = unsigned(n as string, 32, "Firebase scrypt n");
  if (log2N === 0) throw new Refused("the Firebase scrypt n parameter is 0");
  const blockSize = unsignedBig(r as string, 64, "Firebase scrypt r");
  if (blockSize === 0n) throw new Refused("the Firebase scrypt r parameter is 0");
  const parallelism = unsigned(p as string, 8, "Firebase scrypt p");
  if (parallelism === 0) throw new Refused("the Firebase scrypt p parameter is 0");
  const rawKey = base64(key as string, true, "the Firebase scrypt hash");
  const rawSalt = base64(salt as string, true, "the Firebase scrypt salt");
  const signerKey = base64(sk, true, "the Firebase scrypt signer key (sk)");
  const saltSeparator = base64(ss, true, "the Firebase scrypt salt separator (ss)");
  return {
    kind: "fbscrypt",
    log2N,
    blockSize,
    parallelism,
    saltSeparator,
    signerKey,
    salt: rawSalt,
    key: rawKey,
  };
}

/** strconv.ParseUint(digits, 10, bits) of a parameter the pattern found to be digits. */
function unsignedBig(digits: string, bits: number, name: string): bigint {
  const value = BigInt(digits);
  if (value >= 1n << BigInt(bits)) {
    throw new Refused(`the ${name} parameter ${digits} is not a ${bits}-bit number`);
  }
  return value;
}

function unsigned(digits: string, bits: 8 | 32, name: string): number {
  return Number(unsignedBig(digits, bits, name));
}

// Go's base64 (StdEncoding with padding, RawStdEncoding without), which skips line breaks; Node's
// decoder would take anything, so the text is checked first.
const PADDED = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const UNPADDED = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2,3})?$/;

function base64(text: string, padded: boolean, what: string): Buffer {
  const bare = text.replace(/[\r\n]/g, "");
  if (!(padded ? PADDED : UNPADDED).test(bare)) {
    throw new Refused(`${what} is not base64 (${padded ? "with" : "without"} padding)`);
  }
  return Buffer.from(bare, "base64");
}

/** hash-wasm's entry point, loaded by each argon2 thread. */
const HASH_WASM = createRequire(import.meta.url).resolve("hash-wasm");

/** What an argon2 thread runs: one key, posted back; a failure is the thread's error. */
const ARGON2_THREAD = `const { parentPort, workerData } = require("node:worker_threads");
  const { library, algorithm, options } = workerData;
  require(library)[algorithm]({ ...options, outputType: "binary" })
    .then((key) => parentPort.postMessage(key));`;

/**
 * The argon2 key, in a thread started for it and ended with it: its WebAssembly memory (m KiB,
 * up to 1 GiB) goes with the thread. Undefined where hash-wasm (the reference's limits) cannot.
 */
function argon2Key(password: Buffer, hash: Argon2Hash): Promise<Buffer | undefined> {
  const { memory, iterations, parallelism, salt, key } = hash;
  if (
    password.length === 0 ||
    iterations < 1 ||
    parallelism < 1 ||
    memory < 8 * parallelism ||
    salt.length < 8 ||
    key.length < 4
  ) {
    return Promise.resolve(undefined);
  }
  const options = {
    password,
    salt,
    iterations,
    parallelism,
    memorySize: memory,
    hashLength: key.length,
  };
  return new Promise((resolve, reject) => {
    // None of the process's command-line options: a preload would load again in the thread.
    const thread = new Worker(ARGON2_THREAD, {
      eval: true,
      execArgv: [],
      workerData: { library: HASH_WASM, algorithm: hash.algorithm, options },
    });
    thread.once("message", (derived: Uint8Array) => resolve(Buffer.from(derived)));
    thread.once("error", reject);
    thread.once("exit", (code) => reject(new Error(`the argon2 thread stopped (exit ${code})`)));
  });
}

/**
 * Firebase's scrypt: scrypt(password, salt + salt separator, N, r, p) gives an AES-256 key, and
 * the signer key encrypted with it (CTR, a zero IV) is the hash. Undefined where the memory is
 * over the limit or OpenSSL refuses the parameters.
 */
async function firebaseScryptKey(
  password: Buffer,
  hash: FirebaseScryptHash,
): Promise<Buffer | undefined> {
  const { log2N, blockSize, parallelism } = hash;
  if (log2N > 30) return undefined; // 2^n·128·r bytes, over the limit whatever r
  const N = 1n << BigInt(log2N);
  // what OpenSSL allocates (and checks against maxmem): 128·r·(N + 2) for V, 128·r·p for B
  const memory = 128n * blockSize * (N + 2n + BigInt(parallelism));
  if (memory > MAX_MEMORY) return undefined;
  if (blockSize < 4n && N >= 1n << (16n * blockSize)) return undefined;
  const derived = await new Promise<Buffer>((resolve, reject) => {
    scrypt(
      password,
      Buffer.concat([hash.salt, hash.saltSeparator]),
      32,
      { N: Number(N), r: Number(blockSize), p: parallelism, maxmem: Number(memory) },
      (error, key) => (error ? reject(error) : resolve(key)),
    );
  });
  const cipher = createCipheriv("aes-256-ctr", derived, Buffer.alloc(16));
  return Buffer.concat([cipher.update(hash.signerKey), cipher.final()]);
}

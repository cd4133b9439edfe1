import { randomBytes } from "node:crypto";
import { availableParallelism } from "node:os";
import pLimit from "p-limit";
import type { Config } from "../project/config.ts";
import { authError, weakPassword } from "./errors.ts";
import { importedHashProblem, isImportedHash, verifyImportedHash } from "./imported-hashes.ts";

const MAX_PASSWORD_LENGTH = 72;

/**
 * bcrypt is native: its async hash and compare run on libuv's thread pool, never on the thread
 * that answers requests, so a burst of sign-ins does not stall the backend (issue 37, decision
 * 021). That pool (UV_THREADPOOL_SIZE, 4 by default) also runs the WebCrypto work of every
 * request's JWT, file reads and DNS, in arrival order: hashes beyond the cores would only queue
 * there ahead of them, so at most one per core runs, and always one thread is left over. Imported
 * argon2 and Firebase scrypt hashes are compared under the same limit (scrypt on the same pool,
 * argon2 in a thread of its own each, up to 1 GiB of memory).
 */
const hashing = pLimit(
  Math.max(1, Math.min(availableParallelism(), (Number(process.env.UV_THREADPOOL_SIZE) || 4) - 1)),
);

/**
 * A bcrypt hash of the configured cost (config.auth.passwordHashCost, 10 as the real service),
 * with Go's `$2a$` prefix, as auth.users holds what GoTrue stores.
 */
export function hashPassword(config: Config, password: string): Promise<string> {
  return hashAt(config.auth.passwordHashCost, password);
}

/**
 * The native binding, loaded on the first hash, or once the backend serves (preloadPasswords, from
 * http/app.ts), not with the backend: finding and loading it is CPU a start is short of.
 */
let binding: Promise<typeof import("bcrypt")> | undefined;

function native(): Promise<typeof import("bcrypt")> {
  binding ??= import("bcrypt").then((module) => module.default);
  return binding;
}

/** Loads bcrypt now (a failure is reported where a hash awaits it). */
export function preloadPasswords(): void {
  native().catch(() => {});
}

function hashAt(cost: number, password: string): Promise<string> {
  return hashing(async () => {
    const bcrypt = await native();
    return bcrypt.hash(password, await bcrypt.genSalt(cost, "a"));
  });
}

/** Compares at the cost the stored hash was made with (a seed's or an older run's may differ). */
export function comparePassword(password: string, hash: string | null): Promise<boolean> {
  if (!hash) return Promise.resolve(false);
  return compare(password, hash);
}

/**
 * As Auth's CompareHashAndPassword: an argon2 or Firebase scrypt hash (by its prefix) is compared
 * as such, anything else as bcrypt. Go's bcrypt reads any minor version as the one algorithm, so
 * an imported PHP hash (`$2y$`, the same algorithm as `$2b$`) verifies there; the native binding
 * knows only `$2a$` and `$2b$`.
 */
function compare(password: string, hash: string): Promise<boolean> {
  if (isImportedHash(hash)) return hashing(() => verifyImportedHash(password, hash));
  const known = hash.replace(/^\$2y\$/, () => "$2b$");
  return hashing(async () => (await native()).compare(password, known));
}

/** Per cost, a hash of a random value nobody knows (made once, on first use; never matched). */
const standIns = new Map<number, Promise<string>>();

function standInHash(cost: number): Promise<string> {
  let hash = standIns.get(cost);
  if (!hash) {
    hash = hashAt(cost, randomBytes(32).toString("base64"));
    standIns.set(cost, hash);
  }
  return hash;
}

/**
 * comparePassword for sign-in: without a hash to compare (no such account, or one without a
 * password) the password is still compared, against a stand-in hash of the configured cost, so
 * the answer takes as long as a wrong password and its timing does not tell which addresses have
 * accounts. Always false then.
 */
export async function comparePasswordForSignIn(
  config: Config,
  password: string,
  hash: string | null | undefined,
): Promise<boolean> {
  if (!hash) {
    await compare(password, await standInHash(config.auth.passwordHashCost));
    return false;
  }
  return compare(password, hash);
}

/**
 * An imported password_hash (POST /admin/users), checked as Auth checks it before storing it
 * (models.NewUserWithPasswordHash); Auth answers a bad one with a 500, here it is a 400. An argon2
 * or Firebase scrypt hash (by its prefix) must pass Auth's parser for it (imported-hashes.ts); any
 * other is taken for bcrypt and must pass Go's bcrypt.Cost: at least 59 bytes, "$", a major version
 * up to 2, a cost of 4 to 31.
 */
export function checkPasswordHash(hash: string): void {
  const refuse = (reason: string) => {
    throw authError("validationFailed", `Invalid password_hash: ${reason}`);
  };
  if (isImportedHash(hash)) {
    const problem = importedHashProblem(hash);
    if (problem) refuse(problem);
    return;
  }
  const bytes = Buffer.from(hash);
  if (bytes.length < 59) refuse("too short for a bcrypt hash");
  if (hash[0] !== "$") refuse("a bcrypt hash starts with $");
  if ((bytes[1] as number) > 0x32) refuse("the bcrypt version is newer than 2");
  const at = hash[2] === "$" ? 3 : 4;
  // strconv.Atoi of the cost's two bytes, which takes a sign
  const digits = hash.slice(at, at + 2);
  const cost = /^[+-]?\d+$/.test(digits) ? Number(digits) : Number.NaN;
  if (!(cost >= 4 && cost <= 31)) refuse("the bcrypt cost must be from 4 to 31");
}

/** checkPasswordStrength: a password a new one may be (422 weak_password with the reasons). */
export function checkPasswordStrength(config: Config, password: string): void {
  if (Buffer.byteLength(password) > MAX_PASSWORD_LENGTH) throw authError("passwordTooLong");
  const weakness = passwordWeakness(config, password);
  if (weakness) throw weakPassword(weakness.message, weakness.reasons);
}

/**
 * What makes a password weak under [auth] minimum_password_length (in bytes, as Go's len) and
 * password_requirements (a character of each set), in Auth's words; undefined if nothing does. A
 * password sign-in that succeeds reports it as `weak_password`, so that the app can ask for a new
 * one after the rules got stricter.
 */
export function passwordWeakness(
  config: Config,
  password: string,
): { message: string; reasons: string[] } | undefined {
  const messages: string[] = [];
  const reasons: string[] = [];
  const min = config.auth.minimumPasswordLength;
  if (Buffer.byteLength(password) < min) {
    reasons.push("length");
    messages.push(`Password should be at least ${min} characters.`);
  }
  const sets = config.auth.passwordRequiredCharacters;
  if (sets.some((set) => ![...set].some((character) => password.includes(character)))) {
    reasons.push("characters");
    messages.push(`Password should contain at least one character of each: ${sets.join(", ")}.`);
  }
  return reasons.length > 0 ? { message: messages.join(" "), reasons } : undefined;
}

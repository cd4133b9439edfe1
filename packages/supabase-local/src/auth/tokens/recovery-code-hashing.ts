import { randomBytes, randomInt, scrypt, timingSafeEqual } from "node:crypto";
import { promisify } from "node:util";

/**
 * MFA recovery codes: made, normalized and hashed as the real service does (crypto/recovery_codes.go),
 * except the hash: scrypt from node:crypto, as Node 22 has no argon2id. A code has 80 random bits,
 * so a cheap setting is enough; only the hash is stored.
 */

/** The lowercase base32 alphabet (RFC 4648): no 0/O or 1/I/L to confuse. */
const ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";
/** scrypt's block size and parallelism; its cost (log2 N) is the caller's, 12 by default. */
const SCRYPT = { r: 8, p: 1 } as const;
const KEY_LENGTH = 32;

const scryptAsync = promisify(scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number },
) => Promise<Buffer>;

/** A random code of `length` characters of the alphabet, in canonical (lowercase) form. */
export function generateRecoveryCode(length: number): string {
  let code = "";
  for (let i = 0; i < length; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return code;
}

/** NormalizeRecoveryCode: whitespace and hyphens stripped, lowercase (how users type it back). */
export function normalizeRecoveryCode(input: string): string {
  return input.replace(/[-\s]/g, "").toLowerCase();
}

/** `$scrypt$ln=<cost>,r=8,p=1$<salt>$<key>` (base64, unpadded); the cost is kept in the hash. */
export async function hashRecoveryCode(code: string, cost = 12): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(code, salt, KEY_LENGTH, { ...SCRYPT, N: 2 ** cost });
  return `$scrypt$ln=${cost},r=${SCRYPT.r},p=${SCRYPT.p}$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

/** Whether `code` (canonical) is the one `hash` was made from; a malformed hash never matches. */
export async function recoveryCodeMatches(hash: string, code: string): Promise<boolean> {
  const match = hash.match(/^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([\w-]+)\$([\w-]+)$/);
  if (!match) return false;
  const [, ln, r, p, salt, key] = match;
  const expected = Buffer.from(key ?? "", "base64url");
  const actual = await scryptAsync(code, Buffer.from(salt ?? "", "base64url"), expected.length, {
    N: 2 ** Number(ln),
    r: Number(r),
    p: Number(p),
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

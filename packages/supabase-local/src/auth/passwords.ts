import { randomBytes } from "node:crypto";
import bcrypt from "bcryptjs";
import type { Config } from "../config.ts";
import { authError, weakPassword } from "./errors.ts";

const MAX_PASSWORD_LENGTH = 72;

/**
 * A bcrypt hash of the configured cost (config.auth.passwordHashCost, 10 as the real service),
 * with Go's `$2a$` prefix: bcryptjs writes `$2b$`, the same algorithm for passwords of at most 72
 * bytes, but auth.users should hold what GoTrue stores.
 */
export async function hashPassword(config: Config, password: string): Promise<string> {
  const hash = await bcrypt.hash(password, config.auth.passwordHashCost);
  return hash.replace(/^\$2b\$/, "$2a$");
}

/** Compares at the cost the stored hash was made with (a seed's or an older run's may differ). */
export function comparePassword(password: string, hash: string | null): Promise<boolean> {
  if (!hash) return Promise.resolve(false);
  return bcrypt.compare(password, hash);
}

/** Per cost, a hash of a random value nobody knows (made once, on first use; never matched). */
const standIns = new Map<number, Promise<string>>();

function standInHash(cost: number): Promise<string> {
  let hash = standIns.get(cost);
  if (!hash) {
    hash = bcrypt.hash(randomBytes(32).toString("base64"), cost);
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
    await bcrypt.compare(password, await standInHash(config.auth.passwordHashCost));
    return false;
  }
  return bcrypt.compare(password, hash);
}

/** checkPasswordStrength: length limits from config (422 weak_password with reasons). */
export function checkPasswordStrength(config: Config, password: string): void {
  if (password.length > MAX_PASSWORD_LENGTH) throw authError("passwordTooLong");
  const min = config.auth.minimumPasswordLength;
  if (password.length < min) {
    throw weakPassword(`Password should be at least ${min} characters.`, ["length"]);
  }
}

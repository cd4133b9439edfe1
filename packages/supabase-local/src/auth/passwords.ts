import bcrypt from "bcryptjs";
import type { Config } from "../config.ts";
import { authError, weakPassword } from "./errors.ts";

/** bcrypt cost the real service uses (Go's bcrypt.DefaultCost). */
export const BCRYPT_COST = 10;
const MAX_PASSWORD_LENGTH = 72;

export function hashPassword(password: string): Promise<string> {
  return bcrypt.hash(password, BCRYPT_COST);
}

export function comparePassword(password: string, hash: string | null): Promise<boolean> {
  if (!hash) return Promise.resolve(false);
  return bcrypt.compare(password, hash);
}

/** A bcrypt hash of the real cost, of a random value nobody knows (its result is never used). */
const STAND_IN_HASH = "$2b$10$q8uIy2romc/akeWGqWsHS.iM/rq8YA0AVAzkk4avYCzaFn.eB3mZe";

/**
 * comparePassword for sign-in: without a hash to compare (no such account, or one without a
 * password) the password is still compared, against a stand-in hash of the same cost, so the
 * answer takes as long as a wrong password and its timing does not tell which addresses have
 * accounts. Always false then.
 */
export async function comparePasswordForSignIn(
  password: string,
  hash: string | null | undefined,
): Promise<boolean> {
  if (!hash) {
    await bcrypt.compare(password, STAND_IN_HASH);
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

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

/** checkPasswordStrength: length limits from config (422 weak_password with reasons). */
export function checkPasswordStrength(config: Config, password: string): void {
  if (password.length > MAX_PASSWORD_LENGTH) throw authError("passwordTooLong");
  const min = config.auth.minimumPasswordLength;
  if (password.length < min) {
    throw weakPassword(`Password should be at least ${min} characters.`, ["length"]);
  }
}

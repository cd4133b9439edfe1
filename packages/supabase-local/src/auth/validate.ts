import { authError } from "./errors.ts";

// The shape checkmail.ValidateFormat accepts (local@domain.tld, no spaces).
const EMAIL =
  /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+$/;

/** validateEmail: required, ≤ 255 characters, a valid format; returns it lower-cased. */
export function validateEmail(email: string | undefined): string {
  if (!email) throw authError("emailRequired");
  if (email.length > 255) throw authError("emailTooLong");
  if (!EMAIL.test(email))
    throw authError("emailRequired", "Unable to validate email address: invalid format");
  return email.toLowerCase();
}

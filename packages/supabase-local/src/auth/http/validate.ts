import { authError } from "../errors.ts";

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

/** A UUID as the real service's path and body parameters accept it (any version, any case). */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** validatePhone: "+" and spaces dropped, then E.164 digits (1-15, no leading 0). */
export function validatePhone(phone: string | undefined): string {
  const formatted = (phone ?? "").replace(/^\+/, "").replaceAll(" ", "");
  if (!/^[1-9][0-9]{1,14}$/.test(formatted)) throw authError("invalidPhone");
  return formatted;
}

/** IsValidMessageChannel: "sms" (the default); "whatsapp" needs Twilio, which is never local. */
export function validateChannel(channel: string | undefined): void {
  if ((channel || "sms") !== "sms") throw authError("invalidChannel");
}

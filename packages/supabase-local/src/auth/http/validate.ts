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

/**
 * A factor's or passkey's friendly_name: at most 120 bytes (len() of a Go string), the limit Auth
 * sets for passkey names. Auth sets none for MFA factors, whose names then fail in the database's
 * unique index (a 500) once a few kilobytes long; here every name has the passkeys' one rule.
 */
export function validateFriendlyName(name: string): void {
  if (Buffer.byteLength(name) > 120) throw authError("friendlyNameTooLong");
}

const UINT64_MAX = 2n ** 64n - 1n;

/**
 * paginate's page and per_page, read as strconv.ParseUint reads them (digits only, up to 2^64-1),
 * refused with Auth's 400 otherwise; absent or empty is `fallback`. Then as pop's Paginate: a page
 * below 1 is 1, a per_page below 1 is 20.
 */
export function pagination(url: URL, defaultPerPage: number): { page: number; perPage: number } {
  const page = parseUint(url.searchParams.get("page"), 1);
  const perPage = parseUint(url.searchParams.get("per_page"), defaultPerPage);
  return { page: Math.max(1, page), perPage: perPage < 1 ? 20 : perPage };
}

function parseUint(value: string | null, fallback: number): number {
  if (value === null || value === "") return fallback;
  const reason = !/^\d+$/.test(value)
    ? "invalid syntax"
    : BigInt(value) > UINT64_MAX
      ? "value out of range"
      : undefined;
  if (reason) {
    throw authError(
      "validationFailed",
      `Bad Pagination Parameters: strconv.ParseUint: parsing ${JSON.stringify(value)}: ${reason}`,
    );
  }
  return Number(value);
}

/** The rows a page skips. A page far past the end (up to 2^64) is still an empty page: the offset
 * stops at 2^53, beyond any table and within Postgres' bigint. */
export function pageOffset(page: number, perPage: number): number {
  return Math.min((page - 1) * perPage, Number.MAX_SAFE_INTEGER);
}

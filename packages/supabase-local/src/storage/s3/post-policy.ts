// POST uploads (an HTML form, or createPresignedPost's fields): the form carries a base64 policy
// document, signed, whose conditions every field sent must meet (upstream's
// storage/protocols/s3/policy.ts): an expiration, exact matches, `starts-with`, and every field
// but the signature's own covered by a condition. `content-length-range` is kept too, as S3
// keeps it (upstream reads it and does not yet enforce it): its bounds become the upload's limits.
import { ERRORS, StorageError } from "../errors.ts";

interface Policy {
  expiration?: unknown;
  conditions?: unknown;
}

/** Fields a policy need not name (S3's list; `x-ignore-*` too). */
const EXEMPT = new Set([
  "policy",
  "x-amz-signature",
  "x-amz-algorithm",
  "x-amz-credential",
  "x-amz-date",
  "x-amz-security-token",
]);

export interface PolicyLimits {
  /** content-length-range: the fewest and most bytes the file may have. */
  min?: number;
  max?: number;
}

/**
 * Checks the signed policy against the fields sent (names in lower case) and the path's bucket:
 * InvalidSignature for a policy that cannot be read, ExpiredToken past its expiration,
 * AccessDenied for a condition not met or a field no condition covers.
 */
export function checkPolicy(
  encoded: string,
  fields: Record<string, string>,
  bucket: string,
): PolicyLimits {
  let policy: Policy;
  try {
    policy = JSON.parse(Buffer.from(encoded, "base64").toString("utf8"));
    if (!policy || typeof policy !== "object") throw new Error();
  } catch {
    throw ERRORS.invalidSignature("Invalid POST policy");
  }
  if (typeof policy.expiration !== "string" || policy.expiration === "")
    throw ERRORS.invalidSignature("Missing policy expiration");
  const expiration = Date.parse(policy.expiration);
  if (Number.isNaN(expiration)) throw ERRORS.invalidSignature("Invalid policy expiration");
  if (expiration < Date.now()) throw ERRORS.expiredSignature();
  if (!Array.isArray(policy.conditions)) throw ERRORS.invalidSignature("Invalid policy conditions");

  const values: Record<string, string> = { ...fields, bucket };
  const covered = new Set<string>();
  const limits: PolicyLimits = {};
  for (const condition of policy.conditions as unknown[]) {
    if (condition && typeof condition === "object" && !Array.isArray(condition)) {
      const entries = Object.entries(condition);
      const [name, expected] = entries[0] ?? [];
      if (entries.length !== 1 || name === undefined)
        throw ERRORS.invalidSignature("Invalid policy condition");
      const field = name.toLowerCase();
      equals(field, expected, values);
      covered.add(field);
      continue;
    }
    if (!Array.isArray(condition)) throw ERRORS.invalidSignature("Unsupported policy condition");
    const [operator, target, value] = condition as unknown[];
    if (operator === "content-length-range") {
      const min = Number(target);
      const max = Number(value);
      if (!Number.isInteger(min) || !Number.isInteger(max) || min < 0 || max < min)
        throw ERRORS.invalidSignature("Invalid policy condition");
      limits.min = min;
      limits.max = max;
      continue;
    }
    if ((operator === "eq" || operator === "starts-with") && typeof target === "string") {
      if (!target.startsWith("$")) throw ERRORS.invalidSignature("Invalid policy condition");
      const field = target.slice(1).toLowerCase();
      if (operator === "eq") equals(field, value, values);
      else {
        const actual = values[field];
        if (actual === undefined || !actual.startsWith(String(value ?? "")))
          throw ERRORS.accessDenied(
            `Policy condition failed: "${field}" does not start with "${String(value)}"`,
          );
      }
      covered.add(field);
      continue;
    }
    throw ERRORS.invalidSignature("Unsupported policy condition");
  }
  for (const field of Object.keys(values)) {
    if (EXEMPT.has(field) || field.startsWith("x-ignore-") || covered.has(field)) continue;
    throw ERRORS.accessDenied(
      `Policy condition failed: field "${field}" is not covered by the policy`,
    );
  }
  return limits;
}

function equals(field: string, expected: unknown, values: Record<string, string>): void {
  const actual = values[field];
  if (actual === undefined || actual !== String(expected))
    throw ERRORS.accessDenied(`Policy condition failed: "${field}" does not match`);
}

/** A file under content-length-range's minimum (S3's EntityTooSmall). */
export function entityTooSmall(): StorageError {
  return new StorageError(
    400,
    "EntityTooSmall",
    "Your proposed upload is smaller than the minimum allowed size",
  );
}

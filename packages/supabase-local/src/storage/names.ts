// What Storage accepts as names, sizes and types, as upstream's storage/limits.ts and
// storage.ts check them: object keys and bucket names from an allow-list of S3-safe characters
// (so "Résumé.pdf" is refused on hosted Supabase too), sizes as "20MB", MIME types as type/subtype.
import { ERRORS } from "./errors.ts";

/** Upstream's isValidKey: word characters and / ! - . * ' ( ) space & $ @ = ; : + , ? only. */
export function isValidKey(key: string): boolean {
  return key.length > 0 && /^[\w/!\-.*'() &$@=;:+,?]*$/.test(key);
}

/** The same allow-list without `/`, at most 100 characters (upstream's isValidBucketName). */
export function isValidBucketName(name: string): boolean {
  return name.length > 0 && name.length < 101 && /^[\w!\-.*'() &$@=;:+,?]*$/.test(name);
}

/**
 * A valid key of at most 1024 bytes: hosted Storage keeps objects in S3, whose keys end there (a
 * longer one fails in S3); here it would fail in the key's index instead.
 */
export function mustBeValidKey(key: string | undefined): string {
  if (!key || !isValidKey(key) || Buffer.byteLength(key) > 1024) throw ERRORS.invalidKey(key ?? "");
  return key;
}

export function mustBeValidBucketName(name: string | undefined): string {
  if (!name || !isValidBucketName(name)) throw ERRORS.invalidBucketName();
  return name;
}

/** "20GB" / "20MB" / "30KB" / "3B" (decimal, three significant digits), as upstream parses them. */
export function parseFileSizeToBytes(value: string): number {
  const match = /^([0-9]+(?:\.[0-9]+)?)(gb|mb|kb|b)$/i.exec(value);
  if (!match) throw ERRORS.invalidFileSizeLimit();
  const amount = +Number.parseFloat(match[1] as string).toPrecision(3);
  const unit = (match[2] as string).toUpperCase();
  return amount * ({ GB: 1e9, MB: 1e6, KB: 1e3, B: 1 } as Record<string, number>)[unit]!;
}

/** A bucket's allowed_mime_types entries: type/subtype (with an optional charset) or a `*`. */
export function mustBeValidMimeTypes(types: string[]): void {
  for (const type of types) {
    if (
      type.length > 1000 ||
      !/^([a-zA-Z0-9\-+.]+)\/([a-zA-Z0-9\-+.]+)(;\s*charset=[a-zA-Z0-9-]+)?$|\*$/.test(type)
    )
      throw ERRORS.invalidMimeType(type);
  }
}

/** Whether an upload's type is one the bucket allows (`image/*` allows any image). */
export function mustBeAllowedMimeType(mimeType: string, allowed: string[]): void {
  const [type, subtype] = mimeType.split("/");
  if (subtype === undefined) throw ERRORS.invalidMimeType(mimeType);
  for (const entry of allowed) {
    const [allowedType, allowedSubtype] = entry.split("/");
    if (allowedType === type && (allowedSubtype === "*" || allowedSubtype === subtype)) return;
  }
  throw ERRORS.invalidMimeType(mimeType);
}

/** Upstream's placeholder for an empty folder (exempt from the size and type checks). */
export function isEmptyFolder(key: string): boolean {
  return key.endsWith(".emptyFolderPlaceholder");
}

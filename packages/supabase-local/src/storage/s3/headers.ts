// What S3 requests and answers carry in headers: user metadata as `x-amz-meta-*`, and a copy's
// source in `x-amz-copy-source`.

/** `x-amz-meta-*` headers as an object's user metadata (names after the prefix). */
export function amzMetadata(headers: Headers): Record<string, string> | undefined {
  let metadata: Record<string, string> | undefined;
  headers.forEach((value, name) => {
    if (!name.startsWith("x-amz-meta-")) return;
    metadata ??= {};
    metadata[name.slice("x-amz-meta-".length)] = value;
  });
  return metadata;
}

/**
 * User metadata as `x-amz-meta-*` headers, as upstream sends them: a value no header can carry
 * (not a US-ASCII string) is left out and counted in `x-amz-missing-meta`.
 */
export function metadataHeaders(
  records: Record<string, unknown> | null | undefined,
): Record<string, string> {
  const headers: Record<string, string> = {};
  let missing = 0;
  for (const [name, value] of Object.entries(records ?? {})) {
    const header = `x-amz-meta-${name.toLowerCase()}`;
    if (
      name.length > 0 &&
      typeof value === "string" &&
      /^[\x20-\x7e]*$/.test(value) &&
      /^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(header)
    )
      headers[header] = value;
    else missing++;
  }
  if (missing > 0) headers["x-amz-missing-meta"] = String(missing);
  return headers;
}

/**
 * `x-amz-copy-source`: `[/]<bucket>/<key>[?versionId=…]`, percent-encoded as S3 has clients send
 * it; either part may come out empty, for the operation to refuse in its words. Undefined when it
 * does not decode.
 */
export function copySource(header: string): { bucket: string; key: string } | undefined {
  let value = header.split("?")[0] as string;
  try {
    value = decodeURIComponent(value);
  } catch {
    return undefined;
  }
  if (value.startsWith("/")) value = value.slice(1);
  const slash = value.indexOf("/");
  return slash === -1
    ? { bucket: value, key: "" }
    : { bucket: value.slice(0, slash), key: value.slice(slash + 1) };
}

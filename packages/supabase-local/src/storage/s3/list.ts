// ListObjects (V1 and V2) as the caller: keys in byte order (collation "C", as S3 orders UTF-8),
// under a prefix, after a marker, keys that share a part up to the delimiter rolled into one
// common prefix, and the page cut at max-keys, with the marker or token where the next begins.
import type { PGlite } from "@electric-sql/pglite";
import { asCaller, type Caller } from "../caller.ts";
import { ERRORS } from "../errors.ts";

export interface ListRequest {
  prefix: string;
  delimiter?: string;
  /** At most 1000 (upstream's cap; 0 or none is 1000 too). */
  maxKeys: number;
  /** Where the page starts, exclusive: a continuation token's key, a marker or start-after. */
  after?: string;
}

export interface ListedObject {
  key: string;
  lastModified: Date | null;
  eTag?: string;
  size: number;
}

export interface ListPage {
  objects: ListedObject[];
  prefixes: string[];
  truncated: boolean;
  /** The last key or common prefix of the page, where the next one starts (when truncated). */
  last?: string;
}

interface Row {
  name: string;
  updated_at: Date | null;
  metadata: { eTag?: string; size?: number } | null;
}

const BATCH = 200;

export async function listPage(
  db: PGlite,
  caller: Caller,
  bucketId: string,
  request: ListRequest,
): Promise<ListPage> {
  const { prefix, delimiter } = request;
  const objects: ListedObject[] = [];
  const prefixes: string[] = [];
  let count = 0;
  let last: string | undefined;
  // the next key to read: after `from` (or from it, inclusive, to skip a common prefix's keys)
  let from = request.after ?? "";
  let inclusive = false;
  if (request.after !== undefined && delimiter) {
    const rolled = commonPrefix(request.after, prefix, delimiter);
    if (rolled === request.after) {
      from = successor(rolled);
      inclusive = true;
    }
  }
  return asCaller(db, caller, async (tx) => {
    for (;;) {
      const { rows } = await tx.query<Row>(
        `select name, updated_at, metadata from storage.objects
         where bucket_id = $1 and starts_with(name, $2) and name collate "C" ${inclusive ? ">=" : ">"} $3
         order by name collate "C" limit ${BATCH}`,
        [bucketId, prefix, from],
      );
      let skipped = false;
      for (const row of rows) {
        if (count === request.maxKeys) return { objects, prefixes, truncated: true, last };
        const rolled = delimiter ? commonPrefix(row.name, prefix, delimiter) : undefined;
        if (rolled !== undefined) {
          prefixes.push(rolled);
          count++;
          last = rolled;
          // the rest of this prefix's keys are in it: read on after them
          from = successor(rolled);
          inclusive = true;
          skipped = true;
          break;
        }
        objects.push({
          key: row.name,
          lastModified: row.updated_at,
          eTag: row.metadata?.eTag,
          size: Number(row.metadata?.size ?? 0),
        });
        count++;
        last = row.name;
        from = row.name;
        inclusive = false;
      }
      if (!skipped && rows.length < BATCH) return { objects, prefixes, truncated: false, last };
    }
  });
}

/** The key's part up to and with the first delimiter after the prefix, if it has one. */
function commonPrefix(key: string, prefix: string, delimiter: string): string | undefined {
  if (!key.startsWith(prefix)) return undefined;
  const at = key.indexOf(delimiter, prefix.length);
  return at === -1 ? undefined : key.slice(0, at + delimiter.length);
}

/** The first string after every string that starts with `value`, in byte order. */
function successor(value: string): string {
  const last = value.codePointAt(value.length - 1) ?? 0;
  const width = last > 0xffff ? 2 : 1;
  return value.slice(0, value.length - width) + String.fromCodePoint(last + 1);
}

/** V2's continuation token: the key it continues after, opaque (base64 of `l:<key>`). */
export function continuationToken(key: string): string {
  return Buffer.from(`l:${key}`).toString("base64");
}

export function fromContinuationToken(token: string): string {
  const decoded = Buffer.from(token, "base64").toString();
  if (!decoded.startsWith("l:")) throw ERRORS.invalidParameter("continuation token");
  return decoded.slice(2);
}

// listV2() (POST /object/list-v2/:bucket), as upstream's listObjectsV2 with the search functions of
// its tenant migrations (0050, search-v2-optimised), run as the caller so RLS decides what exists:
//   - without a delimiter, objects under the prefix, by name in byte order, or by created_at or
//     updated_at and then name; each object as its row (id, name, metadata, the three timestamps);
//   - with one ('/'), one level below the prefix: a folder (`<prefix><segment>/`, id null) stands
//     for every key under it. By name, folders and files in the byte order of their keys; by a
//     timestamp, a folder counts as the earliest created_at of its objects. Each entry also has
//     `key`, its segment at the prefix's level.
// At most 1000 a page (limit). When there is more, `nextCursor` is upstream's continuation token:
// base64 of `l:<last name>`, `o:<order>`, `c:<column>`, `a:<last timestamp>` lines, the sort
// travelling with it; a token that is not one is refused (InvalidParameter). A folder's name in
// the token has no trailing '/': the next page starts past everything under it.
import type { PGlite, Transaction } from "@electric-sql/pglite";
import { asCaller, type Caller } from "./caller.ts";
import { ERRORS } from "./errors.ts";
import { mustBeValidBucketName } from "./names.ts";
import type { ObjectMetadata } from "./objects.ts";

export interface ListV2Options {
  prefix?: string;
  withDelimiter?: boolean;
  limit?: number;
  cursor?: string;
  sortBy?: { column?: string; order?: string };
}

interface Entry {
  key?: string;
  name: string;
  id: string | null;
  updated_at: Date | null;
  created_at: Date | null;
  last_accessed_at: Date | null;
  metadata: ObjectMetadata | null;
}

/** The order asked for: descending or not, by a timestamp column (else by name), and the
 * cursor's `a:` timestamp. */
interface Sort {
  desc: boolean;
  timestamp?: string;
  after?: string;
}

interface Cursor {
  startAfter: string;
  sortOrder?: string;
  sortColumn?: string;
  sortColumnAfter?: string;
}

/** The token's lines, in the order upstream writes them. */
const CURSOR_PARTS = {
  l: "startAfter",
  o: "sortOrder",
  c: "sortColumn",
  a: "sortColumnAfter",
} as const satisfies Record<string, keyof Cursor>;

const TIMESTAMP_COLUMNS = new Set(["created_at", "updated_at"]);
const ENTRY_COLUMNS = "name, id, updated_at, created_at, last_accessed_at, metadata";

export async function listObjectsV2(
  db: PGlite,
  caller: Caller,
  bucketId: string,
  options: ListV2Options,
): Promise<Record<string, unknown>> {
  mustBeValidBucketName(bucketId);
  const limit = Math.min(options.limit || 1000, 1000);
  const prefix = options.prefix ?? "";
  const cursor = options.cursor ? decodeCursor(options.cursor) : undefined;
  const order = cursor?.sortOrder || options.sortBy?.order;
  const column = cursor?.sortColumn || options.sortBy?.column;
  const sort: Sort = {
    desc: order === "desc",
    // name is the default and the tie-breaker
    timestamp: column && TIMESTAMP_COLUMNS.has(column) ? column : undefined,
    after: cursor?.sortColumnAfter,
  };
  const startAfter = cursor?.startAfter ?? "";
  let entries = await asCaller(db, caller, (tx) =>
    options.withDelimiter
      ? sort.timestamp
        ? foldersByTimestamp(tx, bucketId, prefix, limit + 1, startAfter, sort)
        : foldersByName(tx, bucketId, prefix, limit + 1, startAfter, sort.desc)
      : objectsUnder(tx, bucketId, prefix, limit + 1, startAfter, sort),
  );
  if (options.withDelimiter) {
    const level = prefix ? prefix.split("/").length : 1;
    entries = entries.map((entry) => ({ key: entry.name.split("/")[level - 1] ?? "", ...entry }));
  }
  const more = entries.length > limit;
  if (more) entries = entries.slice(0, limit);
  const last = entries.at(-1);
  let next: Record<string, string> = {};
  if (more && last) {
    const lastAt = sort.timestamp ? last[sort.timestamp as "created_at"] : null;
    next = {
      nextCursor: encodeCursor({
        startAfter: last.name,
        sortOrder: order,
        sortColumn: column,
        sortColumnAfter: lastAt ? new Date(lastAt).toISOString() : undefined,
      }),
      nextCursorKey: last.name,
    };
  }
  return {
    hasNext: more,
    ...next,
    folders: entries
      .filter((e) => e.id === null)
      .map((e) => (e.name.endsWith("/") ? e : { ...e, name: `${e.name}/` })),
    objects: entries.filter((e) => e.id !== null),
  };
}

/** Without a delimiter: the objects under the prefix, in the sort's order, after the cursor. */
async function objectsUnder(
  tx: Transaction,
  bucketId: string,
  prefix: string,
  count: number,
  startAfter: string,
  sort: Sort,
): Promise<Entry[]> {
  const direction = sort.desc ? "desc" : "asc";
  const beyond = sort.desc ? "<" : ">";
  const params: unknown[] = [bucketId, prefix, count];
  let where = "bucket_id = $1 and left(name, length($2)) = $2";
  if (startAfter) {
    params.push(startAfter);
    if (sort.timestamp && sort.after) {
      params.push(timestampOf(sort.after));
      where += ` and (date_trunc('milliseconds', ${sort.timestamp}), name collate "C") ${beyond} ($5::timestamptz, $4::text collate "C")`;
    } else {
      where += ` and name collate "C" ${beyond} $4`;
    }
  }
  const orderBy = sort.timestamp
    ? `${sort.timestamp} ${direction}, name collate "C" ${direction}`
    : `name collate "C" ${direction}`;
  const { rows } = await tx.query<Entry>(
    `select id, name, metadata, updated_at, created_at, last_accessed_at from storage.objects
     where ${where} order by ${orderBy} limit $3`,
    params,
  );
  return rows;
}

/**
 * With the delimiter, by name: the keys under the prefix walked in byte order, each folder met
 * once (then skipped past), as upstream's list_objects_with_delimiter.
 */
async function foldersByName(
  tx: Transaction,
  bucketId: string,
  prefix: string,
  count: number,
  startAfter: string,
  desc: boolean,
): Promise<Entry[]> {
  // where the walk goes on from: keys `op` `from`
  let op = desc ? "<" : ">=";
  let from: string | null = desc ? null : prefix;
  if (startAfter) {
    const { rows } = await tx.query(
      "select 1 from storage.objects where bucket_id = $1 and left(name, length($2)) = $2 limit 1",
      [bucketId, `${startAfter}/`],
    );
    const folder = rows.length > 0;
    // past a folder: past every key under it ('0' follows '/')
    if (desc) [op, from] = ["<", folder ? `${startAfter}/` : startAfter];
    else [op, from] = folder ? [">=", `${startAfter}0`] : [">", startAfter];
  }
  const entries: Entry[] = [];
  const batch = Math.min(Math.max(count * 2, 100), 1000);
  for (;;) {
    const params: unknown[] = [bucketId, prefix, batch];
    let where = "bucket_id = $1 and left(name, length($2)) = $2";
    if (from !== null) {
      params.push(from);
      where += ` and name collate "C" ${op} $4`;
    }
    const { rows } = await tx.query<Entry>(
      `select ${ENTRY_COLUMNS} from storage.objects where ${where}
       order by name collate "C" ${desc ? "desc" : "asc"} limit $3`,
      params,
    );
    let skipped = false;
    for (const row of rows) {
      const slash = row.name.indexOf("/", prefix.length);
      if (slash >= 0) {
        const folder = row.name.slice(0, slash + 1);
        entries.push({
          name: folder.replace(/\/+$/, ""),
          id: null,
          updated_at: null,
          created_at: null,
          last_accessed_at: null,
          metadata: null,
        });
        [op, from] = desc ? ["<", folder] : [">=", `${folder.slice(0, -1)}0`];
        skipped = true;
      } else {
        entries.push(row);
        [op, from] = [desc ? "<" : ">", row.name];
      }
      if (entries.length >= count) return entries;
      if (skipped) break;
    }
    if (!skipped && rows.length < batch) return entries;
  }
}

/**
 * With the delimiter, by created_at or updated_at: folders and files one level down, a folder
 * dated by the earliest created_at under it (both columns), as upstream's search_by_timestamp.
 */
async function foldersByTimestamp(
  tx: Transaction,
  bucketId: string,
  prefix: string,
  count: number,
  startAfter: string,
  sort: Sort,
): Promise<Entry[]> {
  const column = sort.timestamp as string;
  const direction = sort.desc ? "desc" : "asc";
  const params: unknown[] = [bucketId, prefix, count];
  let filter = "";
  if (startAfter) {
    params.push(startAfter, sort.after ? timestampOf(sort.after) : null);
    filter = `where (date_trunc('milliseconds', ${column}), name collate "C") ${sort.desc ? "<" : ">"}
      (coalesce($5::timestamptz, 'epoch'::timestamptz), $4::text collate "C")`;
  }
  const { rows } = await tx.query<Entry>(
    `with under as (
       select o.*, case when strpos(substr(o.name, length($2) + 1), '/') > 0
         then left(o.name, length($2) + strpos(substr(o.name, length($2) + 1), '/')) end as folder
       from storage.objects o
       where o.bucket_id = $1 and left(o.name, length($2)) = $2
     ), entries as (
       select rtrim(folder, '/') as name, null::uuid as id, min(created_at) as updated_at,
              min(created_at) as created_at, null::timestamptz as last_accessed_at,
              null::jsonb as metadata
       from under where folder is not null group by folder
       union all
       select ${ENTRY_COLUMNS} from under where folder is null
     )
     select * from entries ${filter}
     order by coalesce(date_trunc('milliseconds', ${column}), 'epoch'::timestamptz) ${direction},
       name collate "C" ${direction}
     limit $3`,
    params,
  );
  return rows;
}

function decodeCursor(token: string): Cursor {
  const cursor: Cursor = { startAfter: "", sortOrder: "asc" };
  for (const part of Buffer.from(token, "base64").toString().split("\n")) {
    const match = /^(\S):(.*)/.exec(part);
    const field = match && CURSOR_PARTS[match[1] as keyof typeof CURSOR_PARTS];
    if (!match || !field) throw ERRORS.invalidParameter("continuation token");
    cursor[field] = match[2] as string;
  }
  return cursor;
}

function encodeCursor(cursor: Cursor): string {
  const lines = Object.entries(CURSOR_PARTS)
    .filter(([, field]) => cursor[field])
    .map(([part, field]) => `${part}:${cursor[field]}`);
  return Buffer.from(lines.join("\n")).toString("base64");
}

/** A token's `a:` timestamp, refused rather than handed to Postgres when it is not one. */
function timestampOf(value: string): string {
  if (Number.isNaN(Date.parse(value))) throw ERRORS.invalidParameter("continuation token");
  return value;
}

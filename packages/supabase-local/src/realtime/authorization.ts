// Private channels, authorized as upstream's Realtime.Tenants.Authorization does: by the project's
// RLS policies on realtime.messages, with realtime.topic() the channel's topic, per extension
// (broadcast, presence). In a transaction, rolled back: a row per extension is written as the
// database owner (`private` left to the column's default, as upstream's changeset leaves it), then,
// as the caller's role with request.jwt.claims and request.headers set, what the caller can select
// of them is what it may read. In another, rolled back too: what it may insert (a row per
// extension, each in a savepoint) is what it may write.
import type { PGlite, Transaction } from "@electric-sql/pglite";
import type { Claims } from "../http/jwt.ts";

export interface Policies {
  broadcast: { read: boolean; write: boolean };
  presence: { read: boolean; write: boolean };
}

const EXTENSIONS = ["broadcast", "presence"] as const;

class Rollback extends Error {}

/**
 * The request's headers as upstream's policies see them in request.headers: a socket's `x-`
 * headers at its upgrade (Phoenix's x_headers), an HTTP broadcast's request headers.
 */
export type RequestHeaders = Record<string, string>;

/** The headers upstream hands its policies: a socket's `x-` ones (`only`), or all of them. */
export function requestHeaders(headers: Headers, only?: "x-"): RequestHeaders {
  const result: RequestHeaders = {};
  // Headers iterates in name order, lower case, repeated ones joined: Jason's encoding of
  // Map.new(headers) for upstream's few headers (a small map keeps its keys in order)
  for (const [name, value] of headers) {
    if (!only || name.startsWith(only)) result[name] = value;
  }
  return result;
}

export async function authorize(
  db: PGlite,
  topic: string,
  claims: Claims,
  headers: RequestHeaders,
): Promise<Policies> {
  const policies: Policies = {
    broadcast: { read: false, write: false },
    presence: { read: false, write: false },
  };
  try {
    await db.transaction(async (tx) => {
      const { rows } = await tx.query<{ id: string; extension: string }>(
        `insert into realtime.messages (topic, extension)
         values ($1, 'broadcast'), ($1, 'presence') returning id, extension`,
        [topic],
      );
      await asCaller(tx, topic, claims, headers);
      const readable = await tx.query<{ extension: string }>(
        "select extension from realtime.messages where topic = $1 and id = any($2::uuid[])",
        [topic, rows.map((r) => r.id)],
      );
      for (const { extension } of readable.rows) {
        if (extension === "broadcast" || extension === "presence") policies[extension].read = true;
      }
      throw new Rollback();
    });
  } catch (error) {
    if (!(error instanceof Rollback)) return unauthorized();
  }
  try {
    await db.transaction(async (tx) => {
      await asCaller(tx, topic, claims, headers);
      for (const extension of EXTENSIONS) {
        await tx.exec("savepoint supabase_local_write");
        try {
          await tx.query("insert into realtime.messages (topic, extension) values ($1, $2)", [
            topic,
            extension,
          ]);
          policies[extension].write = true;
        } catch {
          // an RLS refusal (or any error): not allowed, as upstream's check counts it
        }
        await tx.exec("rollback to savepoint supabase_local_write");
      }
      throw new Rollback();
    });
  } catch (error) {
    if (!(error instanceof Rollback)) return unauthorized();
  }
  return policies;
}

/** A role that does not exist, a policy that fails: upstream's RlsPolicyError, unauthorized. */
function unauthorized(): Policies {
  return {
    broadcast: { read: false, write: false },
    presence: { read: false, write: false },
  };
}

/** The caller's role, claims and headers for the rest of the transaction, as upstream's set_conn_config. */
async function asCaller(
  tx: Transaction,
  topic: string,
  claims: Claims,
  headers: RequestHeaders,
): Promise<void> {
  await tx.query(
    `select set_config('request.jwt.claims', $1, true),
            set_config('request.jwt.claim.sub', $2, true),
            set_config('request.jwt.claim.role', $3, true),
            set_config('realtime.topic', $4, true),
            set_config('request.headers', $5, true),
            set_config('role', $3, true)`,
    [
      JSON.stringify(claims),
      typeof claims.sub === "string" ? claims.sub : "",
      String(claims.role),
      topic,
      JSON.stringify(headers),
    ],
  );
}

// Private channels, authorized as upstream's Realtime.Tenants.Authorization does: by the project's
// RLS policies on realtime.messages, with realtime.topic() the channel's topic, per extension
// (broadcast, presence). In one transaction, rolled back: a row per extension is written as the
// database owner, then, as the caller's role with request.jwt.claims set, what the caller can
// select of them is what it may read; and what it may insert (a row per extension, each in a
// savepoint) is what it may write.
import type { PGlite, Transaction } from "@electric-sql/pglite";
import type { Claims } from "../http/jwt.ts";

export interface Policies {
  broadcast: { read: boolean; write: boolean };
  presence: { read: boolean; write: boolean };
}

const EXTENSIONS = ["broadcast", "presence"] as const;

class Rollback extends Error {}

export async function authorize(db: PGlite, topic: string, claims: Claims): Promise<Policies> {
  const policies: Policies = {
    broadcast: { read: false, write: false },
    presence: { read: false, write: false },
  };
  try {
    await db.transaction(async (tx) => {
      const { rows } = await tx.query<{ id: string; extension: string }>(
        `insert into realtime.messages (topic, extension, private)
         values ($1, 'broadcast', true), ($1, 'presence', true) returning id, extension`,
        [topic],
      );
      await asCaller(tx, topic, claims);
      const readable = await tx.query<{ extension: string }>(
        "select extension from realtime.messages where id = any($1::uuid[])",
        [rows.map((r) => r.id)],
      );
      for (const { extension } of readable.rows) {
        if (extension === "broadcast" || extension === "presence") policies[extension].read = true;
      }
      for (const extension of EXTENSIONS) {
        await tx.exec("savepoint supabase_local_write");
        try {
          await tx.query(
            "insert into realtime.messages (topic, extension, private) values ($1, $2, true)",
            [topic, extension],
          );
          policies[extension].write = true;
        } catch {
          // an RLS refusal (or any error): not allowed, as upstream's check counts it
        }
        await tx.exec("rollback to savepoint supabase_local_write");
      }
      throw new Rollback();
    });
  } catch (error) {
    if (!(error instanceof Rollback)) {
      // a role that does not exist, a policy that fails: upstream's RlsPolicyError, unauthorized
      return {
        broadcast: { read: false, write: false },
        presence: { read: false, write: false },
      };
    }
  }
  return policies;
}

/** The caller's role and claims for the rest of the transaction, as PostgREST and Realtime set them. */
async function asCaller(tx: Transaction, topic: string, claims: Claims): Promise<void> {
  await tx.query(
    `select set_config('request.jwt.claims', $1, true),
            set_config('request.jwt.claim.sub', $2, true),
            set_config('request.jwt.claim.role', $3, true),
            set_config('realtime.topic', $4, true),
            set_config('role', $3, true)`,
    [
      JSON.stringify(claims),
      typeof claims.sub === "string" ? claims.sub : "",
      String(claims.role),
      topic,
    ],
  );
}

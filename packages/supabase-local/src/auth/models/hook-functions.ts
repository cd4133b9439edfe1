import type { Transaction } from "@electric-sql/pglite";
import type { Db } from "./db.ts";

/** How long a hook function may run (hookspgfunc's default timeout). */
const TIMEOUT_MS = 2000;

/**
 * A Postgres hook (`pg-functions://<database>/<schema>/<function>`), called as Auth calls it:
 * `select "<schema>"."<function>"($1)` with the event as JSON, under a 2 s statement timeout, as
 * Auth's own database user, supabase_auth_admin (not a superuser: the function needs
 * `grant execute … to supabase_auth_admin`, and what it reads a grant and, under RLS, a policy for
 * that role, as on a hosted project), with that user's search_path, `auth`. Inside the caller's
 * transaction when there is one, else in one of its own; the settings are put back after.
 */
export async function callHookFunction(db: Db, uri: string, event: object): Promise<unknown> {
  const [, schema = "", name = ""] = new URL(uri).pathname.split("/");
  const call = `select ${quote(schema)}.${quote(name)}($1) as output`;
  const run = async (tx: Db) => {
    const before = await tx.query<{ role: string; search_path: string; timeout: string }>(
      `select current_setting('role') as role, current_setting('search_path') as search_path,
         current_setting('statement_timeout') as timeout`,
    );
    const saved = before.rows[0] as (typeof before.rows)[number];
    await tx.query(
      `select set_config('statement_timeout', $1, true), set_config('search_path', 'auth', true),
         set_config('role', 'supabase_auth_admin', true)`,
      [String(TIMEOUT_MS)],
    );
    const result = await tx.query<{ output: unknown }>(call, [JSON.stringify(event)]);
    await tx.query(
      `select set_config('role', $1, true), set_config('search_path', $2, true),
         set_config('statement_timeout', $3, true)`,
      [saved.role, saved.search_path, saved.timeout],
    );
    return result.rows[0]?.output;
  };
  return isTransaction(db) ? run(db) : db.transaction(run);
}

function isTransaction(db: Db): db is Transaction {
  return !("transaction" in db);
}

/** An identifier quoted (the config allows only [A-Za-z_][A-Za-z0-9_]*, so nothing to escape). */
const quote = (identifier: string) => `"${identifier}"`;

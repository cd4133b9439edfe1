// The models' access to Postgres: every query of the Auth server goes through one of these, in a
// module of models/. Handlers (api/) never write SQL.
import type { PGlite, Transaction } from "@electric-sql/pglite";

/** Either the database or an open transaction. */
export type Db = PGlite | Transaction;

export async function one<T>(db: Db, sql: string, params: unknown[] = []): Promise<T | undefined> {
  return (await db.query<T>(sql, params)).rows[0];
}

export async function many<T>(db: Db, sql: string, params: unknown[] = []): Promise<T[]> {
  return (await db.query<T>(sql, params)).rows;
}

export async function run(db: Db, sql: string, params: unknown[] = []): Promise<number> {
  return (await db.query(sql, params)).affectedRows ?? 0;
}

/** A timestamp as the real service's JSON writes it (omitted when null). */
export const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : undefined);

// Opening a database and preparing it for Supabase's API: the roles and the `auth` schema.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { PGlite, Results } from "@electric-sql/pglite";
import { Database, type OpenOptions } from "./database.ts";

const here = new URL("./sql/", import.meta.url);

/**
 * Opens the embedded Postgres (PGlite): persisted in `dataDir`, or in a scratch directory removed
 * on close when it is undefined (see scratchDirectory), and brings the API roles and the `auth`
 * schema up to date (skipped when they already are, see prepareDatabase). Postgres runs in a
 * worker thread (see Database) so that statement_timeout is enforced. A `snapshot` (a data
 * directory made by snapshot.ts) is put into a fresh data directory first, instead of initdb: its
 * spare moved there, or a copy (see provideData).
 * With `postgres`, it also serves the wire protocol on that port (postgres-port.js), taking turns
 * with the API.
 */
export async function openDatabase(dataDir?: string, options: OpenOptions = {}): Promise<PGlite> {
  const db = await Database.open(dataDir, options);
  try {
    await prepareDatabase(db);
  } catch (error) {
    await db.close();
    throw error;
  }
  // Database offers what the backend and its tests use of PGlite (query, exec, transaction,
  // listen, unlisten, close); handing it on as PGlite keeps every module's types as they are.
  return db as unknown as PGlite;
}

/** The SQL that sets a database up for Supabase's API: sql/roles.sql, sql/auth.sql, then
 * sql/realtime.sql and sql/storage.sql. Read synchronously, as snapshot.ts reads a snapshot's inputs (snapshotKey says why). */
export async function setupSql(): Promise<{
  roles: string;
  auth: string;
  realtime: string;
  storage: string;
}> {
  return {
    roles: readFileSync(new URL("roles.sql", here), "utf8"),
    auth: readFileSync(new URL("auth.sql", here), "utf8"),
    realtime: readFileSync(new URL("realtime.sql", here), "utf8"),
    storage: readFileSync(new URL("storage.sql", here), "utf8"),
  };
}

/** Marks a database as set up by this version of roles.sql and auth.sql (a comment on `auth`). */
const SETUP_MARK = "supabase-local setup ";

/**
 * Brings a database up to what Supabase's API expects: the API roles (anon, authenticated,
 * service_role and their grants, sql/roles.sql) and the `auth` schema (sql/auth.sql). Both are
 * idempotent, but running them takes a few hundred milliseconds, so the hash of the two files is
 * kept as the `auth` schema's comment and a database that already carries it is left alone.
 * openDatabase does this; tests that open a PGlite of their own call it too.
 */
export async function prepareDatabase(db: {
  exec(sql: string): Promise<unknown>;
  query<T>(sql: string, params?: unknown[]): Promise<Results<T>>;
}): Promise<void> {
  const { roles, auth, realtime, storage } = await setupSql();
  const hash = createHash("sha256");
  for (const sql of [roles, auth, realtime]) hash.update(sql).update("\0");
  const mark = `${SETUP_MARK}${hash.update(storage).digest("hex")}`;
  // pg_description itself, not obj_description(): that SQL function is parsed and planned on its
  // first call, and this is one of the first queries a database answers (alone, 19-38 ms against
  // 49-78 ms; within a whole start, lost in the noise).
  const { rows } = await db.query<{ mark: string | null }>(
    `SELECT description AS mark FROM pg_description
     WHERE objoid = to_regnamespace('auth') AND classoid = 'pg_namespace'::regclass AND objsubid = 0`,
  );
  if (rows[0]?.mark === mark) return;
  await db.exec(roles);
  await db.exec(auth);
  await db.exec(realtime);
  await db.exec(storage);
  await db.exec(`COMMENT ON SCHEMA auth IS '${mark}'`);
}

import type { Extensions } from "@electric-sql/pglite";
import { pgcrypto } from "@electric-sql/pglite/contrib/pgcrypto";

/**
 * The Postgres extensions a Supabase project has that the backend's PGlite loads: pgcrypto (in
 * schema `extensions`, db/roles.sql), which seeds use to hash passwords as GoTrue stores them.
 * The database thread (database-worker.ts) passes them to PGlite, and their names are part of the
 * start snapshot's key (snapshot.ts): adding one here builds a new snapshot. A PGlite of one's own
 * that prepareDatabase() sets up needs them too: `new PGlite({ extensions: EXTENSIONS })`.
 */
export const EXTENSIONS: Extensions = { pgcrypto };

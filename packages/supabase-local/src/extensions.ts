// The Postgres extensions the local backend loads into PGlite (contrib modules ship with
// @electric-sql/pglite: `import { pgcrypto } from "@electric-sql/pglite/contrib/pgcrypto"`).
// The database thread (database-worker.ts) passes them to PGlite, and their names are part of the
// start snapshot's key (snapshot.ts): adding one here builds a new snapshot.
import type { Extensions } from "@electric-sql/pglite";

export const EXTENSIONS: Extensions = {};

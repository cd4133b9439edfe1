import { pgcrypto } from "@electric-sql/pglite/contrib/pgcrypto";

/**
 * The Postgres extensions a Supabase project has that the backend's PGlite loads: pgcrypto (in
 * schema `extensions`, db/roles.sql), which seeds use to hash passwords as GoTrue stores them.
 * A PGlite of one's own that prepareDatabase() sets up needs them too: `new PGlite({ extensions })`.
 */
export const extensions = { pgcrypto };

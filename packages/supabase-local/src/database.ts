import { readFile } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";

const here = new URL("./db/", import.meta.url);

/**
 * Opens the embedded Postgres (PGlite): persisted in `dataDir`, or in memory when it is undefined,
 * and brings the API roles and the `auth` schema up to date (idempotent, so restarts are cheap).
 */
export async function openDatabase(dataDir?: string): Promise<PGlite> {
  const db = new PGlite(dataDir);
  await db.waitReady;
  const [roles, auth] = await Promise.all([
    readFile(new URL("roles.sql", here), "utf8"),
    readFile(new URL("auth.sql", here), "utf8"),
  ]);
  await db.exec(roles);
  await db.exec(auth);
  return db;
}

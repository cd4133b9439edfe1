import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { projectPaths } from "./paths.ts";

export interface MigrationOptions {
  /** The project whose supabase/migrations to apply (default: the working directory). */
  projectDir?: string;
  /** Another migrations directory instead of the project's. */
  migrationsDir?: string;
  /** config.toml [db.migrations] enabled (default true); false: none is applied, as by the CLI. */
  migrationsEnabled?: boolean;
  /** Seed files (createLocalBackend: config.toml [db.seed], supabase/seed.sql), applied in order
   * once, on a fresh database; a missing file is skipped. */
  seedFiles?: string[];
  /** extra SQL files applied after migrations and seed on every start (tests only) */
  fixtures?: string[];
  /**
   * config.toml [api] auto_expose_new_tables (default true). False: on a fresh database, before
   * the first migration, the API roles lose their default privileges on schema public (the
   * Supabase CLI's revoke, below).
   */
  autoExposeNewTables?: boolean;
}

/** A SQL file that failed: which file, where, and what Postgres said. */
export class MigrationError extends Error {
  readonly file: string;
  readonly line: number | undefined;
  constructor(file: string, line: number | undefined, pgMessage: string) {
    super(`${file}${line ? `:${line}` : ""}: ${pgMessage}`);
    this.name = "MigrationError";
    this.file = file;
    this.line = line;
  }
}

// The table the Supabase CLI keeps (supabase/cli pkg/migration/history.go).
const HISTORY = `
CREATE SCHEMA IF NOT EXISTS supabase_migrations;
CREATE TABLE IF NOT EXISTS supabase_migrations.schema_migrations (
  version text NOT NULL PRIMARY KEY,
  statements text[],
  name text
);`;

/**
 * What the Supabase CLI (3.1.0) runs on a new database when config.toml has
 * `[api] auto_expose_new_tables = false`: what `postgres` creates in public from then on is not
 * reachable by the API roles without a GRANT of its own.
 */
const REVOKE_DEFAULT_API_PRIVILEGES = `
alter default privileges for role postgres in schema public
  revoke select, insert, update, delete on tables from anon, authenticated, service_role;
alter default privileges for role postgres in schema public
  revoke usage, select on sequences from anon, authenticated, service_role;
alter default privileges for role postgres in schema public
  revoke execute on functions from anon, authenticated, service_role;`;

/** <timestamp>_<name>.sql, as `supabase migration new` names them. */
const MIGRATION_FILE = /^(\d+)_(.*)\.sql$/;

/**
 * Applies supabase/migrations/*.sql in version order, each in its own transaction, recording it
 * in supabase_migrations.schema_migrations so a restart applies only new files; then the seed files
 * on a fresh database (no migration history before this call), then fixtures every time.
 */
export async function applyMigrations(db: PGlite, options: MigrationOptions = {}): Promise<void> {
  const migrationsDir = options.migrationsDir ?? projectPaths(options.projectDir).migrationsDir;
  // the directory is read while the database answers
  const listed = options.migrationsEnabled === false ? [] : migrationFiles(migrationsDir);
  // (a database with a history only reads it: every start of the backend comes through here)
  const fresh = !(await historyExists(db));
  if (fresh) await db.exec(HISTORY);
  if (fresh && options.autoExposeNewTables === false) await db.exec(REVOKE_DEFAULT_API_PRIVILEGES);
  const applied = new Set(
    fresh
      ? []
      : (
          await db.query<{ version: string }>(
            "SELECT version FROM supabase_migrations.schema_migrations",
          )
        ).rows.map((r) => r.version),
  );
  const files = await listed;
  let changed = fresh || (options.fixtures ?? []).length > 0;
  for (const { path, version, name } of files) {
    if (applied.has(version)) continue;
    changed = true;
    const sql = await readFile(path, "utf8");
    await db.transaction(async (tx) => {
      await run(tx, path, sql);
      await tx.query(
        "INSERT INTO supabase_migrations.schema_migrations (version, statements, name) VALUES ($1, $2, $3)",
        [version, [sql], name],
      );
    });
  }
  for (const seedFile of fresh ? (options.seedFiles ?? []) : []) {
    const sql = await readFile(seedFile, "utf8").catch(() => null);
    if (sql !== null) await db.transaction((tx) => run(tx, seedFile, sql));
  }
  for (const fixture of options.fixtures ?? []) {
    const sql = await readFile(fixture, "utf8");
    await db.transaction((tx) => run(tx, fixture, sql));
  }
  // tell the data API to reload its schema cache (another backend's on a shared database: this
  // one's loads after), when anything was applied
  if (changed) await db.exec("NOTIFY pgrst, 'reload schema'");
}

/** The migrations of a directory (`<timestamp>_<name>.sql`), in the order they apply. */
export async function migrationFiles(
  migrationsDir: string,
): Promise<{ file: string; path: string; version: string; name: string }[]> {
  return (
    (await listSql(migrationsDir))
      .flatMap((file) => {
        const match = MIGRATION_FILE.exec(file);
        if (!match) return [];
        const [, version = "", name = ""] = match;
        return [{ file, path: join(migrationsDir, file), version, name }];
      })
      // versions are digits: code-point order, as the CLI sorts them (localeCompare would first load
      // ICU's collation data, 30 ms of every start)
      .sort((a, b) => (a.version < b.version ? -1 : a.version > b.version ? 1 : 0))
  );
}

async function historyExists(db: PGlite): Promise<boolean> {
  const r = await db.query<{ ok: boolean }>(
    "SELECT to_regclass('supabase_migrations.schema_migrations') IS NOT NULL AS ok",
  );
  return r.rows[0]?.ok ?? false;
}

async function listSql(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((f) => f.endsWith(".sql"));
  } catch {
    return [];
  }
}

async function run(
  tx: { exec: (sql: string) => Promise<unknown> },
  path: string,
  sql: string,
): Promise<void> {
  try {
    await tx.exec(sql);
  } catch (error) {
    const e = error as { message?: string; position?: string | number };
    const position = Number(e.position);
    const line =
      Number.isFinite(position) && position > 0
        ? sql.slice(0, position - 1).split("\n").length
        : undefined;
    throw new MigrationError(
      relative(process.cwd(), path) || path,
      line,
      e.message ?? String(error),
    );
  }
}

import type { PGlite } from "@electric-sql/pglite";

export interface MigrationOptions {
  /** supabase/migrations */
  migrationsDir: string;
  /** supabase/seed.sql, applied once on a fresh database */
  seedFile?: string;
  /** extra SQL files applied after migrations and seed on every start (tests only) */
  fixtures?: string[];
}

/** Applies the app's migrations in order. Placeholder until it is built. */
export async function applyMigrations(_db: PGlite, _options: MigrationOptions): Promise<void> {}

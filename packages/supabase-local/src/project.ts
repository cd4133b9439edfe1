import { rm } from "node:fs/promises";
import { join, resolve } from "node:path";

/** Where the backend finds a project's files: the Supabase CLI's layout under the project dir. */
export interface ProjectPaths {
  /** The project: the directory holding supabase/ (absolute). */
  projectDir: string;
  /** supabase/config.toml */
  configFile: string;
  /** supabase/migrations (`<timestamp>_<name>.sql`) */
  migrationsDir: string;
  /** supabase/seed.sql, applied once to a fresh database */
  seedFile: string;
  /** .local-data: the persisted database and signing key of `supabase-local start` */
  dataDir: string;
}

/** The project's paths; `projectDir` defaults to the working directory, as for the Supabase CLI. */
export function projectPaths(projectDir: string = process.cwd()): ProjectPaths {
  const dir = resolve(projectDir);
  return {
    projectDir: dir,
    configFile: join(dir, "supabase", "config.toml"),
    migrationsDir: join(dir, "supabase", "migrations"),
    seedFile: join(dir, "supabase", "seed.sql"),
    dataDir: join(dir, ".local-data"),
  };
}

/**
 * Deletes a persisted backend's data (accounts, sessions, app data, signing key): `dataDir`, or
 * the project's .local-data. The next start begins with an empty database. Returns what it removed.
 */
export async function reset(
  options: { projectDir?: string; dataDir?: string } = {},
): Promise<string> {
  const dataDir = options.dataDir ?? projectPaths(options.projectDir).dataDir;
  await rm(dataDir, { recursive: true, force: true });
  return dataDir;
}

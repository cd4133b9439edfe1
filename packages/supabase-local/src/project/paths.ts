import { readdir, rm } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";

/** Where the backend finds a project's files: the Supabase CLI's layout under the project dir. */
export interface ProjectPaths {
  /** The project: the directory holding supabase/ (absolute). */
  projectDir: string;
  /** supabase/config.toml */
  configFile: string;
  /** supabase/migrations (`<timestamp>_<name>.sql`) */
  migrationsDir: string;
  /** supabase/ (where config.toml [db.seed] sql_paths start) */
  supabaseDir: string;
  /** supabase/seed.sql, the default seed (config.toml [db.seed] sql_paths) */
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
    supabaseDir: join(dir, "supabase"),
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

/**
 * The seed files config.toml [db.seed] sql_paths name, as the CLI resolves them: relative to
 * supabase/, in the order listed, a `*` or `?` in a file name matching within its directory
 * (matches sorted by name), each file once. A path that matches nothing is skipped.
 */
export async function seedFiles(supabaseDir: string, sqlPaths: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const sqlPath of sqlPaths) {
    const path = resolve(supabaseDir, sqlPath);
    const name = basename(path);
    if (!/[*?]/.test(name)) {
      found.push(path);
      continue;
    }
    const pattern = new RegExp(
      `^${name
        .replace(/[.+^${}()|[\]\\]/g, "\\$&")
        .replace(/\*/g, ".*")
        .replace(/\?/g, ".")}$`,
    );
    const names = await readdir(dirname(path)).catch(() => [] as string[]);
    found.push(
      ...names
        .filter((n) => pattern.test(n))
        .sort()
        .map((n) => join(dirname(path), n)),
    );
  }
  return [...new Set(found)];
}

// The project a backend serves, resolved once at start: where its files are, what its config
// says and, once known, its keys. createLocalBackend and the command line resolve it, and hand this value down.
import { type Config, type DeepPartial, loadConfig } from "./config.ts";
import type { Keys, SigningKeys } from "./keys.ts";
import { type ProjectPaths, projectPaths } from "./paths.ts";

export interface Project {
  readonly paths: ProjectPaths;
  /** supabase/config.toml and supabase/local-backend.toml, with the overrides merged in. */
  readonly config: Config;
}

/** The project with its keys, once they are known (they may be signed with the key file's key). */
export interface KeyedProject extends Project {
  readonly keys: Keys;
  readonly signingKeys: SigningKeys;
  /** The key Storage signs its URLs with (keys.ts loadStorageUrlKey): this install's own. */
  readonly storageUrlKey: Uint8Array;
}

export interface ProjectOptions {
  /** The project directory (default: the working directory, as for the Supabase CLI). */
  projectDir?: string;
  /** Another config file than the project's supabase/config.toml. */
  configPath?: string;
  /** Deep-merged over the config files. */
  config?: DeepPartial<Config>;
}

/** Resolves the project's paths once, and reads its config from them. */
export function resolveProject(options: ProjectOptions = {}): Project {
  const paths = projectPaths(options.projectDir);
  const config = loadConfig({
    configFile: options.configPath ?? paths.configFile,
    overrides: options.config,
  });
  return { paths, config };
}

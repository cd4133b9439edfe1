// @edge-notes/supabase-local: a local stand-in for a Supabase project (Auth at /auth/v1, a
// PostgREST-compatible data API at /rest/v1, a mail inbox) on embedded Postgres (PGlite). The
// public API; anything else under src/ is the package's own business.

export {
  type Config,
  ConfigError,
  type DeepPartial,
  type LoadConfigOptions,
  loadConfig,
} from "./config.ts";
export { DatabaseOpenError, openDatabase, prepareDatabase } from "./database.ts";
export { START_SETTINGS, WASM_TIERING_BUDGET } from "./database-settings.js";
export { EXTENSIONS } from "./extensions.ts";
export { KEYS, type Keys } from "./keys.ts";
export type { Message as InboxMessage } from "./mail/inbox.ts";
export { applyMigrations, MigrationError, type MigrationOptions } from "./migrations.ts";
export { type ProjectPaths, projectPaths, reset, seedFiles } from "./project.ts";
export { createLocalBackend, type LocalBackend, type LocalBackendOptions } from "./server.ts";
export { startRefusal } from "./start-errors.ts";

// @edge-notes/supabase-local: a local stand-in for a Supabase project (Auth at /auth/v1, a
// PostgREST-compatible data API at /rest/v1, a mail inbox) on embedded Postgres (PGlite). The
// public API; anything else under src/ is the package's own business.

export { createLocalBackend, type LocalBackend, type LocalBackendOptions } from "./backend.ts";
export { startRefusal } from "./cli/start-errors.ts";
export { DatabaseOpenError } from "./database/database.ts";
export { EXTENSIONS } from "./database/extensions.ts";
export { openDatabase, prepareDatabase } from "./database/open.ts";
export { START_SETTINGS, WASM_TIERING_BUDGET } from "./database/thread/settings.js";
export type { Message as InboxMessage } from "./mail/inbox.ts";
export {
  type Config,
  ConfigError,
  type DeepPartial,
  type LoadConfigOptions,
  loadConfig,
} from "./project/config.ts";
export { KEYS, type Keys } from "./project/keys.ts";
export { applyMigrations, MigrationError, type MigrationOptions } from "./project/migrations.ts";
export { type ProjectPaths, projectPaths, reset, seedFiles } from "./project/paths.ts";

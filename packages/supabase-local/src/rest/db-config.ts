/**
 * The data API's settings: config.toml's [api] section, overridden by the in-database
 * configuration PostgREST reads (db-config, on by default): `pgrst.*` settings of the
 * `authenticator` role, as a project sets them in a migration:
 *
 *   alter role authenticator set pgrst.db_aggregates_enabled = 'true';
 *   notify pgrst, 'reload config';
 *
 * A setting for the current database (`alter role … in database …`) wins over one for every
 * database; a setting on the database alone has no effect (PostgREST's queryDbSettings).
 */
import type { PGlite } from "@electric-sql/pglite";

export interface RestConfig {
  /** db-aggregates-enabled: count(), sum()… in select (default false) */
  aggregatesEnabled: boolean;
  /** db-max-rows (config.toml [api] max_rows): the most rows one read returns */
  maxRows?: number;
  /** db-pre-request: a function called before each request, in its transaction */
  preRequest?: string;
  /** db-extra-search-path: schemas after the request's own in search_path */
  extraSearchPath: readonly string[];
  /** db-plan-enabled: the execution plan via Accept: application/vnd.pgrst.plan (default false) */
  planEnabled: boolean;
  /**
   * db-tx-end: how a transaction ends (`commit` by default, as the Supabase CLI runs PostgREST:
   * it sets no PGRST_DB_TX_END) and whether `Prefer: tx=` may override it (`…-allow-override`).
   */
  txEnd: { rollback: boolean; allowOverride: boolean };
  /** The impersonated roles' own settings (`alter role anon set statement_timeout = '3s'`), by
   * role: applied to each request of the role, as read at the last load (see ROLE_SETTINGS). */
  roleSettings: ReadonlyMap<string, readonly RoleSetting[]>;
}

/** One `ALTER ROLE … SET name = value` of an impersonated role. */
export interface RoleSetting {
  name: string;
  value: string;
}

/** The settings PostgREST takes from the file (or environment) when the database has none. */
export interface FileConfig {
  maxRows?: number;
  extraSearchPath?: readonly string[];
}

const SETTINGS = `SELECT DISTINCT ON (key) replace(k, 'pgrst.', '') AS key, v AS value
  FROM (SELECT d.setdatabase AS database, substr(s, 1, strpos(s, '=') - 1) AS k,
               substr(s, strpos(s, '=') + 1) AS v
          FROM pg_catalog.pg_db_role_setting d, unnest(d.setconfig) s
         WHERE d.setrole = to_regrole('authenticator')
           AND d.setdatabase IN (0, (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_catalog))) kv
 WHERE k LIKE 'pgrst.%' AND v IS NOT NULL
 ORDER BY key, database DESC`;

/**
 * The settings of the roles the authenticator may switch to, read as PostgREST reads them with its
 * configuration (queryRoleSettings), so an `ALTER ROLE … SET` applies after NOTIFY pgrst,
 * 'reload config', as on a hosted project, not at once:
 * - the settings for every database (`pg_roles.rolconfig`), of the roles granted to `authenticator`;
 * - values lowercased;
 * - only settings the authenticator could set itself: a user setting, or one it was granted;
 * - not default_transaction_isolation, which PostgREST takes as the transaction's isolation level.
 */
const ROLE_SETTINGS = `WITH role_setting AS (
    SELECT r.rolname, unnest(r.rolconfig) AS setting
      FROM pg_catalog.pg_auth_members m JOIN pg_catalog.pg_roles r ON r.oid = m.roleid
     WHERE m.member = to_regrole('authenticator')),
  kv AS (
    SELECT rolname, substr(setting, 1, strpos(setting, '=') - 1) AS name,
           lower(substr(setting, strpos(setting, '=') + 1)) AS value
      FROM role_setting)
SELECT kv.rolname AS role, kv.name, kv.value
  FROM kv JOIN pg_catalog.pg_settings ps ON ps.name = kv.name
   AND (ps.context = 'user' OR has_parameter_privilege('authenticator', ps.name, 'SET'))
 WHERE kv.name <> 'default_transaction_isolation'
 ORDER BY kv.rolname, kv.name`;

/** PostgREST's reading of a boolean setting: true/false in any case, or a number (> 0). */
function bool(value: string | undefined, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  const word = value.replace(/[^A-Za-z]/g, "").toLowerCase();
  if (word === "true") return true;
  if (word === "false") return false;
  return /^-?\d+$/.test(value.trim()) ? Number(value) > 0 : fallback;
}

function int(value: string | undefined): number | undefined {
  if (value === undefined || !/^\s*-?\d+\s*$/.test(value)) return undefined;
  return Number(value);
}

/**
 * PostgREST's db-tx-end values; any other value is a configuration error for PostgREST (it keeps
 * its previous configuration), read here as the default.
 */
const TX_END: Record<string, RestConfig["txEnd"]> = {
  commit: { rollback: false, allowOverride: false },
  "commit-allow-override": { rollback: false, allowOverride: true },
  rollback: { rollback: true, allowOverride: false },
  "rollback-allow-override": { rollback: true, allowOverride: true },
};

/** A comma-separated list, PostgREST's splitOnCommas (blanks trimmed; empty means none). */
const list = (value: string) =>
  value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");

export async function loadRestConfig(db: PGlite, file: FileConfig): Promise<RestConfig> {
  const { rows } = await db.query<{ key: string; value: string }>(SETTINGS);
  const roleSettings = new Map<string, RoleSetting[]>();
  const roles = await db.query<RoleSetting & { role: string }>(ROLE_SETTINGS);
  for (const { role, name, value } of roles.rows) {
    const settings = roleSettings.get(role) ?? [];
    settings.push({ name, value });
    roleSettings.set(role, settings);
  }
  const get = (key: string) => rows.find((r) => r.key === key)?.value;
  const maxRows = int(get("db_max_rows")) ?? file.maxRows;
  const extra = get("db_extra_search_path");
  const preRequest = get("db_pre_request")?.trim();
  return {
    aggregatesEnabled: bool(get("db_aggregates_enabled"), false),
    maxRows,
    preRequest: preRequest ? preRequest : undefined,
    extraSearchPath: extra !== undefined ? list(extra) : (file.extraSearchPath ?? ["public"]),
    planEnabled: bool(get("db_plan_enabled"), false),
    txEnd: TX_END[get("db_tx_end") ?? "commit"] ?? (TX_END.commit as RestConfig["txEnd"]),
    roleSettings,
  };
}

// config.toml's [db.vault]: each `name = "value"` is a Vault secret, made or updated at every start,
// as `supabase start` does (its vault.create_secret / vault.update_secret by name). A value that is
// empty, or an `env(NAME)` whose variable is not set, is left out, as the CLI leaves it.
import type { PGlite } from "@electric-sql/pglite";

const UNRESOLVED_ENV = /^env\(.*\)$/;

/** The secrets of [db.vault] in the database's Vault: existing names updated, new ones made. */
export async function applyVaultSecrets(db: PGlite, secrets: Record<string, string>) {
  const resolved = Object.entries(secrets)
    .filter(([, value]) => value !== "" && !UNRESOLVED_ENV.test(value))
    .sort(([a], [b]) => a.localeCompare(b));
  if (resolved.length === 0) return;
  await db.transaction(async (tx) => {
    const { rows } = await tx.query<{ id: string; name: string }>(
      "select id, name from vault.secrets where name = any($1)",
      [resolved.map(([name]) => name)],
    );
    const ids = new Map(rows.map((row) => [row.name, row.id]));
    for (const [name, value] of resolved) {
      const id = ids.get(name);
      if (id) await tx.query("select vault.update_secret($1, $2)", [id, value]);
      else await tx.query("select vault.create_secret($1, $2)", [value, name]);
    }
  });
}

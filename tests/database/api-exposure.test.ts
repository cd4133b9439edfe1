// The project as a new hosted project has it: config.toml's [api] auto_expose_new_tables = false
// ("Default privileges for new entities" off), so what the migrations create in public reaches the
// API roles only through the migrations' own GRANTs, and every table the app reads still answers.
import { describe, expect, it } from "vitest";
import { workerDatabase } from "../support/memory-backend.ts";

describe("exposure of the public schema", () => {
  it("gives the API roles no default privileges on public to read, write or call", async () => {
    // What the CLI revokes (TRUNCATE, REFERENCES, TRIGGER and a sequence's UPDATE it leaves)
    const db = await workerDatabase();
    const { rows } = await db.query<{ grantee: string; privilege: string }>(
      `select g.rolname as grantee, a.privilege_type as privilege
         from pg_default_acl d, aclexplode(d.defaclacl) a join pg_roles g on g.oid = a.grantee
        where d.defaclnamespace = 'public'::regnamespace
          and g.rolname in ('anon', 'authenticated', 'service_role')
          and a.privilege_type in ('SELECT', 'INSERT', 'UPDATE', 'DELETE', 'USAGE', 'EXECUTE')
          and not (d.defaclobjtype = 'S' and a.privilege_type = 'UPDATE')`,
    );
    expect(rows).toEqual([]);
  });

  it("grants each table of public to authenticated and service_role in a migration", async () => {
    const db = await workerDatabase();
    const { rows } = await db.query<{ table: string; authenticated: boolean; service: boolean }>(
      `select c.relname as table,
              has_any_column_privilege('authenticated', c.oid, 'select') as authenticated,
              has_table_privilege('service_role', c.oid, 'select') as service
         from pg_class c
        where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'v', 'p')
        order by c.relname`,
    );
    expect(rows.map((row) => row.table)).toEqual([
      "attachments",
      "note_shares",
      "note_tags",
      "notes",
      "profiles",
      "security_events",
      "session_devices",
      "tags",
    ]);
    for (const row of rows)
      expect(row, row.table).toMatchObject({ authenticated: true, service: true });
  });
});

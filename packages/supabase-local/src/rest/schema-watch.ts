/**
 * Schema cache invalidation, as on Supabase: an event trigger sends NOTIFY pgrst, 'reload schema'
 * after DDL (the hosted platform installs extensions.pgrst_ddl_watch / pgrst_drop_watch), and
 * anyone can send NOTIFY pgrst themselves.
 */
import type { PGlite } from "@electric-sql/pglite";

const SETUP = `
CREATE SCHEMA IF NOT EXISTS extensions;
CREATE OR REPLACE FUNCTION extensions.pgrst_ddl_watch() RETURNS event_trigger LANGUAGE plpgsql AS $$
BEGIN
  NOTIFY pgrst, 'reload schema';
END $$;
CREATE OR REPLACE FUNCTION extensions.pgrst_drop_watch() RETURNS event_trigger LANGUAGE plpgsql AS $$
BEGIN
  NOTIFY pgrst, 'reload schema';
END $$;
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'pgrst_ddl_watch') THEN
    CREATE EVENT TRIGGER pgrst_ddl_watch ON ddl_command_end EXECUTE FUNCTION extensions.pgrst_ddl_watch();
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'pgrst_drop_watch') THEN
    CREATE EVENT TRIGGER pgrst_drop_watch ON sql_drop EXECUTE FUNCTION extensions.pgrst_drop_watch();
  END IF;
END $$;
`;

/** What a NOTIFY pgrst asks for: 'reload schema', 'reload config', or (any other payload) both. */
export type Reload = "schema" | "config" | "both";

export async function watchSchema(db: PGlite, onChange: (reload: Reload) => void): Promise<void> {
  try {
    await db.exec(SETUP);
  } catch {
    // without event triggers, NOTIFY pgrst still reloads
  }
  await db.listen("pgrst", (payload) =>
    onChange(
      payload === "reload schema" ? "schema" : payload === "reload config" ? "config" : "both",
    ),
  );
}

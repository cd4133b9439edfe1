-- The service role's privileges on public.session_devices, granted as every other table here
-- grants them, not left to the API roles' default privileges: config.toml has
-- [api] auto_expose_new_tables = false, as a new hosted project has "Default privileges for new
-- entities" off, and there nothing a migration creates is reachable without its own GRANT.
-- (Server-side tools and the tests read the table with the secret key; the app never does.)
grant all on public.session_devices to service_role;

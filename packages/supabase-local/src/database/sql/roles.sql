-- The API roles of a Supabase project and the default privileges it grants them on schema public.
do $$
begin
  if not exists (select from pg_roles where rolname = 'anon') then
    create role anon nologin noinherit;
  end if;
  if not exists (select from pg_roles where rolname = 'authenticated') then
    create role authenticated nologin noinherit;
  end if;
  if not exists (select from pg_roles where rolname = 'service_role') then
    create role service_role nologin noinherit bypassrls;
  end if;
  -- the role the data API logs in as (supabase/postgres roles.sql); it switches to the three above.
  -- Projects configure the data API on it: alter role authenticator set pgrst.db_max_rows = '100'.
  if not exists (select from pg_roles where rolname = 'authenticator') then
    create role authenticator login noinherit;
  end if;
  -- Auth's own database user (supabase/postgres), not a superuser: Auth hooks that are Postgres
  -- functions run as it, so a project's migrations grant it what they use, as on a hosted project
  -- (`grant execute on function … to supabase_auth_admin`, a policy `to supabase_auth_admin`).
  if not exists (select from pg_roles where rolname = 'supabase_auth_admin') then
    create role supabase_auth_admin noinherit createrole login noreplication;
  end if;
end
$$;

grant anon, authenticated, service_role to authenticator;

create schema if not exists extensions;
create schema if not exists graphql_public;
-- As on a new Supabase project: pgcrypto and uuid-ossp in schema extensions (seeds hash passwords
-- with crypt(…, gen_salt('bf'))). A PGlite of one's own loads them: see extensions.ts.
create extension if not exists pgcrypto with schema extensions;
create extension if not exists "uuid-ossp" with schema extensions;
-- and Vault in schema vault (the local build: extensions.ts, supabase_vault--0.3.1.sql)
create extension if not exists supabase_vault;
-- and postgres's search path, so that migrations and seeds (run as postgres) call them without a
-- schema. Set for this session too: a role's settings apply from its next session on. The API
-- roles get no search_path of their own (the data API adds [api] extra_search_path per request).
alter role postgres set search_path = "$user", public, extensions;
set search_path = "$user", public, extensions;

grant usage on schema public, extensions, graphql_public to anon, authenticated, service_role;
-- The default privileges of a new project, set once, on a database not set up before (this file
-- runs again on one whose setup is older): from then on they are the project's own, and
-- config.toml's [api] auto_expose_new_tables = false revokes them (project/migrations.ts). Nothing
-- is granted on what public already holds: a migration's REVOKE stays as it is.
do $$
begin
  if to_regnamespace('auth') is null then
    alter default privileges in schema public grant all on tables to anon, authenticated, service_role;
    alter default privileges in schema public grant all on sequences to anon, authenticated, service_role;
    alter default privileges in schema public grant all on routines to anon, authenticated, service_role;
  end if;
end
$$;

-- The hosted project's statement timeouts for the API roles (supabase/postgres sets them with
-- ALTER ROLE; the data API applies a role's settings to each request it runs as that role).
-- Only where the role has none yet, so a project's own ALTER ROLE (in a migration) is kept.
do $$
declare
  wanted constant text[][] := array[['anon', '3s'], ['authenticated', '8s']];
  pair text[];
begin
  foreach pair slice 1 in array wanted loop
    if not exists (
      select from pg_db_role_setting s, unnest(s.setconfig) c
      where s.setrole = to_regrole(pair[1]) and s.setdatabase = 0 and c like 'statement\_timeout=%'
    ) then
      execute format('alter role %I set statement_timeout = %L', pair[1], pair[2]);
    end if;
  end loop;
end
$$;

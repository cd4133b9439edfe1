-- Profiles: one row per user, created by a trigger when the user signs up.
--
-- `username` is chosen by the user on /account (null until then): 3–30 characters of a–z, 0–9 and
-- `_`, stored lower-case, so the unique constraint is case-insensitive. `display_name` is not
-- written here: it lives in the user's metadata (`updateUser({ data: { display_name } })`) and is
-- mirrored into this table by triggers on auth.users, so it can be joined and shown to people a
-- note is shared with. Internal functions live in the `private` schema, which the API does not
-- expose.

create schema if not exists private;
revoke all on schema private from public;

create table public.profiles (
  id uuid primary key references auth.users (id) on delete cascade,
  username text unique,
  display_name text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint profiles_username_format check (username ~ '^[a-z0-9_]{3,30}$'),
  constraint profiles_display_name_length check (char_length(display_name) between 1 and 100)
);

comment on table public.profiles is 'One per user; created on sign-up, display_name mirrored from user metadata.';

-- The display name a user's metadata carries: display_name (set by the app), else the name an
-- OAuth provider gave. Trimmed and cut to 100 characters: this runs inside Auth's own writes, so it
-- must never fail whatever the metadata holds.
create function private.display_name_from(meta jsonb)
returns text
language sql
immutable
set search_path = ''
as $$
  select nullif(
    left(btrim(coalesce(meta ->> 'display_name', meta ->> 'full_name', meta ->> 'name', '')), 100),
    ''
  )
$$;

create function private.handle_new_user()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  insert into public.profiles (id, display_name)
  values (new.id, private.display_name_from(new.raw_user_meta_data))
  on conflict (id) do nothing;
  return new;
end;
$$;

create function private.sync_display_name()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  insert into public.profiles (id, display_name)
  values (new.id, private.display_name_from(new.raw_user_meta_data))
  on conflict (id) do update set display_name = excluded.display_name;
  return new;
end;
$$;

create trigger on_auth_user_created
  after insert on auth.users
  for each row execute function private.handle_new_user();

create trigger on_auth_user_metadata_updated
  after update of raw_user_meta_data on auth.users
  for each row
  when (old.raw_user_meta_data is distinct from new.raw_user_meta_data)
  execute function private.sync_display_name();

create function private.touch_updated_at()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  new.updated_at := now();
  return new;
end;
$$;

create trigger profiles_touch_updated_at
  before update on public.profiles
  for each row execute function private.touch_updated_at();

-- Users who signed up before this migration get their profile too.
insert into public.profiles (id, display_name)
select u.id, private.display_name_from(u.raw_user_meta_data)
from auth.users u
on conflict (id) do nothing;

alter table public.profiles enable row level security;

create policy "profiles: owner reads" on public.profiles
  for select to authenticated
  using (id = (select auth.uid()));

create policy "profiles: owner updates" on public.profiles
  for update to authenticated
  using (id = (select auth.uid()))
  with check (id = (select auth.uid()));

-- Rows come only from the trigger and go with the user; the user may change the username only
-- (the display name is changed through Auth's user metadata).
revoke all on table public.profiles from anon, authenticated;
grant select on table public.profiles to authenticated;
grant update (username) on table public.profiles to authenticated;
grant all on table public.profiles to service_role;

-- Avatars: a picture per user, kept in the public Storage bucket `avatars`. Decision 036 has the
-- reasons.
--
-- 1. The bucket is made here, not in config.toml, for the reasons of the attachments bucket
--    (decision 033): `supabase db push` makes it on a hosted project, with the policies that name
--    it. Public: an avatar is shown to the people a note is shared with and beside presence, so it
--    is served by its public URL (cacheable, no signing). 2 MiB a file; PNG, JPEG and WebP only
--    (the types whose metadata the app strips: no GIF, AVIF or SVG).
-- 2. Objects are `<user id>/<version>.<webp|jpg|png>`: a new picture is a new name, so a change shows
--    at once through any cache, and the old one is removed through the Storage API by the app
--    (upstream forbids deleting objects in SQL).
-- 3. Which picture is current lives in the user's metadata (`avatar_path`, beside `display_name`,
--    so the access token carries it to the header with no round trip) and is mirrored into
--    `profiles.avatar_path` by the display name's trigger, for the people who see the user's
--    name. Metadata is the user's to write with any value: only a path under their own folder, in
--    the shape above, is mirrored; anything else mirrors as null.
-- 4. storage.objects policies for the bucket, one per operation: the owner inserts, updates,
--    deletes and selects (lists) in their own folder only; nobody else gets anything through the
--    API (the public URL serves the bytes without RLS, as a public bucket does, and nobody can
--    list who has a picture). Quota: at most 3 objects in a folder (the current picture, the one
--    replacing it, and one a failed removal left behind), so at most 6 MiB a user; the app keeps
--    one. The three restrictive rules of 20261128001000_attachments.sql (aal2
--    once a factor exists, no anonymous users, a live session) are on all of storage.objects
--    already and hold here too.

insert into storage.buckets (id, name, public, file_size_limit, allowed_mime_types)
values ('avatars', 'avatars', true, 2097152, array['image/png', 'image/jpeg', 'image/webp'])
on conflict (id) do update set
  public = excluded.public,
  file_size_limit = excluded.file_size_limit,
  allowed_mime_types = excluded.allowed_mime_types;

-- The current picture ---------------------------------------------------------------------------

-- A version's file name, as the app makes them: lower-case letters, digits and dashes.
create function private.avatar_name_ok(name text)
returns boolean
language sql
immutable
set search_path = ''
as $$
  select coalesce(name ~ '^[0-9a-z-]{1,64}\.(webp|jpg|png)$', false)
$$;

-- The path a user's metadata names, if it is one of theirs in the bucket's shape; else null. Runs
-- inside Auth's own writes: never fails, whatever the metadata holds.
create function private.avatar_path_from(user_id uuid, meta jsonb)
returns text
language sql
immutable
set search_path = ''
as $$
  select case
    when jsonb_typeof(meta -> 'avatar_path') = 'string'
      and split_part(meta ->> 'avatar_path', '/', 1) = user_id::text
      and array_length(string_to_array(meta ->> 'avatar_path', '/'), 1) = 2
      and private.avatar_name_ok(split_part(meta ->> 'avatar_path', '/', 2))
    then meta ->> 'avatar_path'
  end
$$;

alter table public.profiles
  add column avatar_path text,
  -- (inline, not through avatar_path_from(): a CHECK runs its functions with the writer's rights)
  add constraint profiles_avatar_path_own check (
    avatar_path ~ ('^' || id::text || '/[0-9a-z-]{1,64}\.(webp|jpg|png)$')
  );

comment on column public.profiles.avatar_path is
  'The current picture in the avatars bucket (<id>/<version>.<ext>), mirrored from user metadata.';

create or replace function private.handle_new_user()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  insert into public.profiles (id, display_name, avatar_path)
  values (
    new.id,
    private.display_name_from(new.raw_user_meta_data),
    private.avatar_path_from(new.id, new.raw_user_meta_data)
  )
  on conflict (id) do nothing;
  return new;
end;
$$;

create or replace function private.sync_display_name()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  insert into public.profiles (id, display_name, avatar_path)
  values (
    new.id,
    private.display_name_from(new.raw_user_meta_data),
    private.avatar_path_from(new.id, new.raw_user_meta_data)
  )
  on conflict (id) do update set
    display_name = excluded.display_name,
    avatar_path = excluded.avatar_path;
  return new;
end;
$$;

update public.profiles p
set avatar_path = private.avatar_path_from(u.id, u.raw_user_meta_data)
from auth.users u
where u.id = p.id and private.avatar_path_from(u.id, u.raw_user_meta_data) is not null;

-- The policies below run as the caller.
revoke all on function private.avatar_name_ok(text) from public, anon;
grant execute on function private.avatar_name_ok(text) to authenticated;
-- (avatar_path_from() runs only inside the security definer triggers)
revoke all on function private.avatar_path_from(uuid, jsonb) from public, anon, authenticated;

-- (profiles keeps its grants: select for authenticated, update of username only. The column is
-- written by the trigger alone.)

-- The bucket's objects ---------------------------------------------------------------------------

-- How many pictures a user holds: counted past RLS (a policy on storage.objects cannot query it
-- as the caller without recursing), for the caller's own folder only.
create function private.avatar_count()
returns bigint
language sql
stable
security definer
set search_path = ''
as $$
  select count(*) from storage.objects o
  where o.bucket_id = 'avatars'
    and split_part(o.name, '/', 1) = (select auth.uid())::text
$$;

revoke all on function private.avatar_count() from public, anon;
grant execute on function private.avatar_count() to authenticated;

create policy "avatars: the owner uploads into their own folder"
  on storage.objects for insert to authenticated
  with check (
    bucket_id = 'avatars'
    and (storage.foldername(objects.name))[1] = (select auth.uid())::text
    and array_length(storage.foldername(objects.name), 1) = 1
    and private.avatar_name_ok(storage.filename(objects.name))
    and (select private.avatar_count()) < 3
  );

create policy "avatars: the owner replaces their own pictures"
  on storage.objects for update to authenticated
  using (
    bucket_id = 'avatars'
    and (storage.foldername(objects.name))[1] = (select auth.uid())::text
  )
  with check (
    bucket_id = 'avatars'
    and (storage.foldername(objects.name))[1] = (select auth.uid())::text
    and array_length(storage.foldername(objects.name), 1) = 1
    and private.avatar_name_ok(storage.filename(objects.name))
  );

create policy "avatars: the owner lists their own folder"
  on storage.objects for select to authenticated
  using (
    bucket_id = 'avatars'
    and (storage.foldername(objects.name))[1] = (select auth.uid())::text
  );

create policy "avatars: the owner deletes in their own folder"
  on storage.objects for delete to authenticated
  using (
    bucket_id = 'avatars'
    and (storage.foldername(objects.name))[1] = (select auth.uid())::text
  );

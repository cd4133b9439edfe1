-- Live profile names and pictures. A note's page shares its reader's presence under the name and
-- picture their own browser announces ("Grace is also viewing", decision 028): what the page's
-- loader read. When either changes (the display name, the username it falls back to, or the
-- avatar), the person's other open pages learn of it on their own topic, `user:<id>` (event
-- `profile`, the user's id only: the new name is read through the data API, as everything else),
-- re-read, and announce it. Nobody else hears it: `user:<id>` is that user's alone
-- (20261128000100_live_notes.sql).
create function private.broadcast_profile_changes()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform realtime.send(jsonb_build_object('user_id', new.id), 'profile', 'user:' || new.id, true);
  return null;
end;
$$;

create trigger profiles_broadcast_name
  after update of display_name, username, avatar_path on public.profiles
  for each row
  when (
    old.display_name is distinct from new.display_name
    or old.username is distinct from new.username
    or old.avatar_path is distinct from new.avatar_path
  )
  execute function private.broadcast_profile_changes();

revoke all on function private.broadcast_profile_changes() from public, anon, authenticated;

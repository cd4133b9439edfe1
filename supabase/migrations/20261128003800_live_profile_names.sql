-- Live profile names. A note's page shares its reader's presence under the name their own browser
-- announces ("Grace is also viewing", decision 028): the name the page's loader read. When that
-- name changes (the display name, or the username it falls back to), the person's other open pages
-- learn of it on their own topic, `user:<id>` (event `profile`, the user's id only: the new name is
-- read through the data API, as everything else), re-read, and announce the new name. Nobody else
-- hears it: `user:<id>` is that user's alone (20261128000100_live_notes.sql).
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
  after update of display_name, username on public.profiles
  for each row
  when (
    old.display_name is distinct from new.display_name
    or old.username is distinct from new.username
  )
  execute function private.broadcast_profile_changes();

revoke all on function private.broadcast_profile_changes() from public, anon, authenticated;

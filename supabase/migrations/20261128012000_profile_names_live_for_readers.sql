-- A note shared with someone shows its owner's name and picture on the reader's list ("Shared by
-- …") and note page. When the owner changes either, the readers' open pages learn of it on their
-- own topics too, `user:<reader>`, with the owner's id only (the event and payload of
-- 20261128003800_live_profile_names.sql), once per reader however many notes they share. Readers
-- learn nothing they could not read already: they see the owner's profile through RLS. A
-- reader's own change stays theirs: the owners of the notes they read hear nothing of it.
create or replace function private.broadcast_profile_changes()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform realtime.send(jsonb_build_object('user_id', new.id), 'profile', 'user:' || new.id, true);
  perform realtime.send(jsonb_build_object('user_id', new.id), 'profile', 'user:' || readers.id, true)
  from (select distinct s.shared_with as id from public.note_shares s where s.owner_id = new.id) readers;
  return null;
end;
$$;

revoke all on function private.broadcast_profile_changes() from public, anon, authenticated;

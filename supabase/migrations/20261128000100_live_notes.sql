-- Live notes: the database says *that* something changed, on private Realtime topics, and RLS on
-- realtime.messages says who may hear it. Supabase recommends broadcast from the database over
-- postgres_changes (which sends every DELETE to every subscriber of a table), so:
--
-- 1. Triggers on notes, note_shares and note_tags call realtime.send() with ids only
--    ({"note_id": …}, plus the message id realtime.send adds), never a title or a body:
--      `user:<id>`  event `list`: a note in that user's lists changed (their own notes, and
--                   "Shared with me": a shared note edited, a share made or removed);
--      `note:<id>`  event `note`: the note itself changed (edited, pinned, archived, deleted, its
--                   shares changed), for the pages open on it.
--    The page re-reads through the data API, so RLS decides what it sees: a revoked reader who
--    still hears a message (channel rights are cached until the next token, as upstream) gets a
--    404 on the re-read, never the note.
--    Statement-level triggers with transition tables: set_note_tags() replacing five tags sends
--    one message per statement, not one per row. The functions are security definer (as the
--    database owner, who may insert into realtime.messages whatever its policies say), with an
--    empty search_path.
-- 2. Who may join which private topic (upstream's Authorization: select = read, insert = write,
--    per extension, with realtime.topic() the channel's topic):
--      `user:<id>`  broadcast read, for that user alone;
--      `note:<id>`  broadcast and presence read for the people who can read the note (owner and
--                   recipients: the notes table's own RLS decides), presence write for the same
--                   people ("Grace is also viewing"); broadcast write for no one: only the
--                   database broadcasts.
--    Any other topic, anon, and every other extension: nothing.
-- 3. The three restrictive rules every table carries (aal2 once a factor exists, no anonymous
--    users, a session that still exists) hold on realtime.messages too; the catalogue test
--    (tests/database/notes-rls-matrix.test.ts) checks it.

-- The note a `note:<uuid>` topic names; null for any other topic (never a cast error in a policy).
create function private.note_of_topic(topic text)
returns uuid
language sql
immutable
set search_path = ''
as $$
  select case
    when topic ~ '^note:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
      then substr(topic, 6)::uuid
  end
$$;

comment on function private.note_of_topic(text) is
  'For realtime.messages policies: the note id of a `note:<uuid>` topic (lower-case), else null.';

revoke all on function private.note_of_topic(text) from public, anon;
grant execute on function private.note_of_topic(text) to authenticated, service_role;

-- Who may hear what -------------------------------------------------------------------------------

create policy "Live topics: your own lists, and the notes you can read"
  on realtime.messages for select to authenticated
  using (
    (
      realtime.messages.extension = 'broadcast'
      and (select realtime.topic()) = 'user:' || (select auth.uid())::text
    )
    or (
      realtime.messages.extension in ('broadcast', 'presence')
      -- as the caller, so the notes policies decide: the owner and the people it is shared with
      and exists (
        select 1 from public.notes n
        where n.id = private.note_of_topic((select realtime.topic()))
      )
    )
  );

create policy "Live topics: readers of a note share their presence"
  on realtime.messages for insert to authenticated
  with check (
    realtime.messages.extension = 'presence'
    and exists (
      select 1 from public.notes n
      where n.id = private.note_of_topic((select realtime.topic()))
    )
  );

create policy "Accounts with a second factor need aal2"
  on realtime.messages as restrictive for all to authenticated
  using ((select private.aal_satisfied()))
  with check ((select private.aal_satisfied()));

create policy "Anonymous sessions reach no app data"
  on realtime.messages as restrictive for all to authenticated
  using ((select (auth.jwt() ->> 'is_anonymous')::boolean) is false)
  with check ((select (auth.jwt() ->> 'is_anonymous')::boolean) is false);

create policy "Ended sessions reach no app data"
  on realtime.messages as restrictive for all to authenticated
  using ((select private.session_is_alive()))
  with check ((select private.session_is_alive()));

-- What is said, and to whom -----------------------------------------------------------------------

-- notes: insert, update, delete (`changed`: the statement's new rows, or its old ones for a delete).
-- The owner's lists; the note's page; on an edit, the lists of the people it is shared with (a
-- deleted note's shares go by cascade, and their trigger tells those people).
create function private.broadcast_note_changes()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform realtime.send(jsonb_build_object('note_id', c.id), 'list', 'user:' || c.owner_id, true)
  from changed c;
  if tg_op <> 'INSERT' then
    perform realtime.send(jsonb_build_object('note_id', c.id), 'note', 'note:' || c.id, true)
    from changed c;
  end if;
  if tg_op = 'UPDATE' then
    perform realtime.send(
      jsonb_build_object('note_id', s.note_id), 'list', 'user:' || s.shared_with, true
    )
    from public.note_shares s
    join changed c on c.id = s.note_id;
  end if;
  return null;
end;
$$;

create trigger notes_broadcast_insert
  after insert on public.notes
  referencing new table as changed
  for each statement execute function private.broadcast_note_changes();

create trigger notes_broadcast_update
  after update on public.notes
  referencing new table as changed
  for each statement execute function private.broadcast_note_changes();

create trigger notes_broadcast_delete
  after delete on public.notes
  referencing old table as changed
  for each statement execute function private.broadcast_note_changes();

-- note_shares: shared or unshared (by the owner, by the recipient leaving, by a cascade). The
-- recipient's "Shared with me"; the note's page (the owner's list of shares, and the page an
-- ex-recipient has open: its re-read is refused).
create function private.broadcast_share_changes()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform realtime.send(
    jsonb_build_object('note_id', c.note_id), 'list', 'user:' || c.shared_with, true
  )
  from changed c;
  perform realtime.send(jsonb_build_object('note_id', n.note_id), 'note', 'note:' || n.note_id, true)
  from (select distinct note_id from changed) n;
  return null;
end;
$$;

create trigger note_shares_broadcast_insert
  after insert on public.note_shares
  referencing new table as changed
  for each statement execute function private.broadcast_share_changes();

create trigger note_shares_broadcast_delete
  after delete on public.note_shares
  referencing old table as changed
  for each statement execute function private.broadcast_share_changes();

-- note_tags: tags are the owner's own filing (recipients never see them), so only the owner's
-- lists hear of it; their open note page listens to their lists too. A note being deleted has no
-- row left to name its owner: the notes trigger has told them.
create function private.broadcast_tag_changes()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform realtime.send(jsonb_build_object('note_id', n.id), 'list', 'user:' || n.owner_id, true)
  from public.notes n
  where n.id in (select note_id from changed);
  return null;
end;
$$;

create trigger note_tags_broadcast_insert
  after insert on public.note_tags
  referencing new table as changed
  for each statement execute function private.broadcast_tag_changes();

create trigger note_tags_broadcast_delete
  after delete on public.note_tags
  referencing old table as changed
  for each statement execute function private.broadcast_tag_changes();

revoke all on function private.broadcast_note_changes(), private.broadcast_share_changes(),
  private.broadcast_tag_changes() from public, anon, authenticated;

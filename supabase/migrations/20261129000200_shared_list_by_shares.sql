-- "Shared with me" read every note in the database. list_notes() chose the shared notes with
-- `n.owner_id <> uid` and left the rest to RLS, so Postgres scanned the whole notes table and the
-- recipients' policy asked private.note_shared_with_me() about each note someone else owns: the
-- work grew with everyone's notes, not with the caller's shares.
--
-- private.notes_shared_with_me() answers the ids of the notes shared with the caller, from
-- note_shares' index on shared_with (security definer: the caller may not read that column). The
-- list is now two branches, one per view, each taking its notes through an index: the caller's own
-- by (owner_id, archived), the shared ones by their ids. RLS still decides every note, as before;
-- the search and tag filters, the page, the total and the JSON are unchanged
-- (20261128010000_list_notes_page_cap.sql). tests/database/notes-rls-matrix.test.ts counts the policy
-- helper's calls for the shared view.
create function private.notes_shared_with_me()
returns setof uuid
language sql
stable
security definer
set search_path = ''
rows 10
as $$
  select s.note_id from public.note_shares s where s.shared_with = (select auth.uid())
$$;

comment on function private.notes_shared_with_me() is
  'For list_notes(): the ids of the notes shared with the caller.';

revoke all on function private.notes_shared_with_me() from public, anon;
-- service_role may call list_notes() too (it is granted it), so it reaches the helper as well.
grant execute on function private.notes_shared_with_me() to authenticated, service_role;

create or replace function public.list_notes(
  shared_with_me boolean,
  archived_view boolean,
  search_words text,
  tag_name text,
  page_offset integer,
  page_size integer
)
returns jsonb
language plpgsql
stable
security invoker
set search_path = ''
as $$
declare
  uid uuid;
  result jsonb;
begin
  perform private.require_aal();
  uid := private.require_permanent_user();
  if list_notes.page_size is not null and list_notes.page_size not between 0 and 100 then
    raise exception using
      errcode = '22023',
      message = 'page_size must be between 0 and 100',
      hint = 'Ask for the list a page at a time (the app asks for 20).';
  end if;
  with listed as (
    -- the caller's own notes, archived or not, through the notes' owner index
    select n.id, n.title, n.excerpt, n.pinned, n.archived, n.updated_at, n.owner_id, n.search
    from public.notes n
    where not coalesce(list_notes.shared_with_me, false)
      and n.owner_id = uid
      and n.archived = coalesce(list_notes.archived_view, false)
    union all
    -- the notes shared with the caller, by their ids from the caller's shares (RLS still
    -- decides each note)
    select n.id, n.title, n.excerpt, n.pinned, n.archived, n.updated_at, n.owner_id, n.search
    from public.notes n
    where coalesce(list_notes.shared_with_me, false)
      and n.owner_id <> uid
      and n.id in (select private.notes_shared_with_me())
  ),
  matching as (
    select l.id, l.title, l.excerpt, l.pinned, l.archived, l.updated_at, l.owner_id
    from listed l
    where (
        coalesce(list_notes.search_words, '') = ''
        or l.search @@ websearch_to_tsquery('english'::regconfig, list_notes.search_words)
      )
      and (
        coalesce(list_notes.tag_name, '') = ''
        or exists (
          select 1
          from public.note_tags nt
          join public.tags t on t.id = nt.tag_id
          where nt.note_id = l.id and t.name = list_notes.tag_name
        )
      )
  ),
  page as (
    select m.*
    from matching m
    order by m.pinned desc, m.updated_at desc, m.id
    limit greatest(coalesce(list_notes.page_size, 0), 0)
    offset greatest(coalesce(list_notes.page_offset, 0), 0)
  )
  select jsonb_build_object(
    'total', (select count(*) from matching),
    'notes', coalesce((
      select jsonb_agg(
        jsonb_build_object(
          'id', p.id,
          'title', p.title,
          'excerpt', p.excerpt,
          'pinned', p.pinned,
          'archived', p.archived,
          'updated_at', p.updated_at,
          'owner_id', p.owner_id,
          'tags', coalesce((
            select jsonb_agg(jsonb_build_object('name', t.name) order by t.name)
            from public.note_tags nt
            join public.tags t on t.id = nt.tag_id
            where nt.note_id = p.id
          ), '[]'::jsonb),
          'owner', (
            select jsonb_build_object(
              'username', o.username,
              'display_name', o.display_name,
              'avatar_path', o.avatar_path
            )
            from public.profiles o
            where o.id = p.owner_id
          )
        )
        order by p.pinned desc, p.updated_at desc, p.id
      )
      from page p
    ), '[]'::jsonb),
    'tags', case
      when list_notes.shared_with_me then '[]'::jsonb
      else coalesce((
        select jsonb_agg(t.name order by t.name) from public.tags t where t.owner_id = uid
      ), '[]'::jsonb)
    end
  )
  into result;
  return result;
end;
$$;

-- The notes list in one call. /notes showed a page of notes and the user's tags (the filter) from
-- two data API requests side by side; each request costs the Worker a subrequest, JSON and a read
-- of the session cookie, about a tenth of the page's CPU (issue 42's budget on /notes). list_notes()
-- answers both, with the page's total, in one request:
--   {"total": n, "notes": [{id, title, excerpt, pinned, archived, updated_at, owner_id,
--     tags: [{name}], owner: {username, display_name, avatar_path} | null}, …], "tags": [name, …]}
-- the shape the list's PostgREST select had (app/routes/notes/parts/data.server.ts).
--
-- Security invoker: the caller's RLS decides every row, as it did for the two selects (their own
-- notes, or those shared with them; tags and a note's tags are the owner's own; a sharer's
-- profile for the notes they shared). The guards come first, as in every exposed function.
--
-- shared_with_me: the notes others shared with the caller (and no tags: tags are the owner's own
-- filing); otherwise the caller's own notes, archived or not (archived_view). search_words:
-- full-text search, websearch syntax, English (null or '' for none); tag_name: only notes with
-- that tag of the caller's (null or '' for all). Pinned first, then the most recently edited.
-- page_offset past the total is not an error here: the caller compares it with `total`.
create function public.list_notes(
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
  with matching as (
    select n.id, n.title, n.excerpt, n.pinned, n.archived, n.updated_at, n.owner_id
    from public.notes n
    where case
        when list_notes.shared_with_me then n.owner_id <> uid
        else n.owner_id = uid and n.archived = coalesce(list_notes.archived_view, false)
      end
      and (
        coalesce(list_notes.search_words, '') = ''
        or n.search @@ websearch_to_tsquery('english'::regconfig, list_notes.search_words)
      )
      and (
        coalesce(list_notes.tag_name, '') = ''
        or exists (
          select 1
          from public.note_tags nt
          join public.tags t on t.id = nt.tag_id
          where nt.note_id = n.id and t.name = list_notes.tag_name
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

comment on function public.list_notes(boolean, boolean, text, text, integer, integer) is
  'One page of the caller''s notes list (their own, archived or not, or those shared with them; searched and filtered by tag), its total and the caller''s tag names, as one JSON object. Security invoker (RLS decides); the aal and anonymous guards first (PT401/42501).';

revoke execute on function public.list_notes(boolean, boolean, text, text, integer, integer)
  from public, anon;
grant execute on function public.list_notes(boolean, boolean, text, text, integer, integer)
  to authenticated, service_role;

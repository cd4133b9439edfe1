-- list_notes() takes at most 100 notes a page. It returns one JSON value, so the data API's
-- max_rows (1000, config.toml [api]) never applied to it: any signed-in caller could ask for every
-- note they can read, with each note's tags and owner, in one response built in memory. A larger
-- page_size is refused with 22023 (invalid_parameter_value, HTTP 400 from the data API); the app
-- asks for 20 (app/routes/notes/parts/rules.ts). Otherwise the function is unchanged
-- (20261128004400_note_list_in_one_call.sql).
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

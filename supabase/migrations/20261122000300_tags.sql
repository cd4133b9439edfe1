-- Tags: each user's own labels, attached to their notes through note_tags. Tag names are stored
-- normalised (lower-case, 1–32 characters of a–z, 0–9, `-`, `_`, starting with a letter or digit),
-- unique per owner. Tags are the owner's own filing: they are not shown to people a note is
-- shared with. A tag left on no note is deleted.

create table public.tags (
  id uuid primary key default gen_random_uuid(),
  owner_id uuid not null default auth.uid() references public.profiles (id) on delete cascade,
  name text not null,
  created_at timestamptz not null default now(),
  constraint tags_name_format check (name ~ '^[a-z0-9][a-z0-9_-]{0,31}$'),
  constraint tags_owner_id_name_key unique (owner_id, name)
);

create table public.note_tags (
  note_id uuid not null references public.notes (id) on delete cascade,
  tag_id uuid not null references public.tags (id) on delete cascade,
  primary key (note_id, tag_id)
);

create index note_tags_tag_id_idx on public.note_tags (tag_id);

alter table public.tags enable row level security;
alter table public.note_tags enable row level security;

create policy "tags: owner reads" on public.tags
  for select to authenticated
  using (owner_id = (select auth.uid()));

create policy "tags: owner inserts" on public.tags
  for insert to authenticated
  with check (owner_id = (select auth.uid()));

create policy "tags: owner deletes" on public.tags
  for delete to authenticated
  using (owner_id = (select auth.uid()));

create policy "note_tags: owner reads" on public.note_tags
  for select to authenticated
  using (
    exists (
      select 1 from public.notes n
      where n.id = note_tags.note_id and n.owner_id = (select auth.uid())
    )
  );

create policy "note_tags: owner tags own notes" on public.note_tags
  for insert to authenticated
  with check (
    exists (
      select 1 from public.notes n
      where n.id = note_tags.note_id and n.owner_id = (select auth.uid())
    )
    and exists (
      select 1 from public.tags t
      where t.id = note_tags.tag_id and t.owner_id = (select auth.uid())
    )
  );

create policy "note_tags: owner untags" on public.note_tags
  for delete to authenticated
  using (
    exists (
      select 1 from public.notes n
      where n.id = note_tags.note_id and n.owner_id = (select auth.uid())
    )
  );

revoke all on table public.tags, public.note_tags from anon, authenticated;
grant select, delete on table public.tags to authenticated;
grant insert (name) on table public.tags to authenticated;
grant select, insert, delete on table public.note_tags to authenticated;
grant all on table public.tags, public.note_tags to service_role;

-- A tag on no note any more goes (after a note is untagged or deleted).
create function private.delete_orphan_tag()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  delete from public.tags t
  where t.id = old.tag_id
    and not exists (select 1 from public.note_tags nt where nt.tag_id = old.tag_id);
  return null;
end;
$$;

create trigger note_tags_delete_orphan_tag
  after delete on public.note_tags
  for each row execute function private.delete_orphan_tag();

-- Replaces a note's tags with `tag_names` in one transaction (creating the caller's missing tags)
-- and returns the note's tags. Runs as the caller, so RLS decides: someone else's note is
-- "not found" (404), exactly like a note that does not exist.
create function public.set_note_tags(note_id uuid, tag_names text[])
returns setof public.tags
language plpgsql
security invoker
set search_path = ''
as $$
declare
  uid uuid := auth.uid();
begin
  if not exists (
    select 1 from public.notes n where n.id = set_note_tags.note_id and n.owner_id = uid
  ) then
    raise exception 'Note not found' using errcode = 'PT404';
  end if;
  insert into public.tags (name)
  select distinct t.name from unnest(set_note_tags.tag_names) as t (name)
  on conflict (owner_id, name) do nothing;
  delete from public.note_tags nt
  where nt.note_id = set_note_tags.note_id
    and nt.tag_id not in (
      select t.id from public.tags t
      where t.owner_id = uid and t.name = any (set_note_tags.tag_names)
    );
  insert into public.note_tags (note_id, tag_id)
  select set_note_tags.note_id, t.id
  from public.tags t
  where t.owner_id = uid and t.name = any (set_note_tags.tag_names)
  on conflict do nothing;
  return query
    select t.*
    from public.tags t
    join public.note_tags nt on nt.tag_id = t.id
    where nt.note_id = set_note_tags.note_id
    order by t.name;
end;
$$;

revoke execute on function public.set_note_tags(uuid, text[]) from public, anon;
grant execute on function public.set_note_tags(uuid, text[]) to authenticated, service_role;

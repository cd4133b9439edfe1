-- Notes: private to their owner (sharing, read-only, comes in a later migration).
--
-- The owner defaults to the caller and can never be changed by a user: RLS checks it on insert
-- and update, and the column is not in the update grant at all. Lengths are CHECK constraints, so
-- every client gets the same rules. `updated_at` moves when the title or body changes (pinning and
-- archiving do not reorder the list). `search` is a generated tsvector over title (weight A) and
-- body (weight B) for full-text search (`websearch_to_tsquery`, `wfts` in the data API).

create table public.notes (
  id uuid primary key default gen_random_uuid(),
  owner_id uuid not null default auth.uid() references public.profiles (id) on delete cascade,
  title text not null,
  body text not null default '',
  pinned boolean not null default false,
  archived boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- the start of the body, for lists (so a page of notes does not carry whole bodies)
  excerpt text generated always as (left(body, 240)) stored,
  search tsvector generated always as (
    setweight(to_tsvector('english'::regconfig, title), 'A')
      || setweight(to_tsvector('english'::regconfig, body), 'B')
  ) stored,
  constraint notes_title_length check (char_length(btrim(title)) between 1 and 200),
  constraint notes_body_length check (char_length(body) <= 20000),
  -- the target of note_shares' (note_id, owner_id) foreign key
  constraint notes_id_owner_id_key unique (id, owner_id)
);

comment on table public.notes is 'A user''s notes; private by default, readable by users they are shared with.';

create index notes_owner_list_idx on public.notes (owner_id, archived, pinned desc, updated_at desc);
create index notes_search_idx on public.notes using gin (search);

create function private.notes_before_update()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  new.created_at := old.created_at;
  if new.title is distinct from old.title or new.body is distinct from old.body then
    new.updated_at := now();
  else
    new.updated_at := old.updated_at;
  end if;
  return new;
end;
$$;

create trigger notes_before_update
  before update on public.notes
  for each row execute function private.notes_before_update();

alter table public.notes enable row level security;

create policy "notes: owner reads" on public.notes
  for select to authenticated
  using (owner_id = (select auth.uid()));

create policy "notes: owner inserts" on public.notes
  for insert to authenticated
  with check (owner_id = (select auth.uid()));

create policy "notes: owner updates" on public.notes
  for update to authenticated
  using (owner_id = (select auth.uid()))
  with check (owner_id = (select auth.uid()));

create policy "notes: owner deletes" on public.notes
  for delete to authenticated
  using (owner_id = (select auth.uid()));

revoke all on table public.notes from anon, authenticated;
grant select, delete on table public.notes to authenticated;
grant insert (title, body, pinned, archived) on table public.notes to authenticated;
grant update (title, body, pinned, archived) on table public.notes to authenticated;
grant all on table public.notes to service_role;

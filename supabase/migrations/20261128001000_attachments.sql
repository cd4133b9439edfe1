-- Attachments: files on notes, kept in the private Storage bucket `attachments` and listed in the
-- table public.attachments. Decision 033 has the reasons.
--
-- 1. The bucket is made here, not in config.toml: `supabase db push` makes it on a hosted project
--    (the CLI seeds [storage.buckets] only into a local stack), and the policies below name it.
--    Private (every read goes through RLS and signed URLs), 10 MiB a file, and only the types the
--    note page can show or hand back safely: raster images, PDF and plain text. No SVG (a script
--    in an image served from the project's origin) and no HTML.
-- 2. A row of public.attachments per file: the note, its owner, the display name exactly as typed
--    (any characters: it is only ever shown as text or sent as a download name), the size and the
--    type. The object's key is `<owner id>/<note id>/<attachment id>`, the id generated here: a
--    user's file name never becomes a key (no traversal, no encoding surprises, nothing to guess).
-- 3. storage.objects policies for the bucket, one per operation:
--      insert  the owner, into their own folder, for an attachment row of theirs on that note
--              (so the row comes first: an upload always has a name, a note and a size);
--      update  the same (an upsert over their own file);
--      select  the owner (their whole folder: they list and sweep it) and anyone who can read the
--              note (the notes table's own RLS decides: owner and the people it is shared with);
--      delete  the owner, in their own folder (also after the note went, to sweep its files).
--    Anon and everyone else: nothing. A revoked reader's next read (list, download, signed URL)
--    is refused; a signed URL made before lives at most 5 minutes (the app's choice).
-- 4. The three restrictive rules every app table carries (aal2 once a factor exists, no anonymous
--    users, a session that still exists) hold on public.attachments and on storage.objects; the
--    catalogue test (tests/database/notes-rls-matrix.test.ts) checks both.
-- 5. Quota: at most 20 files a note and 200 a user (so at most 2 GiB each); more is refused with
--    a clear message.

insert into storage.buckets (id, name, public, file_size_limit, allowed_mime_types)
values (
  'attachments',
  'attachments',
  false,
  10485760,
  array[
    'image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif',
    'application/pdf', 'text/plain', 'text/markdown', 'text/csv'
  ]
)
on conflict (id) do update set
  public = excluded.public,
  file_size_limit = excluded.file_size_limit,
  allowed_mime_types = excluded.allowed_mime_types;

create table public.attachments (
  id uuid primary key default gen_random_uuid(),
  note_id uuid not null,
  owner_id uuid not null default auth.uid(),
  -- as typed: any characters, shown as text only
  name text not null check (char_length(name) between 1 and 255),
  size bigint not null check (size between 1 and 10485760),
  content_type text not null check (char_length(content_type) between 3 and 100),
  created_at timestamptz not null default now(),
  -- the attachment's owner is the note's owner; the row goes with the note (its file is removed
  -- through the Storage API by the app, which sweeps what a failure left: decision 033)
  constraint attachments_note_id_owner_id_fkey foreign key (note_id, owner_id)
    references public.notes (id, owner_id) on delete cascade
);

create index attachments_note_idx on public.attachments (note_id, created_at);
create index attachments_owner_idx on public.attachments (owner_id);

alter table public.attachments enable row level security;

create policy "attachments: owner and the note's readers read" on public.attachments
  for select to authenticated
  using (
    owner_id = (select auth.uid())
    or exists (select 1 from public.notes n where n.id = attachments.note_id)
  );

create policy "attachments: owner adds" on public.attachments
  for insert to authenticated
  with check (owner_id = (select auth.uid()));

create policy "attachments: owner removes" on public.attachments
  for delete to authenticated
  using (owner_id = (select auth.uid()));

create policy "Accounts with a second factor need aal2"
  on public.attachments as restrictive for all to authenticated
  using ((select private.aal_satisfied()))
  with check ((select private.aal_satisfied()));

create policy "Anonymous sessions reach no app data"
  on public.attachments as restrictive for all to authenticated
  using ((select (auth.jwt() ->> 'is_anonymous')::boolean) is false)
  with check ((select (auth.jwt() ->> 'is_anonymous')::boolean) is false);

create policy "Ended sessions reach no app data"
  on public.attachments as restrictive for all to authenticated
  using ((select private.session_is_alive()))
  with check ((select private.session_is_alive()));

-- The id and the owner are never the client's to choose; rows are never edited, only replaced.
revoke all on table public.attachments from anon, authenticated;
grant select, delete on table public.attachments to authenticated;
grant insert (note_id, name, size, content_type) on table public.attachments to authenticated;
grant all on table public.attachments to service_role;

-- Quota ------------------------------------------------------------------------------------------

create function private.attachments_within_quota()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if (select count(*) from public.attachments a where a.note_id = new.note_id) >= 20 then
    raise exception 'A note has at most 20 attachments'
      using errcode = '54000', hint = 'Delete an attachment of this note first.';
  end if;
  if (select count(*) from public.attachments a where a.owner_id = new.owner_id) >= 200 then
    raise exception 'An account has at most 200 attachments'
      using errcode = '54000', hint = 'Delete attachments you no longer need first.';
  end if;
  return new;
end;
$$;

revoke all on function private.attachments_within_quota() from public, anon, authenticated;

create trigger attachments_within_quota
  before insert on public.attachments
  for each row execute function private.attachments_within_quota();

-- The bucket's objects ---------------------------------------------------------------------------

-- Path segments as uuids: private.uuid_or_null() (20261127000600) gives null for anything else,
-- never a cast error inside a policy. The policies run as the caller.
grant execute on function private.uuid_or_null(text) to authenticated;

-- (Every column of storage.objects is qualified: inside the subqueries a bare `name` would be
-- public.attachments.name, the display name.)
create policy "attachments: the owner uploads for their own attachment rows"
  on storage.objects for insert to authenticated
  with check (
    bucket_id = 'attachments'
    and (storage.foldername(objects.name))[1] = (select auth.uid())::text
    and array_length(storage.foldername(objects.name), 1) = 2
    and exists (
      select 1 from public.attachments a
      where a.id = private.uuid_or_null(storage.filename(objects.name))
        and a.note_id = private.uuid_or_null((storage.foldername(objects.name))[2])
        and a.owner_id = (select auth.uid())
    )
  );

create policy "attachments: the owner replaces their own files"
  on storage.objects for update to authenticated
  using (
    bucket_id = 'attachments'
    and (storage.foldername(objects.name))[1] = (select auth.uid())::text
  )
  with check (
    bucket_id = 'attachments'
    and (storage.foldername(objects.name))[1] = (select auth.uid())::text
    and array_length(storage.foldername(objects.name), 1) = 2
    and exists (
      select 1 from public.attachments a
      where a.id = private.uuid_or_null(storage.filename(objects.name))
        and a.note_id = private.uuid_or_null((storage.foldername(objects.name))[2])
        and a.owner_id = (select auth.uid())
    )
  );

create policy "attachments: the owner and the note's readers read"
  on storage.objects for select to authenticated
  using (
    bucket_id = 'attachments'
    and (
      (storage.foldername(objects.name))[1] = (select auth.uid())::text
      -- as the caller: the notes policies say who reads the note (owner and recipients)
      or exists (
        select 1 from public.notes n
        where n.id = private.uuid_or_null((storage.foldername(objects.name))[2])
          and n.owner_id = private.uuid_or_null((storage.foldername(objects.name))[1])
      )
    )
  );

create policy "attachments: the owner deletes in their own folder"
  on storage.objects for delete to authenticated
  using (
    bucket_id = 'attachments'
    and (storage.foldername(objects.name))[1] = (select auth.uid())::text
  );

create policy "Accounts with a second factor need aal2"
  on storage.objects as restrictive for all to authenticated
  using ((select private.aal_satisfied()))
  with check ((select private.aal_satisfied()));

create policy "Anonymous sessions reach no app data"
  on storage.objects as restrictive for all to authenticated
  using ((select (auth.jwt() ->> 'is_anonymous')::boolean) is false)
  with check ((select (auth.jwt() ->> 'is_anonymous')::boolean) is false);

create policy "Ended sessions reach no app data"
  on storage.objects as restrictive for all to authenticated
  using ((select private.session_is_alive()))
  with check ((select private.session_is_alive()));

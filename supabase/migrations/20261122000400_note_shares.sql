-- Read-only sharing: an owner shares a note with another user by email; that user can read the
-- note (not edit, delete, pin or tag it) and sees it under "shared with me".
--
-- All of it is enforced here, in RLS: a share row grants SELECT on its note and on the two
-- people's profiles (so each sees the other's display name), nothing else. Rows are made only by
-- share_note(), a security definer function that resolves the email to a user id; revoking is a
-- plain DELETE the owner's RLS allows.
--
-- What share_note() reveals: it tells the owner of the note whether a confirmed account has the
-- email they typed (the feature needs that answer: "no account with that email"), but never the
-- user's id, and only when the caller owns the note. Failed lookups are limited to 20 an hour per
-- user, so the function is not a cheap way to test lists of addresses; a successful lookup makes a
-- share the other person can see.

create table public.note_shares (
  note_id uuid not null,
  owner_id uuid not null default auth.uid(),
  shared_with uuid not null references public.profiles (id) on delete cascade,
  -- the address the owner typed, to list the share by
  shared_with_email text not null,
  created_at timestamptz not null default now(),
  primary key (note_id, shared_with),
  -- the share's owner is the note's owner, enforced by the key itself
  constraint note_shares_note_id_owner_id_fkey foreign key (note_id, owner_id)
    references public.notes (id, owner_id) on delete cascade,
  constraint note_shares_not_with_owner check (shared_with <> owner_id)
);

create index note_shares_shared_with_idx on public.note_shares (shared_with);

alter table public.note_shares enable row level security;

create policy "note_shares: owner and recipient read" on public.note_shares
  for select to authenticated
  using (owner_id = (select auth.uid()) or shared_with = (select auth.uid()));

create policy "note_shares: owner revokes" on public.note_shares
  for delete to authenticated
  using (owner_id = (select auth.uid()));

revoke all on table public.note_shares from anon, authenticated;
grant select, delete on table public.note_shares to authenticated;
grant all on table public.note_shares to service_role;

-- The recipient reads the note (select only: the update/delete policies stay owner-only).
create policy "notes: recipient reads" on public.notes
  for select to authenticated
  using (
    exists (
      select 1 from public.note_shares s
      where s.note_id = notes.id and s.shared_with = (select auth.uid())
    )
  );

-- Owner and recipient see each other's profile (username, display name).
create policy "profiles: share partners read" on public.profiles
  for select to authenticated
  using (
    exists (
      select 1 from public.note_shares s
      where (s.owner_id = profiles.id and s.shared_with = (select auth.uid()))
         or (s.shared_with = profiles.id and s.owner_id = (select auth.uid()))
    )
  );

create type public.share_outcome as enum (
  'shared',
  'already_shared',
  'unknown_email',
  'own_email',
  'too_many_attempts'
);

create table private.share_lookup_misses (
  user_id uuid not null references auth.users (id) on delete cascade,
  at timestamptz not null default now()
);

create index share_lookup_misses_user_at_idx on private.share_lookup_misses (user_id, at);

-- Shares the caller's note with the confirmed user who has `email`. Someone else's or a missing
-- note: 404 "Note not found" (the same answer). Otherwise the outcome, for the page to explain.
create function public.share_note(note_id uuid, email text)
returns public.share_outcome
language plpgsql
security definer
set search_path = ''
as $$
declare
  uid uuid := auth.uid();
  wanted text := lower(btrim(coalesce(share_note.email, '')));
  target uuid;
begin
  if uid is null then
    raise exception 'Sign in to share notes' using errcode = '42501';
  end if;
  if not exists (
    select 1 from public.notes n where n.id = share_note.note_id and n.owner_id = uid
  ) then
    raise exception 'Note not found' using errcode = 'PT404';
  end if;
  if (
    select count(*) from private.share_lookup_misses m
    where m.user_id = uid and m.at > now() - interval '1 hour'
  ) >= 20 then
    return 'too_many_attempts';
  end if;
  select u.id into target
  from auth.users u
  where lower(u.email) = wanted
    and u.email_confirmed_at is not null
    and u.deleted_at is null
    and not u.is_anonymous
  limit 1;
  if target is null then
    insert into private.share_lookup_misses (user_id) values (uid);
    return 'unknown_email';
  end if;
  if target = uid then
    return 'own_email';
  end if;
  insert into public.note_shares (note_id, owner_id, shared_with, shared_with_email)
  values (share_note.note_id, uid, target, wanted)
  on conflict do nothing;
  if not found then
    return 'already_shared';
  end if;
  return 'shared';
end;
$$;

revoke execute on function public.share_note(uuid, text) from public, anon;
grant execute on function public.share_note(uuid, text) to authenticated, service_role;

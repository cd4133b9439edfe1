-- Closing what the restrictive policies of 20261122000500/0510 left open, and tightening sharing.
--
-- 1. Functions follow the aal rule too. Restrictive RLS policies do not apply inside a security
--    definer function (it runs as the table owner), so share_note() and record_security_event()
--    accepted aal1 calls from a user who has a verified second factor: a password alone was enough
--    to share a private note with oneself. Every function the data API exposes (schemas `public`
--    and `graphql_public`, executable by `anon` or `authenticated`) now starts with
--    `perform private.require_aal()`. tests/local/rest/exposed-functions.test.ts enumerates the
--    catalogue and calls each such function with an aal1 session, so a new function without the
--    guard fails the suite.
--
-- 2. Anonymous users reach none of the app's data. The app never signs anyone in anonymously
--    (config.toml now has `enable_anonymous_sign_ins = false`), but a hosted project may have it
--    on, and every anonymous sign-in was a fresh account: it could share notes, got a new budget of
--    20 failed email lookups each time, and could push notes into anyone's "Shared with me".
--    Every app table gets a restrictive policy refusing sessions whose signed `is_anonymous` claim
--    is not false (Supabase's documented pattern; a token without the claim is refused too), and
--    every exposed function calls `private.require_permanent_user()`.
--
-- 3. Sharing keeps the recipient's id from the sharer. 20261122000400 said "owner and recipient
--    see each other's profile" and let the owner select note_shares.shared_with: both are gone.
--    The owner lists a note's shares through list_note_shares() (the address they typed, the
--    person's display name and username, never their id) and revokes with a DELETE on
--    note_shares by note id and that address. The columns the API roles may select are note_id,
--    owner_id, shared_with_email and created_at; shared_with is readable only by the functions
--    and policies below. The recipient still reads the sharer's profile (to show who shared).
--
-- 4. The recipient can remove a share from their list ("note_shares: recipient removes"): the
--    note leaves their "Shared with me" and they can no longer read it. 20261122000400's
--    "revoking is a plain DELETE the owner's RLS allows" now holds for the recipient as well.
--
-- Error codes: both guards raise SQLSTATE 42501 (insufficient_privilege), which the data API
-- answers as 403 for a signed-in role (401 for `anon`), as PostgREST does; the message tells the
-- two refusals apart and the hint says what to do. Nothing else in the app raises 42501 from a
-- function, so a client can treat it as "this session may not do this" and never as bad input.

-- Guards ---------------------------------------------------------------------------------------

create function private.require_aal()
returns void
language plpgsql
stable
set search_path = ''
as $$
begin
  if not private.aal_satisfied() then
    raise exception 'This account has a second factor: an aal2 session is required'
      using errcode = '42501',
            hint = 'Verify the second factor (mfa.challengeAndVerify), then retry with the new session.';
  end if;
end;
$$;

comment on function private.require_aal() is
  'Raises 42501 unless the session satisfies the aal rule of the restrictive policies (private.aal_satisfied()). The first statement of every function the data API exposes.';

create function private.require_permanent_user()
returns uuid
language plpgsql
stable
set search_path = ''
as $$
declare
  uid uuid := auth.uid();
begin
  if uid is null then
    raise exception 'Sign in first' using errcode = '42501';
  end if;
  if (auth.jwt() ->> 'is_anonymous') is distinct from 'false' then
    raise exception 'Anonymous users cannot do this: sign up with an email address first'
      using errcode = '42501',
            hint = 'Link an email address to the anonymous account (updateUser({ email })) and sign in again.';
  end if;
  return uid;
end;
$$;

comment on function private.require_permanent_user() is
  'Returns auth.uid() for a signed-in, non-anonymous session (signed `is_anonymous` claim false); raises 42501 otherwise.';

revoke all on function private.require_aal(), private.require_permanent_user() from public, anon;
grant execute on function private.require_aal(), private.require_permanent_user()
  to authenticated, service_role;
-- service_role may call set_note_tags (security invoker): it needs to reach the guards too.
grant usage on schema private to service_role;
grant execute on function private.aal_satisfied() to service_role;

-- Anonymous sessions: no app data ---------------------------------------------------------------

create policy "Anonymous sessions reach no app data"
  on public.profiles as restrictive for all to authenticated
  using ((select (auth.jwt() ->> 'is_anonymous')::boolean) is false)
  with check ((select (auth.jwt() ->> 'is_anonymous')::boolean) is false);

create policy "Anonymous sessions reach no app data"
  on public.notes as restrictive for all to authenticated
  using ((select (auth.jwt() ->> 'is_anonymous')::boolean) is false)
  with check ((select (auth.jwt() ->> 'is_anonymous')::boolean) is false);

create policy "Anonymous sessions reach no app data"
  on public.tags as restrictive for all to authenticated
  using ((select (auth.jwt() ->> 'is_anonymous')::boolean) is false)
  with check ((select (auth.jwt() ->> 'is_anonymous')::boolean) is false);

create policy "Anonymous sessions reach no app data"
  on public.note_tags as restrictive for all to authenticated
  using ((select (auth.jwt() ->> 'is_anonymous')::boolean) is false)
  with check ((select (auth.jwt() ->> 'is_anonymous')::boolean) is false);

create policy "Anonymous sessions reach no app data"
  on public.note_shares as restrictive for all to authenticated
  using ((select (auth.jwt() ->> 'is_anonymous')::boolean) is false)
  with check ((select (auth.jwt() ->> 'is_anonymous')::boolean) is false);

create policy "Anonymous sessions reach no app data"
  on public.security_events as restrictive for all to authenticated
  using ((select (auth.jwt() ->> 'is_anonymous')::boolean) is false)
  with check ((select (auth.jwt() ->> 'is_anonymous')::boolean) is false);

-- Sharing: the recipient's id stays in the database ---------------------------------------------

-- Policies of other tables that looked into note_shares.shared_with ran with the caller's column
-- privileges; they now ask these helpers, which answer yes/no and reveal no id.
create function private.note_shared_with_me(note_id uuid)
returns boolean
language sql
stable
security definer
set search_path = ''
as $$
  select exists (
    select 1 from public.note_shares s
    where s.note_id = note_shared_with_me.note_id and s.shared_with = (select auth.uid())
  )
$$;

comment on function private.note_shared_with_me(uuid) is
  'For RLS: whether the note is shared with the caller.';

create function private.shares_a_note_with_me(owner_id uuid)
returns boolean
language sql
stable
security definer
set search_path = ''
as $$
  select exists (
    select 1 from public.note_shares s
    where s.owner_id = shares_a_note_with_me.owner_id and s.shared_with = (select auth.uid())
  )
$$;

comment on function private.shares_a_note_with_me(uuid) is
  'For RLS: whether this user shares at least one note with the caller.';

revoke all on function private.note_shared_with_me(uuid), private.shares_a_note_with_me(uuid)
  from public, anon;
grant execute on function private.note_shared_with_me(uuid), private.shares_a_note_with_me(uuid)
  to authenticated;

drop policy "notes: recipient reads" on public.notes;
create policy "notes: recipient reads" on public.notes
  for select to authenticated
  using (private.note_shared_with_me(id));

-- Was "profiles: share partners read" (both directions): the owner no longer reads the
-- recipient's profile row, whose primary key is the recipient's id.
drop policy "profiles: share partners read" on public.profiles;
create policy "profiles: recipients read the sharer's profile" on public.profiles
  for select to authenticated
  using (private.shares_a_note_with_me(id));

revoke select on table public.note_shares from authenticated;
grant select (note_id, owner_id, shared_with_email, created_at)
  on table public.note_shares to authenticated;

create policy "note_shares: recipient removes" on public.note_shares
  for delete to authenticated
  using (shared_with = (select auth.uid()));

comment on table public.note_shares is
  'Read-only shares, made by share_note(). Owners list them with list_note_shares() and delete them by (note_id, shared_with_email); recipients see and delete their own row. shared_with is not selectable by the API roles.';
comment on column public.note_shares.shared_with is
  'The recipient''s user id: never selectable through the API (column privileges).';

-- The owner's view of a note's shares, without the recipients' ids.
create function public.list_note_shares(note_id uuid)
returns table (email text, display_name text, username text, created_at timestamptz)
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  uid uuid;
begin
  perform private.require_aal();
  uid := private.require_permanent_user();
  if not exists (
    select 1 from public.notes n where n.id = list_note_shares.note_id and n.owner_id = uid
  ) then
    raise exception 'Note not found' using errcode = 'PT404';
  end if;
  return query
    select s.shared_with_email, p.display_name, p.username, s.created_at
    from public.note_shares s
    left join public.profiles p on p.id = s.shared_with
    where s.note_id = list_note_shares.note_id
    order by s.created_at, s.shared_with_email;
end;
$$;

comment on function public.list_note_shares(uuid) is
  'The shares of one of the caller''s notes: the address the owner typed, the person''s display name and username, when. Never their id. Someone else''s or a missing note: PT404.';

revoke all on function public.list_note_shares(uuid) from public, anon;
grant execute on function public.list_note_shares(uuid) to authenticated;

-- The existing functions, guarded -----------------------------------------------------------------
-- Bodies as before, after the two guards.

create or replace function public.share_note(note_id uuid, email text)
returns public.share_outcome
language plpgsql
security definer
set search_path = ''
as $$
declare
  uid uuid;
  wanted text := lower(btrim(coalesce(share_note.email, '')));
  target uuid;
begin
  perform private.require_aal();
  uid := private.require_permanent_user();
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

comment on function public.share_note(uuid, text) is
  'Shares one of the caller''s notes, read-only, with the confirmed, non-anonymous user who has `email`. Needs an aal2 session once the caller has a second factor, and a non-anonymous caller (42501). Someone else''s or a missing note: PT404. Reveals whether such an account exists (the outcome), never its id; 20 failed lookups an hour per user.';

create or replace function public.record_security_event(
  event_kind text,
  event_detail jsonb default '{}'::jsonb
) returns void
language plpgsql
security definer
set search_path = ''
as $$
declare
  uid uuid;
  claims jsonb := coalesce(auth.jwt(), '{}'::jsonb);
begin
  perform private.require_aal();
  uid := private.require_permanent_user();
  if event_kind is null or event_kind not in (
    'signed_in', 'mfa_verified', 'signed_out', 'signed_out_others', 'signed_out_everywhere',
    'password_changed', 'email_change_requested', 'email_changed',
    'mfa_factor_added', 'mfa_factor_removed', 'identity_linked', 'identity_unlinked'
  ) then
    raise exception 'Unknown security event kind: %', coalesce(event_kind, 'null')
      using errcode = '22023';
  end if;
  if event_detail is null or jsonb_typeof(event_detail) <> 'object'
     or octet_length(event_detail::text) > 2048 then
    raise exception 'Security event detail must be a JSON object under 2 KiB'
      using errcode = '22023';
  end if;
  insert into public.security_events (user_id, kind, detail, session_id, aal)
  values (
    uid,
    event_kind,
    event_detail,
    nullif(claims ->> 'session_id', '')::uuid,
    claims ->> 'aal'
  );
end;
$$;

comment on function public.record_security_event(text, jsonb) is
  'Writes a security event for the caller, stamped with the session id and aal of the verified JWT. Needs an aal2 session once the caller has a second factor, and a non-anonymous caller (42501).';

create or replace function public.set_note_tags(note_id uuid, tag_names text[])
returns setof public.tags
language plpgsql
security invoker
set search_path = ''
as $$
declare
  uid uuid;
begin
  perform private.require_aal();
  uid := private.require_permanent_user();
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

comment on function public.set_note_tags(uuid, text[]) is
  'Replaces the tags of one of the caller''s notes and returns them. Security invoker (RLS applies); the guards make the aal and anonymous refusals explicit (42501). Someone else''s or a missing note: PT404.';

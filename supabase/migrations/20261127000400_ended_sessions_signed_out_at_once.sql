-- Ending a session takes effect at once, in the database as at the auth server.
--
-- Every way a session ends deletes its auth.sessions row: signing out (scope local, others or
-- global), a password change (Auth ends every session but the one that made it), end_my_session()
-- (20261122000700), a second factor verified (Auth ends the user's aal1 sessions). From then on the
-- auth server refuses the session's access token (403 session_not_found), but the data API checks
-- only the token's signature and expiry: until it expired (jwt_expiry, an hour) the token of an
-- ended browser still read and wrote notes, and could even call end_my_session() to sign the
-- owner's other devices out.
--
-- 1. private.session_is_alive(): false for a token whose session_id claim names no session of its
--    user. A token without the claim (the publishable and secret keys, the legacy anon and
--    service_role JWTs, a token the project signs itself) has no session that could end: it is left
--    to the other rules, as Auth leaves it (Auth looks the session up only when the claim is there
--    and is not the nil UUID). Minting one takes the project's signing key, which can mint a
--    service_role token anyway.
-- 2. Every app table gets a restrictive policy with it, beside the aal2 and anonymous-user rules:
--    an ended session reads nothing and writes nothing. Policies hold for every client of the
--    database, Storage and Realtime included, not only for the data API.
-- 3. Every exposed function checks it first: private.require_aal(), the first statement of each
--    (20261122000600), now begins with private.require_live_session(), so a function written later
--    with the aal guard has this one too. tests/database/exposed-functions.test.ts proves it for
--    each function from the catalogue.
-- 4. The data API refuses the whole request before it runs, with PostgREST's pre-request function
--    (db_pre_request: an in-database setting of the authenticator role, which a hosted project sets
--    in a migration, as here). The policies alone would answer a read with `200 []`, which a client
--    cannot tell from an empty list; the pre-request raises one fixed error instead:
--
--      SQLSTATE PT401: PostgREST answers HTTP 401 (its PTxyz rule) with WWW-Authenticate: Bearer and
--      {"code":"PT401","message":"Session from session_id claim in JWT does not exist",
--       "details":null,"hint":"Sign in again: this session was signed out."}
--
--    The message is Auth's own for the same condition (session_not_found). The guard of point 3
--    raises the same error. The app's Worker recognises it, clears the auth cookies and sends the
--    visitor to sign in (app/lib/session-ended.server.ts).
--
-- Cost: a primary-key lookup in auth.sessions per request (the pre-request), and one per table a
-- statement reads (`(select …)` makes each policy's call an initplan: once per statement, not per
-- row). Decision 023 has the figures and the reasons.

create function private.session_is_alive()
returns boolean
language sql
stable
security definer
set search_path = ''
as $$
  select case
    when c.session_id is null then true
    when c.session_id !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then false
    else exists (
      select 1 from auth.sessions s
      where s.id = c.session_id::uuid and s.user_id::text = c.sub
    )
  end
  from (
    select nullif(nullif(auth.jwt() ->> 'session_id', ''), '00000000-0000-0000-0000-000000000000')
             as session_id,
           auth.jwt() ->> 'sub' as sub
  ) c
$$;

comment on function private.session_is_alive() is
  'For RLS: false when the JWT''s session_id claim names no auth.sessions row of its user (the session was signed out); true for a token without the claim. Call it as (select private.session_is_alive()).';

-- Only policies call it, as the signed-in role; anon reads no app table.
revoke all on function private.session_is_alive() from public, anon;
grant execute on function private.session_is_alive() to authenticated;

create function private.require_live_session()
returns void
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  if not private.session_is_alive() then
    raise sqlstate 'PT401'
      using message = 'Session from session_id claim in JWT does not exist',
            hint = 'Sign in again: this session was signed out.';
  end if;
end;
$$;

comment on function private.require_live_session() is
  'Raises PT401 (HTTP 401, "Session from session_id claim in JWT does not exist") when the JWT''s session has ended. The data API''s db_pre_request, and the first check of private.require_aal().';

-- The pre-request runs as the request's role, anon included: anon may reach this one function of
-- the schema (it is security definer, so session_is_alive() stays closed to anon).
revoke all on function private.require_live_session() from public;
grant usage on schema private to anon;
grant execute on function private.require_live_session() to anon, authenticated, service_role;

alter role authenticator set pgrst.db_pre_request = 'private.require_live_session';
notify pgrst, 'reload config';

-- The guard every exposed function starts with: the session first, then the aal rule (body as in
-- 20261122000600 after the first statement).
create or replace function private.require_aal()
returns void
language plpgsql
stable
set search_path = ''
as $$
begin
  perform private.require_live_session();
  if not private.aal_satisfied() then
    raise exception 'This account has a second factor: an aal2 session is required'
      using errcode = '42501',
            hint = 'Verify the second factor (mfa.challengeAndVerify), then retry with the new session.';
  end if;
end;
$$;

comment on function private.require_aal() is
  'The first statement of every function the data API exposes: raises PT401 when the session has ended (private.require_live_session()), then 42501 unless the session satisfies the aal rule of the restrictive policies (private.aal_satisfied()).';

-- Ended sessions: no app data ---------------------------------------------------------------------

create policy "Ended sessions reach no app data"
  on public.profiles as restrictive for all to authenticated
  using ((select private.session_is_alive()))
  with check ((select private.session_is_alive()));

create policy "Ended sessions reach no app data"
  on public.notes as restrictive for all to authenticated
  using ((select private.session_is_alive()))
  with check ((select private.session_is_alive()));

create policy "Ended sessions reach no app data"
  on public.tags as restrictive for all to authenticated
  using ((select private.session_is_alive()))
  with check ((select private.session_is_alive()));

create policy "Ended sessions reach no app data"
  on public.note_tags as restrictive for all to authenticated
  using ((select private.session_is_alive()))
  with check ((select private.session_is_alive()));

create policy "Ended sessions reach no app data"
  on public.note_shares as restrictive for all to authenticated
  using ((select private.session_is_alive()))
  with check ((select private.session_is_alive()));

create policy "Ended sessions reach no app data"
  on public.security_events as restrictive for all to authenticated
  using ((select private.session_is_alive()))
  with check ((select private.session_is_alive()));

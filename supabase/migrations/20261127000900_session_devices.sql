-- The device each session signed in from, as the session itself states it once.
--
-- /account/sessions names each session by its device ("Chrome on macOS"), which Auth records in
-- auth.sessions.user_agent from the User-Agent of the sign-in request, and again on each refresh.
-- The Worker's rate-limited Auth calls (sign-in, refresh, MFA) no longer carry the browser's
-- User-Agent: they carry the secret key and the visitor's address (Sb-Forwarded-For), and the
-- hosted gateway refuses a secret key with a browser's User-Agent (docs/decisions/022). So Auth's
-- column now names nothing; the app keeps the device here instead.
--
-- A row is written once, by the Worker, as the session itself (its own access token), on the
-- response that signed it in, or that completed its second factor (app/lib/session-devices.server.ts):
--   - only for the session of the calling token (session_id claim) and its user (auth.uid()): no
--     session, not even another of the same user's, can be labelled by someone else;
--   - insert only, first write wins: a token taken later cannot rename the device it came from;
--   - the rules of every app table: aal2 once the user has a verified factor (so a session that
--     still owes its second factor writes nothing; it labels itself once it has it), no anonymous
--     users, and a session that still exists.
-- The row goes with its session (on delete cascade) and with its user.

create table public.session_devices (
  session_id uuid primary key references auth.sessions (id) on delete cascade,
  user_id uuid not null default auth.uid() references auth.users (id) on delete cascade,
  user_agent text not null check (char_length(user_agent) between 1 and 512),
  created_at timestamptz not null default now()
);

comment on table public.session_devices is
  'The User-Agent each session signed in with, written once by the session itself (the Worker''s Auth calls no longer carry it to auth.sessions.user_agent). Read by /account/sessions.';

create index session_devices_user_id on public.session_devices (user_id);

alter table public.session_devices enable row level security;

revoke all on public.session_devices from anon, authenticated;
grant select on public.session_devices to authenticated;
-- user_id is always the caller's (its default); created_at is the server's.
grant insert (session_id, user_agent) on public.session_devices to authenticated;

create policy "Users see their own sessions' devices"
  on public.session_devices for select to authenticated
  using (user_id = (select auth.uid()));

create policy "A session states its own device"
  on public.session_devices for insert to authenticated
  with check (
    user_id = (select auth.uid())
    and session_id = (select nullif(auth.jwt() ->> 'session_id', '')::uuid)
  );

create policy "Accounts with a second factor need aal2"
  on public.session_devices as restrictive for all to authenticated
  using ((select private.aal_satisfied()))
  with check ((select private.aal_satisfied()));

create policy "Anonymous sessions reach no app data"
  on public.session_devices as restrictive for all to authenticated
  using ((select (auth.jwt() ->> 'is_anonymous')::boolean) is false)
  with check ((select (auth.jwt() ->> 'is_anonymous')::boolean) is false);

create policy "Ended sessions reach no app data"
  on public.session_devices as restrictive for all to authenticated
  using ((select private.session_is_alive()))
  with check ((select private.session_is_alive()));

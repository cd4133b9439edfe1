-- Every device's session: the user sees each of their sessions and can end any one of them.
--
-- Supabase Auth keeps sessions in auth.sessions (one row per signed-in device, refresh tokens in
-- auth.refresh_tokens by session_id) but offers no endpoint to list them or to end one other
-- than the caller's (`signOut` scopes are local, others, global). These two functions fill that
-- gap over the standard columns only (id, user_id, created_at, updated_at, refreshed_at,
-- user_agent, ip, aal, not_after; refresh_tokens.session_id), so they work on a hosted project
-- as on the local backend.
--
-- Both are security definer (the API roles cannot read the auth schema), start with the guards of
-- 20261122000600 (aal2 once the user has a verified second factor; no anonymous users), and only
-- ever touch rows whose user_id is auth.uid(). Someone else's session id is answered exactly as a
-- missing one (PT404, "Session not found"), so ids cannot be probed.
--
-- Ending a session deletes its refresh tokens and the session row: its next refresh is refused
-- (`refresh_token_not_found`), and the auth server's user endpoint refuses its access token at
-- once (`session_not_found`), which is what the app's account pages ask.
--
-- The activity log gains the kinds for ending one session, passkeys and recovery codes.

create function public.list_my_sessions()
returns table (
  id uuid,
  user_agent text,
  ip text,
  created_at timestamptz,
  last_active_at timestamptz,
  aal text,
  not_after timestamptz,
  is_current boolean
)
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  uid uuid;
  current_session uuid;
begin
  perform private.require_aal();
  uid := private.require_permanent_user();
  current_session := nullif(auth.jwt() ->> 'session_id', '')::uuid;
  return query
    select s.id,
           s.user_agent,
           host(s.ip),
           s.created_at,
           -- refreshed_at is a timestamp without time zone, written in UTC by the auth server.
           greatest(s.created_at, s.updated_at, s.refreshed_at at time zone 'UTC'),
           s.aal::text,
           s.not_after,
           s.id is not distinct from current_session
    from auth.sessions s
    where s.user_id = uid
      and (s.not_after is null or s.not_after > now())
    order by (s.id is not distinct from current_session) desc,
             greatest(s.created_at, s.updated_at, s.refreshed_at at time zone 'UTC') desc,
             s.id;
end;
$$;

comment on function public.list_my_sessions() is
  'The caller''s sessions (auth.sessions rows of auth.uid(), not past not_after): device (user agent), IP, signed in, last active, aal, and whether it is the session of the calling JWT. Needs an aal2 session once the caller has a second factor, and a non-anonymous caller (42501).';

create function public.end_my_session(session_id uuid)
returns text
language plpgsql
security definer
set search_path = ''
as $$
declare
  uid uuid;
  agent text;
begin
  perform private.require_aal();
  uid := private.require_permanent_user();
  select coalesce(s.user_agent, '') into agent
  from auth.sessions s
  where s.id = end_my_session.session_id and s.user_id = uid
  for update;
  if not found then
    raise exception 'Session not found' using errcode = 'PT404';
  end if;
  delete from auth.refresh_tokens t where t.session_id = end_my_session.session_id;
  delete from auth.sessions s where s.id = end_my_session.session_id and s.user_id = uid;
  return agent;
end;
$$;

comment on function public.end_my_session(uuid) is
  'Signs one of the caller''s sessions out: deletes its refresh tokens and the session, and returns its user agent (for the activity log). Someone else''s or a missing session: PT404, nothing changes. Needs an aal2 session once the caller has a second factor, and a non-anonymous caller (42501).';

revoke all on function public.list_my_sessions(), public.end_my_session(uuid) from public, anon;
grant execute on function public.list_my_sessions(), public.end_my_session(uuid) to authenticated;

-- Activity log: new kinds -------------------------------------------------------------------------

alter table public.security_events drop constraint security_events_kind_known;
alter table public.security_events add constraint security_events_kind_known check (kind in (
  'signed_in', 'mfa_verified', 'signed_out', 'signed_out_others', 'signed_out_everywhere',
  'password_changed', 'email_change_requested', 'email_changed',
  'mfa_factor_added', 'mfa_factor_removed', 'identity_linked', 'identity_unlinked',
  'session_ended', 'passkey_added', 'passkey_renamed', 'passkey_removed',
  'recovery_codes_generated', 'recovery_code_used'
));

-- Body as in 20261122000600, with the longer list of kinds.
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
    'mfa_factor_added', 'mfa_factor_removed', 'identity_linked', 'identity_unlinked',
    'session_ended', 'passkey_added', 'passkey_renamed', 'passkey_removed',
    'recovery_codes_generated', 'recovery_code_used'
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

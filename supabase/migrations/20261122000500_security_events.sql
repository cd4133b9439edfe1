-- Security activity: what happened to an account (sign-ins, sign-outs, password and email
-- changes, second factors, linked identities), as the app recorded it.
--
-- Rows are written only through public.record_security_event(), which stamps the caller's own
-- user id and session from the verified JWT and accepts only the known kinds, so nobody can
-- write an event for someone else or invent kinds. A user reads only their own rows; nobody
-- updates or deletes them (they go with the account: on delete cascade).

create table public.security_events (
  id bigint generated always as identity primary key,
  user_id uuid not null references auth.users (id) on delete cascade,
  kind text not null,
  detail jsonb not null default '{}'::jsonb,
  session_id uuid,
  aal text,
  created_at timestamptz not null default now(),
  constraint security_events_kind_known check (kind in (
    'signed_in', 'mfa_verified', 'signed_out', 'signed_out_others', 'signed_out_everywhere',
    'password_changed', 'email_change_requested', 'email_changed',
    'mfa_factor_added', 'mfa_factor_removed', 'identity_linked', 'identity_unlinked'
  )),
  constraint security_events_detail_object check (jsonb_typeof(detail) = 'object'),
  constraint security_events_detail_small check (octet_length(detail::text) <= 2048)
);

create index security_events_user_created_idx on public.security_events (user_id, created_at desc);

alter table public.security_events enable row level security;

-- Read-only for everyone through the API; inserts go through the function below.
revoke all on public.security_events from anon, authenticated, service_role;
grant select on public.security_events to authenticated, service_role;

create policy "Users read their own security events"
  on public.security_events for select to authenticated
  using ((select auth.uid()) = user_id);

create or replace function public.record_security_event(
  event_kind text,
  event_detail jsonb default '{}'::jsonb
) returns void
language plpgsql
security definer
set search_path = ''
as $$
declare
  uid uuid := auth.uid();
  claims jsonb := coalesce(auth.jwt(), '{}'::jsonb);
begin
  if uid is null then
    raise exception 'Sign in to record security events' using errcode = '42501';
  end if;
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

revoke all on function public.record_security_event(text, jsonb) from public, anon;
grant execute on function public.record_security_event(text, jsonb) to authenticated;

-- Multi-factor authentication: once a user has a verified second factor, their data is only
-- reachable with an aal2 session (Supabase's documented restrictive-policy pattern). The check
-- reads auth.mfa_factors through a security definer helper, because the API roles cannot select
-- from the auth schema's tables themselves. It lives in a schema the data API does not expose.
create schema if not exists private;
revoke all on schema private from public;
grant usage on schema private to authenticated;

create or replace function private.aal_satisfied() returns boolean
language sql
stable
security definer
set search_path = ''
as $$
  select coalesce(auth.jwt() ->> 'aal', 'aal1') = 'aal2'
    or not exists (
      select 1 from auth.mfa_factors f
      where f.user_id = (select auth.uid()) and f.status = 'verified'
    )
$$;

revoke all on function private.aal_satisfied() from public, anon;
grant execute on function private.aal_satisfied() to authenticated;

create policy "Accounts with a second factor need aal2"
  on public.security_events as restrictive for all to authenticated
  using ((select private.aal_satisfied()))
  with check ((select private.aal_satisfied()));

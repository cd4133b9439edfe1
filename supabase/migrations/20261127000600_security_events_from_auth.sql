-- The activity log is written by the database, from what Auth itself writes, never by a client.
--
-- Until now the app wrote public.security_events through public.record_security_event(), with
-- the browser's own session: so that session (or anyone holding its token) could write any entry
-- it liked through the data API, and a change made straight through the Auth API (a password
-- change, a factor enrolled or removed, a sign-out, all with supabase-js against /auth/v1) left
-- none. The function is gone; triggers on Auth's tables write the entries instead, in the same
-- transaction as the change they record (docs/decisions/025-activity-log-from-auth-triggers.md).
--
-- Hosted Supabase lets projects create triggers on auth.users, auth.identities, auth.sessions,
-- auth.refresh_tokens and auth.audit_log_entries only (the schema restrictions of April 2025), so:
--   auth.sessions        insert: signed_in (deferred to commit, when Auth has written the
--                        session's amr claim: the sign-in method); update to aal2: mfa_verified or
--                        recovery_code_used; delete: signed_out, signed_out_others,
--                        signed_out_everywhere, session_ended
--   auth.users           password_changed, email_change_requested, email_changed
--   auth.identities      identity_linked, identity_unlinked
--   auth.audit_log_entries  what has no table of its own here: mfa_factor_added,
--                        mfa_factor_removed, passkey_added, passkey_renamed, passkey_removed,
--                        recovery_codes_generated (auth.mfa_factors and auth.webauthn_credentials
--                        take no project triggers on hosted Supabase). These need Auth's audit log
--                        in the database, the default ("Disable writing auth audit logs to project
--                        database" off).
--
-- The functions are security definer (the API roles cannot read Auth's tables) in the schema
-- `private`, which the data API does not expose, with an empty search_path; nobody may execute
-- them (Postgres calls a trigger function only as a trigger). They never raise on what Auth
-- writes: values are checked before they are cast, and an entry of a user being deleted is
-- skipped rather than break the delete (security_events.user_id references auth.users).
--
-- What only the app knew is gone: the browser of a sign-in is now the session's user agent as
-- Auth recorded it, and the "via" of a password change (account page or reset link) is not kept.

drop function public.record_security_event(text, jsonb);

create schema if not exists private;
revoke all on schema private from public;

-- Writes one entry, unless the user is gone (a cascade from deleting the account).
create function private.write_security_event(
  user_id uuid,
  kind text,
  detail jsonb,
  session_id uuid default null,
  aal text default null
) returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  if user_id is null or not exists (select 1 from auth.users u where u.id = user_id) then
    return;
  end if;
  insert into public.security_events (user_id, kind, detail, session_id, aal)
  values (user_id, kind, jsonb_strip_nulls(coalesce(detail, '{}'::jsonb)), session_id, aal);
end;
$$;

-- A session's device and address as Auth recorded them, within the detail's size limit.
create function private.session_detail(user_agent text, ip inet) returns jsonb
language sql
immutable
set search_path = ''
as $$
  select jsonb_build_object('user_agent', nullif(left(user_agent, 300), ''), 'ip', host(ip))
$$;

-- A uuid from text Auth wrote, or null when it is not one (a cast error would fail Auth's write).
create function private.uuid_or_null(value text) returns uuid
language sql
immutable
set search_path = ''
as $$
  select case
    when value ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then value::uuid
  end
$$;

-- Sessions ------------------------------------------------------------------------------------

-- Signed in: at commit, so that the session's first amr claim (how it was authenticated) exists;
-- Auth writes it after the session, in the same transaction.
create function private.security_event_signed_in() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  method text;
begin
  select c.authentication_method into method
  from auth.mfa_amr_claims c
  where c.session_id = new.id
  order by c.created_at, c.authentication_method
  limit 1;
  perform private.write_security_event(
    new.user_id,
    'signed_in',
    private.session_detail(new.user_agent, new.ip) || jsonb_build_object('method', method),
    new.id,
    new.aal::text
  );
  return null;
end;
$$;

create constraint trigger security_events_signed_in
  after insert on auth.sessions
  deferrable initially deferred
  for each row execute function private.security_event_signed_in();

-- Raised to aal2 with a factor: the second step of a sign-in (or a recovery code). Enrolling a
-- factor raises the session too; that is logged once, as mfa_factor_added (below), which the
-- audit log entry of the same transaction wrote first.
create function private.security_event_aal_raised() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  factor record;
begin
  select f.factor_type::text as type, f.friendly_name as name into factor
  from auth.mfa_factors f
  where f.id = new.factor_id;
  -- now() is the transaction's start: an entry with it was written by this transaction.
  if exists (
    select 1 from public.security_events e
    where e.user_id = new.user_id and e.created_at = now() and e.kind = 'mfa_factor_added'
      and e.detail ->> 'factor_id' = new.factor_id::text
  ) then
    return null;
  end if;
  perform private.write_security_event(
    new.user_id,
    case when factor.type = 'recovery_code' then 'recovery_code_used' else 'mfa_verified' end,
    case when factor.type = 'recovery_code' then '{}'::jsonb
      else jsonb_build_object(
        'method', case factor.type when 'phone' then 'mfa/phone' else factor.type end,
        'name', nullif(left(factor.name, 200), ''))
    end,
    new.id,
    new.aal::text
  );
  return null;
end;
$$;

create trigger security_events_aal_raised
  after update of aal, factor_id on auth.sessions
  for each row
  when (new.aal = 'aal2' and new.factor_id is not null
        and (old.aal is distinct from new.aal or old.factor_id is distinct from new.factor_id))
  execute function private.security_event_aal_raised();

-- Ended sessions, per statement, so that signing out everywhere is one entry, not one per device:
-- - through the data API (end_my_session(), the JWT's claims are set): each ended session is
--   `session_ended`, or `signed_out` if it is the calling one;
-- - through Auth (logout with any scope, a password change or a second factor ending the other
--   sessions): one session is `signed_out` with its device; several are `signed_out_others` when
--   the user still has a session, else `signed_out_everywhere`.
-- Expired sessions that Auth cleans up are not logged, nor those of a user being deleted.
create function private.security_event_sessions_ended() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  claims jsonb := coalesce(auth.jwt(), '{}'::jsonb);
  caller uuid := private.uuid_or_null(claims ->> 'sub');
  current_session uuid := private.uuid_or_null(claims ->> 'session_id');
  ended_user record;
  one record;
begin
  for ended_user in
    select o.user_id, count(*) as n
    from ended o
    where o.not_after is null or o.not_after > now()
    group by o.user_id
  loop
    if current_session is not null and caller = ended_user.user_id then
      for one in
        select * from ended o
        where o.user_id = ended_user.user_id and (o.not_after is null or o.not_after > now())
      loop
        perform private.write_security_event(
          one.user_id,
          case when one.id = current_session then 'signed_out' else 'session_ended' end,
          private.session_detail(one.user_agent, one.ip),
          one.id,
          one.aal::text
        );
      end loop;
    elsif ended_user.n = 1 then
      select * into one from ended o
      where o.user_id = ended_user.user_id and (o.not_after is null or o.not_after > now());
      perform private.write_security_event(
        one.user_id, 'signed_out', private.session_detail(one.user_agent, one.ip), one.id,
        one.aal::text
      );
    else
      perform private.write_security_event(
        ended_user.user_id,
        case when exists (select 1 from auth.sessions s where s.user_id = ended_user.user_id)
          then 'signed_out_others' else 'signed_out_everywhere' end,
        jsonb_build_object('sessions', ended_user.n)
      );
    end if;
  end loop;
  return null;
end;
$$;

create trigger security_events_sessions_ended
  after delete on auth.sessions
  referencing old table as ended
  for each statement execute function private.security_event_sessions_ended();

-- Users: password and email --------------------------------------------------------------------

create function private.security_event_user_changed() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if new.encrypted_password is distinct from old.encrypted_password
     and coalesce(new.encrypted_password, '') <> '' then
    perform private.write_security_event(new.id, 'password_changed', '{}'::jsonb);
  end if;
  if coalesce(new.email_change, '') <> ''
     and new.email_change is distinct from old.email_change then
    perform private.write_security_event(
      new.id, 'email_change_requested', jsonb_build_object('new_email', new.email_change)
    );
  end if;
  if new.email is distinct from old.email and coalesce(new.email, '') <> '' then
    perform private.write_security_event(
      new.id, 'email_changed', jsonb_build_object('email', new.email)
    );
  end if;
  return null;
end;
$$;

create trigger security_events_user_changed
  after update of encrypted_password, email, email_change on auth.users
  for each row
  when (new.encrypted_password is distinct from old.encrypted_password
        or new.email is distinct from old.email
        or new.email_change is distinct from old.email_change)
  execute function private.security_event_user_changed();

-- Identities: linked (an identity added to a user who had one already: a sign-up's first
-- identity is not a link) and unlinked ---------------------------------------------------------

create function private.security_event_identity_changed() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    if exists (
      select 1 from auth.identities i where i.user_id = new.user_id and i.id <> new.id
    ) then
      perform private.write_security_event(
        new.user_id, 'identity_linked', jsonb_build_object('provider', new.provider)
      );
    end if;
  else
    perform private.write_security_event(
      old.user_id, 'identity_unlinked', jsonb_build_object('provider', old.provider)
    );
  end if;
  return null;
end;
$$;

create trigger security_events_identity_changed
  after insert or delete on auth.identities
  for each row execute function private.security_event_identity_changed();

-- Auth's audit log: second factors, passkeys, recovery codes -----------------------------------
-- Actions (payload.action) and traits as supabase/auth writes them; Auth writes the entry before
-- the change in the same transaction, so a factor still unverified here is being verified now.

create function private.security_event_audited() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  payload jsonb := new.payload::jsonb;
  traits jsonb := coalesce(payload -> 'traits', '{}'::jsonb);
  actor uuid := coalesce(
    private.uuid_or_null(payload ->> 'actor_id'), private.uuid_or_null(traits ->> 'user_id')
  );
  factor record;
  passkey_name text;
begin
  if actor is null then
    return null;
  end if;
  case payload ->> 'action'
    when 'verification_attempted', 'factor_unenrolled', 'factor_deleted' then
      select f.id, f.factor_type::text as type, f.status::text as status, f.friendly_name as name
      into factor
      from auth.mfa_factors f
      where f.id = private.uuid_or_null(traits ->> 'factor_id') and f.user_id = actor;
      if factor.id is null or factor.type = 'recovery_code' then
        return null;
      end if;
      if payload ->> 'action' = 'verification_attempted' and factor.status = 'unverified' then
        perform private.write_security_event(actor, 'mfa_factor_added', jsonb_build_object(
          'factor_id', factor.id, 'method', factor.type, 'name', nullif(left(factor.name, 200), '')
        ));
      elsif payload ->> 'action' <> 'verification_attempted' and factor.status = 'verified' then
        perform private.write_security_event(actor, 'mfa_factor_removed', jsonb_build_object(
          'factor_id', factor.id, 'method', factor.type, 'name', nullif(left(factor.name, 200), '')
        ));
      end if;
    when 'passkey_created', 'passkey_updated', 'passkey_deleted' then
      select c.friendly_name into passkey_name
      from auth.webauthn_credentials c
      where c.id = private.uuid_or_null(traits ->> 'passkey_id') and c.user_id = actor;
      perform private.write_security_event(
        actor,
        case payload ->> 'action'
          when 'passkey_created' then 'passkey_added'
          when 'passkey_updated' then 'passkey_renamed'
          else 'passkey_removed'
        end,
        jsonb_build_object('name', nullif(left(passkey_name, 200), ''))
      );
    when 'recovery_codes_generated', 'recovery_codes_regenerated' then
      perform private.write_security_event(actor, 'recovery_codes_generated', jsonb_build_object(
        'total', case when jsonb_typeof(traits -> 'count') = 'number' then traits -> 'count' end,
        'replaced', payload ->> 'action' = 'recovery_codes_regenerated'
      ));
    else
      null;
  end case;
  return null;
end;
$$;

create trigger security_events_audited
  after insert on auth.audit_log_entries
  for each row execute function private.security_event_audited();

revoke all on function
  private.write_security_event(uuid, text, jsonb, uuid, text),
  private.session_detail(text, inet),
  private.uuid_or_null(text),
  private.security_event_signed_in(),
  private.security_event_aal_raised(),
  private.security_event_sessions_ended(),
  private.security_event_user_changed(),
  private.security_event_identity_changed(),
  private.security_event_audited()
from public, anon, authenticated, service_role;

comment on table public.security_events is
  'What happened to an account, written only by triggers on Auth''s tables (20261127000600): users read their own rows; nobody writes, edits or deletes them through the API.';

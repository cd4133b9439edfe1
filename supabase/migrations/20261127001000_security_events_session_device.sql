-- The activity log names the device of a session signed in through the app again.
--
-- 20261127000600 takes an entry's device from auth.sessions.user_agent, as Auth recorded it. The
-- Worker's Auth calls no longer carry the browser's User-Agent (they carry the secret key), so
-- for a sign-in through the app that column is empty; the session states its device once, itself,
-- in public.session_devices (20261127000900). Here the log takes it from there:
--   - when a session states its device, the entries of that session that name none (its sign-in,
--     its second factor) get it;
--   - an entry for an ended session that Auth recorded no device for takes the one its sign-in
--     entry has (session_devices' row has gone with the session by then).
-- Only the label comes from the session; which entries exist, their kinds and times still come
-- from Auth's tables. A session can name only its own device, once (session_devices is insert
-- only, first write wins), as a User-Agent header sent to Auth would.

create function private.security_events_session_device() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  update public.security_events e
  set detail = e.detail || jsonb_build_object('user_agent', left(new.user_agent, 300))
  where e.session_id = new.session_id
    and e.user_id = new.user_id
    and not (e.detail ? 'user_agent');
  return null;
end;
$$;

create trigger security_events_session_device
  after insert on public.session_devices
  for each row execute function private.security_events_session_device();

-- The device of a session for an entry about it: Auth's record, else what its sign-in entry has.
create function private.session_detail(session_id uuid, user_agent text, ip inet) returns jsonb
language sql
stable
security definer
set search_path = ''
as $$
  select private.session_detail(
    coalesce(
      nullif(user_agent, ''),
      (select e.detail ->> 'user_agent' from public.security_events e
       where e.session_id = session_detail.session_id and e.kind = 'signed_in'
       order by e.id limit 1)
    ),
    ip
  )
$$;

-- As in 20261127000600, with the ended session's device from its sign-in entry when Auth has none.
create or replace function private.security_event_sessions_ended() returns trigger
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
          private.session_detail(one.id, one.user_agent, one.ip),
          one.id,
          one.aal::text
        );
      end loop;
    elsif ended_user.n = 1 then
      select * into one from ended o
      where o.user_id = ended_user.user_id and (o.not_after is null or o.not_after > now());
      perform private.write_security_event(
        one.user_id, 'signed_out', private.session_detail(one.id, one.user_agent, one.ip), one.id,
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

revoke all on function
  private.security_events_session_device(),
  private.session_detail(uuid, text, inet)
from public, anon, authenticated, service_role;

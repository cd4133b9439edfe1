-- The `realtime` schema as the Supabase CLI's database has it before a project's migrations run
-- (Realtime's own migrations, v2.102.1): realtime.messages with RLS (its policies authorize private
-- channels), realtime.topic(), realtime.send(), realtime.broadcast_changes(), and the (empty)
-- supabase_realtime publication. So a project's migrations can write policies on it and triggers
-- that broadcast.
--
-- Not like upstream: realtime.messages is one table, not partitioned by day (upstream makes each
-- day's partition ahead of time, and a partition missing makes an insert fail), and a row inserted
-- is announced to the backend with NOTIFY (the trigger below), delivered at commit, none after a
-- rollback: upstream reads the table's replication stream instead, which PGlite has none of.
create schema if not exists realtime;
grant usage on schema realtime to postgres, anon, authenticated, service_role;

create table if not exists realtime.messages (
  topic text not null,
  extension text not null,
  payload jsonb,
  event text,
  private boolean default false,
  updated_at timestamp without time zone not null default now(),
  inserted_at timestamp without time zone not null default now(),
  id uuid not null default gen_random_uuid(),
  primary key (id, inserted_at)
);
create index if not exists messages_inserted_at_topic_index
  on realtime.messages (inserted_at desc, topic)
  where extension = 'broadcast' and private is true;
alter table realtime.messages enable row level security;
grant select, insert, update on realtime.messages to anon, authenticated;
grant all on realtime.messages to service_role, postgres;

-- The topic the channel being authorized asks for (Realtime sets realtime.topic per check).
create or replace function realtime.topic() returns text
language sql stable
as $$
  select nullif(current_setting('realtime.topic', true), '')::text;
$$;

create or replace function realtime.send(
  payload jsonb, event text, topic text, private boolean default true
) returns void
language plpgsql
as $$
declare
  generated_id uuid;
  final_payload jsonb;
begin
  begin
    generated_id := gen_random_uuid();
    -- the message's id travels in its payload, unless the payload has one
    if payload ? 'id' then
      final_payload := payload;
    else
      final_payload := jsonb_set(payload, '{id}', to_jsonb(generated_id));
    end if;
    execute format('set local realtime.topic to %L', topic);
    insert into realtime.messages (id, payload, event, topic, private, extension)
    values (generated_id, final_payload, event, topic, private, 'broadcast');
  exception
    when others then
      raise warning 'ErrorSendingBroadcastMessage: %', sqlerrm;
  end;
end;
$$;

create or replace function realtime.broadcast_changes(
  topic_name text, event_name text, operation text, table_name text, table_schema text,
  new record, old record, level text default 'ROW'
) returns void
language plpgsql
as $$
declare
  row_data jsonb := '{}'::jsonb;
begin
  if level = 'STATEMENT' then
    raise exception 'function can only be triggered for each row, not for each statement';
  end if;
  if operation = 'INSERT' or operation = 'UPDATE' or operation = 'DELETE' then
    row_data := jsonb_build_object(
      'old_record', old, 'record', new, 'operation', operation,
      'table', table_name, 'schema', table_schema);
    perform realtime.send(row_data, event_name, topic_name);
  else
    raise exception 'Unexpected operation type: %', operation;
  end if;
exception
  when others then
    raise exception 'Failed to process the row: %', sqlerrm;
end;
$$;

-- The local backend's feed: a broadcast row's id and time, announced at commit (the payload may
-- be far over NOTIFY's 8000 bytes; the backend reads the row itself).
create or replace function realtime.supabase_local_announce() returns trigger
language plpgsql
as $$
begin
  if new.extension = 'broadcast' then
    perform pg_notify('supabase_local_realtime', new.id::text);
  end if;
  return null;
end;
$$;
drop trigger if exists supabase_local_announce on realtime.messages;
create trigger supabase_local_announce after insert on realtime.messages
  for each row execute function realtime.supabase_local_announce();

do $$
begin
  if not exists (select from pg_publication where pubname = 'supabase_realtime') then
    create publication supabase_realtime;
  end if;
end
$$;

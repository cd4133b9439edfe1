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
      raise warning 'WarnSendingBroadcastMessage: %', sqlerrm;
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

-- postgres_changes ------------------------------------------------------------------------------
-- Upstream reads the supabase_realtime publication's changes from a logical replication slot
-- (wal2json) and, per change, keeps the subscriptions (realtime.subscription) whose filters match
-- and whose role and claims may select the row. PGlite has no logical decoding, so a row trigger
-- on each table of the publication writes the change to realtime.supabase_local_changes and
-- announces it with NOTIFY supabase_local_changes (no payload: NOTIFY carries 8000 bytes at most;
-- delivered at commit, in commit order, never after a rollback). The backend then reads the
-- changes after the last it saw through realtime.supabase_local_list_changes(), which applies the
-- subscriptions' filters and RLS as upstream's apply_rls does (decision 027).
do $$
begin
  if to_regtype('realtime.equality_op') is null then
    create type realtime.equality_op as enum ('eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'in');
  end if;
  if to_regtype('realtime.user_defined_filter') is null then
    create type realtime.user_defined_filter as (
      column_name text, op realtime.equality_op, value text, negate boolean
    );
  elsif not exists (
    select 1 from pg_attribute a join pg_type t on a.attrelid = t.typrelid
    where t.oid = 'realtime.user_defined_filter'::regtype and a.attname = 'negate'
  ) then
    -- a database set up before `not.`: its subscriptions are a running backend's, gone at each
    -- start, so the table that holds the type goes with them and is made again below
    drop table if exists realtime.subscription;
    alter type realtime.user_defined_filter add attribute negate boolean;
  end if;
end
$$;
-- PostgREST's pattern, null and regular expression operators (upstream's since v2.109; added
-- here to a database set up before them). Used only as text below this point: a value added in
-- this transaction cannot be read as the type before it commits.
alter type realtime.equality_op add value if not exists 'like';
alter type realtime.equality_op add value if not exists 'ilike';
alter type realtime.equality_op add value if not exists 'is';
alter type realtime.equality_op add value if not exists 'match';
alter type realtime.equality_op add value if not exists 'imatch';
alter type realtime.equality_op add value if not exists 'isdistinct';

create or replace function realtime.to_regrole(role_name text) returns regrole
language sql immutable
as $$ select role_name::regrole $$;

-- A value as the change feed shows it: the column type's JSON form (bytea as hex, as wal2json).
create or replace function realtime.cast(val text, type_ regtype) returns jsonb
language plpgsql immutable
as $$
declare
  res jsonb;
begin
  if type_::text = 'bytea' then
    return to_jsonb(val);
  end if;
  execute format('select to_jsonb(%L::%s)', val, type_) into res;
  return res;
end;
$$;

-- One row per (binding, table) a channel subscribes to, as upstream's: the backend inserts them at
-- the join and deletes them when the channel ends.
create table if not exists realtime.subscription (
  id bigint generated always as identity primary key,
  subscription_id uuid not null,
  entity regclass not null,
  filters realtime.user_defined_filter[] not null default '{}',
  claims jsonb not null,
  claims_role regrole not null generated always as (realtime.to_regrole(claims ->> 'role')) stored,
  created_at timestamp not null default timezone('utc', now()),
  action_filter text default '*' check (action_filter in ('*', 'INSERT', 'UPDATE', 'DELETE')),
  selected_columns text[] default null
);
create unique index if not exists subscription_subscription_id_entity_filters_action_filter_selected_columns_key
  on realtime.subscription
  (subscription_id, entity, filters, action_filter, coalesce(selected_columns, '{}'));
create index if not exists ix_realtime_subscription_entity on realtime.subscription (entity);

-- A subscription's filters and columns must name columns its role may select, and each filter
-- must be one its operator can run on the column (upstream's checks and messages): a value of the
-- column's type, at most 100 `in` values, `is` with null (any column) or true, false, unknown (a
-- boolean one), `like`/`ilike` and `match`/`imatch` on a type with the operator, and a regular
-- expression that compiles; so no filter fails later, as the changes are read.
create or replace function realtime.subscription_check_filters() returns trigger
language plpgsql
as $$
declare
  selectable text[];
  f realtime.user_defined_filter;
  col_type regtype;
  col text;
begin
  select coalesce(array_agg(a.attname::text), '{}') into selectable
  from pg_attribute a
  where a.attrelid = new.entity and a.attnum > 0 and not a.attisdropped
    and has_column_privilege(new.claims ->> 'role', new.entity, a.attname, 'SELECT');
  foreach f in array new.filters loop
    if not f.column_name = any(selectable) then
      raise exception 'invalid column for filter %', f.column_name;
    end if;
    select a.atttypid::regtype into col_type
    from pg_attribute a where a.attrelid = new.entity and a.attname = f.column_name;
    case f.op::text
    when 'in' then
      if coalesce(jsonb_array_length(realtime.cast(f.value, (col_type::text || '[]')::regtype)), 0) > 100 then
        raise exception 'too many values for `in` filter. Maximum 100';
      end if;
    when 'is' then
      if f.value not in ('null', 'true', 'false', 'unknown') then
        raise exception 'invalid value for is filter: must be null, true, false, or unknown';
      end if;
      if f.value <> 'null' and col_type <> 'boolean'::regtype then
        raise exception 'is % filter requires a boolean column, got %', f.value, col_type::text;
      end if;
    when 'like', 'ilike' then
      if not exists (select 1 from pg_operator where oprname = '~~' and oprleft = col_type) then
        raise exception 'operator % requires a text-compatible column type, got %', f.op::text, col_type::text;
      end if;
    when 'match', 'imatch' then
      if not exists (
        select 1 from pg_operator
        where oprname = case f.op::text when 'imatch' then '~*' else '~' end
          and oprleft = col_type and oprright = col_type and oprresult = 'boolean'::regtype
      ) then
        raise exception 'operator % requires a text-compatible column type, got %', f.op::text, col_type::text;
      end if;
      begin
        perform '' ~ f.value;
      exception when others then
        raise exception 'invalid regular expression for % filter: %', f.op::text, sqlerrm;
      end;
      -- A back reference can make Postgres' regex engine take time exponential in the value's
      -- length (^((a+)\2)+c$ on 41 a's: 0.8 s; on 45: 2.9 s, about four times as long for every
      -- four more). Upstream's change feed is one connection of many; here it is the one database
      -- every API waits on, and it reads the changes as the owner, with no statement timeout:
      -- refused, where upstream takes it.
      if f.value ~ '(^|[^\\])(\\\\)*\\[1-9]' then
        raise exception 'invalid regular expression for % filter: back references are not supported by the local backend', f.op::text;
      end if;
    else
      perform realtime.cast(f.value, col_type);
    end case;
  end loop;
  foreach col in array coalesce(new.selected_columns, '{}') loop
    if not col = any(selectable) then
      raise exception 'invalid column for select %', col;
    end if;
  end loop;
  new.filters := coalesce(
    (select array_agg(x order by x.column_name, x.op, x.value, x.negate) from unnest(new.filters) x),
    '{}');
  new.selected_columns := (select array_agg(c order by c) from unnest(new.selected_columns) c);
  return new;
end;
$$;
drop trigger if exists tr_check_filters on realtime.subscription;
create trigger tr_check_filters before insert or update on realtime.subscription
  for each row execute function realtime.subscription_check_filters();

-- The local feed's queue: one row per change of a published table that somebody subscribes to.
-- Read by id (commit order: PGlite runs one transaction at a time), kept a minute, then pruned.
create table if not exists realtime.supabase_local_changes (
  id bigint generated always as identity primary key,
  entity regclass not null,
  action text not null,
  record jsonb,
  old_record jsonb,
  commit_timestamp timestamptz not null default now()
);

-- The old row as the table's replica identity gives it: the primary key (default), the identity
-- index's columns, every column (full), or none.
create or replace function realtime.supabase_local_identity(entity regclass, old jsonb)
returns jsonb
language sql stable
as $$
  select case c.relreplident
    when 'f' then old
    when 'n' then null
    else (
      select jsonb_object_agg(a.attname, old -> a.attname::text)
      from pg_index i
      join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
      where i.indrelid = entity
        and ((c.relreplident = 'd' and i.indisprimary) or (c.relreplident = 'i' and i.indisreplident))
    )
  end
  from pg_class c where c.oid = entity
$$;

-- Each change carries its transaction's commit time, as upstream's (the WAL's commit timestamp),
-- not the transaction's start: a transaction's first change queues a marker here, whose deferred
-- trigger runs as the transaction commits and stamps the transaction's changes with the clock.
-- PGlite runs one transaction at a time, so those are the queue's rows from its first change on.
create table if not exists realtime.supabase_local_commits (first_change bigint not null);
create or replace function realtime.supabase_local_stamp_commit() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  committed timestamptz := clock_timestamp();
begin
  update realtime.supabase_local_changes set commit_timestamp = committed
  where id >= new.first_change;
  delete from realtime.supabase_local_commits where first_change = new.first_change;
  return null;
end;
$$;
drop trigger if exists supabase_local_stamp_commit on realtime.supabase_local_commits;
create constraint trigger supabase_local_stamp_commit
  after insert on realtime.supabase_local_commits
  deferrable initially deferred
  for each row execute function realtime.supabase_local_stamp_commit();

create or replace function realtime.supabase_local_capture() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  published record;
  change_id bigint;
begin
  if not exists (select 1 from realtime.subscription s where s.entity = tg_relid) then
    return null;
  end if;
  select p.pubinsert, p.pubupdate, p.pubdelete into published
  from pg_catalog.pg_publication p
  where p.pubname = 'supabase_realtime'
    and (p.puballtables
      or exists (select 1 from pg_catalog.pg_publication_rel r
                 where r.prpubid = p.oid and r.prrelid = tg_relid)
      or exists (select 1 from pg_catalog.pg_publication_namespace n
                 join pg_catalog.pg_class c on c.relnamespace = n.pnnspid
                 where n.pnpubid = p.oid and c.oid = tg_relid));
  if not found
     or (tg_op = 'INSERT' and not published.pubinsert)
     or (tg_op = 'UPDATE' and not published.pubupdate)
     or (tg_op = 'DELETE' and not published.pubdelete) then
    return null;
  end if;
  insert into realtime.supabase_local_changes (entity, action, record, old_record)
  values (
    tg_relid,
    tg_op,
    case when tg_op <> 'DELETE' then to_jsonb(new) end,
    case when tg_op <> 'INSERT' then realtime.supabase_local_identity(tg_relid, to_jsonb(old)) end
  )
  returning id into change_id;
  -- once per transaction (the setting is the transaction's, and a savepoint rolled back takes it
  -- back with its rows): the commit's stamp, and the NOTIFY delivered at commit
  if current_setting('realtime.supabase_local_commit', true) is distinct from 'queued' then
    perform pg_catalog.set_config('realtime.supabase_local_commit', 'queued', true);
    insert into realtime.supabase_local_commits (first_change) values (change_id);
    perform pg_notify('supabase_local_changes', '');
  end if;
  return null;
end;
$$;

-- Every table of the publication gets the capture trigger: run when a publication or a table is
-- made or changed (the event trigger below) and before each subscription.
create or replace function realtime.supabase_local_sync_triggers() returns void
language plpgsql security definer set search_path = ''
as $$
declare
  entity regclass;
begin
  for entity in
    select c.oid::regclass
    from pg_catalog.pg_publication_tables pt
    join pg_catalog.pg_namespace n on n.nspname = pt.schemaname
    join pg_catalog.pg_class c on c.relnamespace = n.oid and c.relname = pt.tablename
    where pt.pubname = 'supabase_realtime' and c.relkind = 'r'
      and not exists (select 1 from pg_catalog.pg_trigger t
                      where t.tgrelid = c.oid and t.tgname = 'supabase_local_realtime_changes')
  loop
    execute format(
      'create trigger supabase_local_realtime_changes after insert or update or delete on %s
         for each row execute function realtime.supabase_local_capture()', entity);
  end loop;
end;
$$;

create or replace function realtime.supabase_local_publication_changed() returns event_trigger
language plpgsql
as $$
begin
  perform realtime.supabase_local_sync_triggers();
exception
  when others then
    raise warning 'supabase-local: realtime triggers not installed: %', sqlerrm;
end;
$$;
drop event trigger if exists supabase_local_realtime_publication;
create event trigger supabase_local_realtime_publication on ddl_command_end
  when tag in ('CREATE PUBLICATION', 'ALTER PUBLICATION', 'CREATE TABLE', 'CREATE TABLE AS', 'SELECT INTO')
  execute function realtime.supabase_local_publication_changed();

-- Whether a row passes a subscription's filters, as upstream's is_visible_through_filters and
-- check_equality_op: each filter compares the column's value and the filter's, both cast to the
-- column's type (`is` with its keyword, `isdistinct` null-safe, `not.` negating the result); a
-- comparison with a null value passes no filter but `is null` (and `isdistinct`); and every
-- filtered column must be in the row, so a filter on a column an old row cut to its key lacks
-- hides the event (it fails closed, as upstream's since v2.109).
create or replace function realtime.supabase_local_visible_through_filters(
  row_ jsonb, entity regclass, filters realtime.user_defined_filter[]
) returns boolean
language plpgsql stable set search_path = ''
as $$
declare
  f realtime.user_defined_filter;
  col_type text;
  passes boolean;
begin
  if cardinality(filters) = 0 then
    return true;
  end if;
  foreach f in array filters loop
    if row_ is null or not row_ ? f.column_name then
      return false;
    end if;
    select a.atttypid::regtype::text into col_type
    from pg_catalog.pg_attribute a where a.attrelid = entity and a.attname = f.column_name;
    begin
      case f.op::text
      when 'isdistinct' then
        execute format('select %L::%s %s %L::%s', row_ ->> f.column_name, col_type,
          case when f.negate then 'is not distinct from' else 'is distinct from' end,
          f.value, col_type)
        into passes;
      when 'is' then
        execute format('select %L::%s %s %s', row_ ->> f.column_name, col_type,
          case when f.negate then 'is not' else 'is' end, upper(f.value))
        into passes;
      else
        execute format('select %L::%s %s (%L::%s)',
          row_ ->> f.column_name, col_type,
          case f.op::text when 'eq' then '=' when 'neq' then '!=' when 'lt' then '<'
            when 'lte' then '<=' when 'gt' then '>' when 'gte' then '>=' when 'in' then '= any'
            when 'like' then 'like' when 'ilike' then 'ilike' when 'match' then '~'
            else '~*' end,
          f.value, case when f.op::text = 'in' then col_type || '[]' else col_type end)
        into passes;
        if f.negate then
          passes := not passes;
        end if;
      end case;
    exception
      when others then passes := false;
    end;
    if passes is not true then
      return false;
    end if;
  end loop;
  return true;
end;
$$;

-- A row as one role sees it: the columns it may select, narrowed to the subscription's `select`
-- (the primary key always stays), values over 64 bytes left out of a row over the size limit,
-- only the key when `key_only` (a delete on an RLS table). bytea as hex without `\x`, as wal2json.
create or replace function realtime.supabase_local_project(
  row_ jsonb, entity regclass, role_ regrole, selected text[], pk text[], too_large boolean,
  key_only boolean
) returns jsonb
language sql stable set search_path = ''
as $$
  select coalesce(jsonb_object_agg(e.key,
    case when t.typname = 'bytea' and jsonb_typeof(e.value) = 'string'
      then to_jsonb(substr(e.value #>> '{}', 3)) else e.value end), '{}'::jsonb)
  from jsonb_each(row_) e
  join pg_catalog.pg_attribute a on a.attrelid = entity and a.attname = e.key and a.attnum > 0
  join pg_catalog.pg_type t on t.oid = a.atttypid
  where pg_catalog.has_column_privilege(role_, entity, e.key, 'SELECT')
    and (selected is null or e.key = any(selected) or e.key = any(pk))
    and (not too_large or octet_length(e.value::text) <= 64)
    and (not key_only or e.key = any(pk))
$$;

-- One change for its subscriptions, as upstream's apply_rls: per role of the subscribers, an
-- error row (no primary key: 400; a key the role may not select: 401) or, per `select` group, the
-- change with the subscriptions that see it: filters matched and, on an RLS table, an INSERT or
-- UPDATE the subscriber's role and claims can select now; a DELETE goes to every subscriber whose
-- filters match, cut to the key on an RLS table. A row over max_record_bytes: error 413.
create or replace function realtime.supabase_local_apply_rls(
  change realtime.supabase_local_changes, max_record_bytes integer
) returns table (wal jsonb, subscription_ids uuid[], errors text[])
language plpgsql volatile set search_path = ''
as $$
declare
  entity_ regclass := change.entity;
  schema_name text;
  table_name text;
  is_rls boolean;
  subs realtime.subscription[];
  pk text[];
  too_large boolean := octet_length(coalesce(change.record::text, '') || coalesce(change.old_record::text, '')) > max_record_bytes;
  role_ regrole;
  role_name text;
  visible uuid[];
  same record;
  checked jsonb;
  allowed boolean;
  exists_sql text;
  head jsonb;
  grp record;
begin
  select n.nspname, c.relname, c.relrowsecurity into schema_name, table_name, is_rls
  from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
  where c.oid = entity_;
  if not found then
    return;
  end if;
  select array_agg(x) into subs from realtime.subscription x
  where x.entity = entity_ and x.action_filter in ('*', change.action);
  if subs is null then
    return;
  end if;
  select coalesce(array_agg(a.attname::text order by a.attnum), '{}') into pk
  from pg_catalog.pg_index i
  join pg_catalog.pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
  where i.indrelid = entity_ and i.indisprimary;
  head := jsonb_build_object('schema', schema_name, 'table', table_name, 'type', change.action);
  if cardinality(pk) > 0 then
    -- prepared once per role (its plan holds that role's policies), executed once per claims
    exists_sql := format(
      'prepare supabase_local_rls as select exists (select 1 from %1$s t where (%2$s) = (select %3$s from jsonb_populate_record(null::%1$s, %4$L::jsonb) r))',
      entity_,
      (select string_agg(format('t.%I', k), ', ') from unnest(pk) k),
      (select string_agg(format('r.%I', k), ', ') from unnest(pk) k),
      change.record);
  end if;
  perform pg_catalog.set_config('role', 'none', true);
  for role_ in select distinct x.claims_role from unnest(subs) x loop
    if change.action <> 'DELETE' and (cardinality(pk) = 0 or not (
      select bool_and(pg_catalog.has_column_privilege(role_, entity_, k, 'SELECT')) from unnest(pk) k
    )) then
      return query
        select head, array_agg(x.subscription_id),
          array[case when cardinality(pk) = 0 then 'Error 400: Bad Request, no primary key'
                     else 'Error 401: Unauthorized' end]
        from unnest(subs) x where x.claims_role = role_ group by x.selected_columns;
      continue;
    end if;
    select rolname into role_name from pg_catalog.pg_roles where oid = role_;
    if is_rls and change.action <> 'DELETE' then
      if exists (select 1 from pg_catalog.pg_prepared_statements where name = 'supabase_local_rls') then
        deallocate supabase_local_rls;
      end if;
      execute exists_sql;
    end if;
    visible := '{}';
    checked := '{}';
    -- subscriptions with the same filters and claims see the same: checked once
    for same in
      select x.filters, x.claims, array_agg(x.subscription_id) as ids
      from unnest(subs) x where x.claims_role = role_ group by x.filters, x.claims
    loop
      continue when not realtime.supabase_local_visible_through_filters(
        case when change.action = 'DELETE' then change.old_record else change.record end,
        entity_, same.filters);
      if not is_rls or change.action = 'DELETE' then
        visible := visible || same.ids;
        continue;
      end if;
      if checked ? same.claims::text then
        allowed := (checked ->> same.claims::text)::boolean;
      else
        begin
          perform pg_catalog.set_config('role', role_name, true),
                  pg_catalog.set_config('request.jwt.claims', same.claims::text, true);
          execute 'execute supabase_local_rls' into allowed;
          perform pg_catalog.set_config('role', 'none', true);
        exception
          when others then allowed := false;
        end;
        checked := checked || jsonb_build_object(same.claims::text, allowed);
      end if;
      if allowed then
        visible := visible || same.ids;
      end if;
    end loop;
    for grp in
      select x.selected_columns as selected,
             array_agg(x.subscription_id) filter (where x.subscription_id = any(visible)) as ids
      from unnest(subs) x where x.claims_role = role_ group by x.selected_columns
    loop
      continue when grp.ids is null;
      return query select
        head || jsonb_build_object(
          'commit_timestamp',
          to_char(change.commit_timestamp at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'columns', (
            select jsonb_agg(jsonb_build_object('name', a.attname, 'type', t.typname) order by a.attnum)
            from pg_catalog.pg_attribute a join pg_catalog.pg_type t on t.oid = a.atttypid
            where a.attrelid = entity_ and a.attnum > 0 and not a.attisdropped
              and pg_catalog.has_column_privilege(role_, entity_, a.attname, 'SELECT')
              and (grp.selected is null or a.attname = any(grp.selected) or a.attname = any(pk))
          ),
          'record', case when change.action <> 'DELETE' then realtime.supabase_local_project(
            change.record, entity_, role_, grp.selected, pk, too_large, false) end,
          'old_record', case when change.action <> 'INSERT' then realtime.supabase_local_project(
            change.old_record, entity_, role_, grp.selected, pk, too_large,
            is_rls and change.action = 'DELETE') end
        ),
        grp.ids,
        case when too_large then array['Error 413: Payload Too Large'] else '{}'::text[] end;
    end loop;
  end loop;
  if exists (select 1 from pg_catalog.pg_prepared_statements where name = 'supabase_local_rls') then
    deallocate supabase_local_rls;
  end if;
end;
$$;

-- The changes after `after_id` (at most max_changes of them), each with what apply_rls makes of
-- it (or one row of nulls: nobody sees it); changes over a minute old are pruned first.
create or replace function realtime.supabase_local_list_changes(
  after_id bigint, max_changes integer, max_record_bytes integer
) returns table (change_id bigint, wal jsonb, subscription_ids uuid[], errors text[])
language plpgsql volatile set search_path = ''
as $$
declare
  change realtime.supabase_local_changes;
  found_any boolean;
begin
  delete from realtime.supabase_local_changes c where c.commit_timestamp < now() - interval '1 minute';
  for change in
    select * from realtime.supabase_local_changes c where c.id > after_id order by c.id limit max_changes
  loop
    found_any := false;
    for wal, subscription_ids, errors in
      select * from realtime.supabase_local_apply_rls(change, max_record_bytes)
    loop
      found_any := true;
      change_id := change.id;
      return next;
    end loop;
    if not found_any then
      change_id := change.id;
      wal := null;
      subscription_ids := null;
      errors := null;
      return next;
    end if;
  end loop;
end;
$$;

-- The feed's functions are the backend's (it runs them as postgres), not the API roles'.
revoke execute on function realtime.supabase_local_sync_triggers(), realtime.supabase_local_capture(),
  realtime.supabase_local_stamp_commit(), realtime.supabase_local_list_changes(bigint, integer, integer),
  realtime.supabase_local_apply_rls(realtime.supabase_local_changes, integer)
  from public;

select realtime.supabase_local_sync_triggers();

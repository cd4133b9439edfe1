-- pg_net 0.20.4 for the local backend: the schema `net` with its queue, response table, types and
-- functions under their names, signatures and defaults, so a migration, a trigger (a database
-- webhook) or a seed calls net.http_get/http_post/http_delete as on a Supabase project. PGlite
-- has no build of the C extension, so its C functions are SQL here, and its background worker is
-- the backend's own (src/database/pg-net.ts): net.wake() notifies it, the notification arrives
-- when the transaction commits, and it sends the queued requests and writes their responses, as
-- pg_net's worker does after a commit (a rolled-back transaction sends nothing).

create schema if not exists net;

create domain net.http_method as text
check (
  value ilike 'get'
  or value ilike 'post'
  or value ilike 'delete'
);

-- Requests waiting for the backend to send them (pg_net's worker reads them the same way).
create unlogged table net.http_request_queue(
  id bigserial,
  method net.http_method not null,
  url text not null,
  headers jsonb,
  body bytea,
  timeout_milliseconds int not null
);

-- The backend's worker runs whenever the backend does: there is no other process to check.
create function net.check_worker_is_up() returns void
language plpgsql
as $$
begin
end
$$;
comment on function net.check_worker_is_up() is 'raises an exception if the pg_net background worker is not up, otherwise it doesn''t return anything';

-- One row per request sent: its response, or why there is none.
create unlogged table net._http_response(
  id bigint,
  status_code integer,
  content_type text,
  headers jsonb,
  content text,
  timed_out bool,
  error_msg text,
  created timestamptz not null default now()
);
create index on net._http_response (created);

-- Waits until a request's response is written. pg_net's worker is another process; here the
-- backend sends requests between statements on the one database connection, so a statement
-- that waited would wait for ever: it answers at once, or says why it cannot wait.
create function net._await_response(request_id bigint)
returns bool
language plpgsql
as $$
begin
  if not exists (select from net._http_response r where r.id = request_id) then
    raise exception 'the response to request % is not here yet', request_id
      using hint = 'The local backend sends a request after the transaction that made it commits, between statements: collect the response in a later statement (async => true), not by waiting in this one.';
  end if;
  return true;
end
$$;

-- A string percent-encoded as curl_easy_escape encodes it: every byte but A-Z a-z 0-9 - . _ ~.
create function net._urlencode_string(string varchar)
returns text
language plpgsql
immutable
as $$
declare
  bytes bytea := convert_to(string, 'utf8');
  encoded text := '';
  b int;
begin
  if string is null then
    return null;
  end if;
  for i in 0 .. length(bytes) - 1 loop
    b := get_byte(bytes, i);
    if (b between 48 and 57) or (b between 65 and 90) or (b between 97 and 122) or b in (45, 46, 95, 126) then
      encoded := encoded || chr(b);
    else
      encoded := encoded || '%' || upper(lpad(to_hex(b), 2, '0'));
    end if;
  end loop;
  return encoded;
end
$$;

-- The URL with each `key=value` appended to its query (before a fragment), as curl's URL API
-- appends them.
create function net._encode_url_with_params_array(url text, params_array text[])
returns text
language plpgsql
immutable
as $$
declare
  base text := split_part(url, '#', 1);
  fragment text := case when position('#' in url) > 0 then substring(url from position('#' in url)) else '' end;
  query text := array_to_string(array(select p from unnest(params_array) p where p is not null), '&');
begin
  if url is null or params_array is null then
    return null;
  end if;
  if query = '' then
    return url;
  end if;
  if position('?' in base) = 0 then
    return base || '?' || query || fragment;
  end if;
  if right(base, 1) in ('?', '&') then
    return base || query || fragment;
  end if;
  return base || '&' || query || fragment;
end
$$;

create function net.worker_restart() returns bool
language plpgsql
as $$
begin
  perform pg_notify('supabase_local_pg_net', 'restart');
  return true;
end
$$;

create function net.wait_until_running() returns void
language plpgsql
as $$
begin
end
$$;
comment on function net.wait_until_running() is 'waits until the worker is running';

-- Tells the backend's worker there are requests: the notification arrives at the commit.
create function net.wake() returns void
language plpgsql
as $$
begin
  perform pg_notify('supabase_local_pg_net', '');
end
$$;

create function net.http_get(
  url text,
  params jsonb default '{}'::jsonb,
  headers jsonb default '{}'::jsonb,
  timeout_milliseconds int default 5000
)
returns bigint
language plpgsql
as $$
declare
  request_id bigint;
  params_array text[];
begin
  select coalesce(array_agg(net._urlencode_string(key) || '=' || net._urlencode_string(value)), '{}')
  into params_array
  from jsonb_each_text(params);

  insert into net.http_request_queue(method, url, headers, timeout_milliseconds)
  values ('GET', net._encode_url_with_params_array(url, params_array), headers, timeout_milliseconds)
  returning id into request_id;

  perform net.wake();
  return request_id;
end
$$;

create function net.http_post(
  url text,
  body jsonb default '{}'::jsonb,
  params jsonb default '{}'::jsonb,
  headers jsonb default '{"Content-Type": "application/json"}'::jsonb,
  timeout_milliseconds int default 5000
)
returns bigint
language plpgsql
as $$
declare
  request_id bigint;
  params_array text[];
  content_type text;
begin
  select header_value into content_type
  from jsonb_each_text(coalesce(headers, '{}'::jsonb)) r(header_name, header_value)
  where lower(header_name) = 'content-type'
  limit 1;

  -- a body is JSON: without a Content-Type it is sent as JSON, and any other type is refused
  if content_type is null then
    select headers || '{"Content-Type": "application/json"}'::jsonb into headers;
  end if;
  if content_type <> 'application/json' then
    raise exception 'Content-Type header must be "application/json"';
  end if;

  select coalesce(array_agg(net._urlencode_string(key) || '=' || net._urlencode_string(value)), '{}')
  into params_array
  from jsonb_each_text(params);

  insert into net.http_request_queue(method, url, headers, body, timeout_milliseconds)
  values (
    'POST',
    net._encode_url_with_params_array(url, params_array),
    headers,
    convert_to(body::text, 'UTF8'),
    timeout_milliseconds
  )
  returning id into request_id;

  perform net.wake();
  return request_id;
end
$$;

create function net.http_delete(
  url text,
  params jsonb default '{}'::jsonb,
  headers jsonb default '{}'::jsonb,
  timeout_milliseconds int default 5000,
  body jsonb default null
)
returns bigint
language plpgsql
as $$
declare
  request_id bigint;
  params_array text[];
begin
  select coalesce(array_agg(net._urlencode_string(key) || '=' || net._urlencode_string(value)), '{}')
  into params_array
  from jsonb_each_text(params);

  insert into net.http_request_queue(method, url, headers, body, timeout_milliseconds)
  values (
    'DELETE',
    net._encode_url_with_params_array(url, params_array),
    headers,
    convert_to(body::text, 'UTF8'),
    timeout_milliseconds
  )
  returning id into request_id;

  perform net.wake();
  return request_id;
end
$$;

create type net.request_status as enum ('PENDING', 'SUCCESS', 'ERROR');

create type net.http_response as (
  status_code integer,
  headers jsonb,
  body text
);

create type net.http_response_result as (
  status net.request_status,
  message text,
  response net.http_response
);

create function net._http_collect_response(request_id bigint, async bool default true)
returns net.http_response_result
language plpgsql
as $$
declare
  rec net._http_response;
begin
  if not async then
    perform net._await_response(request_id);
  end if;

  select * into rec from net._http_response where id = request_id;

  -- a request still in flight and one that does not exist look the same
  if rec is null or rec.error_msg is not null then
    return (
      'ERROR',
      coalesce(rec.error_msg, 'request matching request_id not found'),
      null
    )::net.http_response_result;
  end if;

  return (
    'SUCCESS',
    'ok',
    (rec.status_code, rec.headers, rec.content)::net.http_response
  )::net.http_response_result;
end
$$;

create function net.http_collect_response(request_id bigint, async bool default true)
returns net.http_response_result
language plpgsql
as $$
begin
  raise notice 'The net.http_collect_response function is deprecated.';
  select net._http_collect_response(request_id, async);
end
$$;

grant usage on schema net to public;
grant all on all sequences in schema net to public;
grant all on all tables in schema net to public;

-- The `storage` schema as the Supabase CLI's database has it before a project's migrations run
-- (Storage's tenant migrations up to 0060, v1.60.2): storage.buckets and storage.objects with their
-- columns, indexes and RLS on, the helpers policies use (foldername(), filename(), extension(),
-- operation(), allow_only_operation(), allow_any_operation()), search() (what the list endpoint
-- reads, as the caller), and protect_delete: a delete in SQL is refused unless the Storage API's
-- own transaction allows it (storage.allow_delete_query), since the bytes would stay behind.
-- So a project's migrations can write policies on storage.objects exactly as for hosted Supabase.
--
-- Not here (answered as a server without them): analytics (Iceberg) buckets, object versioning.
create schema if not exists storage;
grant usage on schema storage to postgres, anon, authenticated, service_role;
alter default privileges in schema storage grant all on tables to postgres, anon, authenticated, service_role;
alter default privileges in schema storage grant all on functions to postgres, anon, authenticated, service_role;
alter default privileges in schema storage grant all on sequences to postgres, anon, authenticated, service_role;

do $$
begin
  if not exists (select from pg_type where typname = 'buckettype' and typnamespace = 'storage'::regnamespace) then
    create type storage.buckettype as enum ('STANDARD', 'ANALYTICS', 'VECTOR');
  end if;
end
$$;

create table if not exists storage.buckets (
  id text not null primary key,
  name text not null,
  owner uuid,
  created_at timestamptz default now(),
  updated_at timestamptz default now(),
  public boolean default false,
  avif_autodetection boolean default false,
  file_size_limit bigint,
  allowed_mime_types text[],
  owner_id text,
  type storage.buckettype not null default 'STANDARD'
);
create unique index if not exists bname on storage.buckets using btree (name);
comment on column storage.buckets.owner is 'Field is deprecated, use owner_id instead';
alter table storage.buckets enable row level security;

create table if not exists storage.objects (
  id uuid not null default gen_random_uuid() primary key,
  bucket_id text constraint "objects_bucketId_fkey" references storage.buckets (id),
  name text,
  owner uuid,
  created_at timestamptz default now(),
  updated_at timestamptz default now(),
  last_accessed_at timestamptz default now(),
  metadata jsonb,
  path_tokens text[] generated always as (string_to_array(name, '/')) stored,
  version text,
  owner_id text,
  user_metadata jsonb
);
create unique index if not exists bucketid_objname on storage.objects using btree (bucket_id, name);
create index if not exists name_prefix_search on storage.objects (name text_pattern_ops);
create index if not exists idx_objects_bucket_id_name on storage.objects (bucket_id, (name collate "C"));
create index if not exists idx_objects_bucket_id_name_lower on storage.objects (bucket_id, (lower(name) collate "C"));
comment on column storage.objects.owner is 'Field is deprecated, use owner_id instead';
alter table storage.objects enable row level security;

grant all on storage.buckets, storage.objects to anon, authenticated, service_role;
grant all on storage.buckets, storage.objects to postgres with grant option;

create or replace function storage.foldername(name text) returns text[]
language plpgsql immutable
as $$
declare
  _parts text[];
begin
  _parts := string_to_array(name, '/');
  -- every segment but the last: the folders the object sits in
  return _parts[1 : array_length(_parts, 1) - 1];
end
$$;

create or replace function storage.filename(name text) returns text
language plpgsql
as $$
declare
  _parts text[];
begin
  _parts := string_to_array(name, '/');
  return _parts[array_length(_parts, 1)];
end
$$;

create or replace function storage.extension(name text) returns text
language plpgsql immutable
as $$
declare
  _parts text[];
  _filename text;
begin
  _parts := string_to_array(name, '/');
  _filename := _parts[array_length(_parts, 1)];
  -- what follows the last dot of the file name (the whole name when it has none)
  return reverse(split_part(reverse(_filename), '.', 1));
end
$$;

create or replace function storage.get_size_by_bucket()
returns table (size bigint, bucket_id text)
language plpgsql stable
as $$
begin
  return query
    select sum((o.metadata->>'size')::bigint)::bigint, o.bucket_id
    from storage.objects as o group by o.bucket_id;
end
$$;

-- The operation the Storage API is doing, for policies that tell them apart (set per request).
create or replace function storage.operation() returns text
language plpgsql stable
as $$
begin
  return current_setting('storage.operation', true);
end;
$$;

create or replace function storage.allow_only_operation(expected_operation text) returns boolean
language sql stable
as $$
  select coalesce(
    nullif(expected_operation, '') is not null
      and regexp_replace(coalesce(storage.operation(), ''), '^storage\.', '')
        = regexp_replace(expected_operation, '^storage\.', ''),
    false);
$$;

create or replace function storage.allow_any_operation(expected_operations text[]) returns boolean
language sql stable
as $$
  select exists (
    select from unnest(expected_operations) as expected
    where nullif(expected, '') is not null
      and regexp_replace(coalesce(storage.operation(), ''), '^storage\.', '')
        = regexp_replace(expected, '^storage\.', ''));
$$;

create or replace function storage.update_updated_at_column() returns trigger
language plpgsql
as $$
begin
  new.updated_at = now();
  return new;
end;
$$;
drop trigger if exists update_objects_updated_at on storage.objects;
create trigger update_objects_updated_at before update on storage.objects
  for each row execute function storage.update_updated_at_column();

create or replace function storage.enforce_bucket_name_length() returns trigger
language plpgsql
as $$
begin
  if length(new.name) > 100 then
    raise exception 'bucket name "%" is too long (% characters). Max is 100.', new.name, length(new.name);
  end if;
  return new;
end;
$$;
drop trigger if exists enforce_bucket_name_length_trigger on storage.buckets;
create trigger enforce_bucket_name_length_trigger before insert or update of name on storage.buckets
  for each row execute function storage.enforce_bucket_name_length();

-- Deletes go through the Storage API, which removes the bytes too; its transaction sets
-- storage.allow_delete_query. A delete in SQL gets upstream's refusal.
create or replace function storage.protect_delete() returns trigger
language plpgsql
as $$
begin
  if coalesce(current_setting('storage.allow_delete_query', true), 'false') != 'true' then
    raise exception 'Direct deletion from storage tables is not allowed. Use the Storage API instead.'
      using hint = 'This prevents accidental data loss from orphaned objects.',
            errcode = '42501';
  end if;
  return null;
end;
$$;
drop trigger if exists protect_buckets_delete on storage.buckets;
create trigger protect_buckets_delete before delete on storage.buckets
  for each statement execute function storage.protect_delete();
drop trigger if exists protect_objects_delete on storage.objects;
create trigger protect_objects_delete before delete on storage.objects
  for each statement execute function storage.protect_delete();

-- The list endpoint (storage-js list()): the level where prefix || search ends, folders (id null)
-- and files named from after the prefix, matched case-insensitively on prefix || search, at most
-- 1500 a page. Security invoker: the caller sees what RLS lets them see.
create or replace function storage.search(
  prefix text, bucketname text, limits int default 100, levels int default 1,
  offsets int default 0, search text default '', sortcolumn text default 'name',
  sortorder text default 'asc'
) returns table (
  name text, id uuid, updated_at timestamptz, created_at timestamptz,
  last_accessed_at timestamptz, metadata jsonb
)
security invoker
language plpgsql stable
as $$
declare
  v_match text := lower(coalesce(prefix, '') || coalesce(search, ''));
  -- the entries' names run from the prefix's last segment to where prefix || search ends (so a
  -- search with a slash lists below the prefix, named from it: "sub/b.txt" under "lst/"); the
  -- `levels` argument is kept for the signature and not read, as upstream's since 0063
  v_start int := coalesce(array_length(string_to_array(coalesce(prefix, ''), '/'), 1), 1);
  v_levels int := coalesce(array_length(string_to_array(coalesce(prefix, '') || coalesce(search, ''), '/'), 1), 1);
  v_order text := case when lower(coalesce(sortorder, 'asc')) = 'desc' then 'desc' else 'asc' end;
  v_column text := case lower(coalesce(sortcolumn, 'name'))
    when 'updated_at' then 'updated_at' when 'created_at' then 'created_at'
    when 'last_accessed_at' then 'last_accessed_at' else 'name' end;
begin
  return query execute format(
    $sql$
    with matched as (
      select array_to_string(o.path_tokens[$6:$1], '/') as entry,
             array_length(o.path_tokens, 1) > $1 as is_folder,
             o.id, o.updated_at, o.created_at, o.last_accessed_at, o.metadata
      from storage.objects o
      where o.bucket_id = $2 and left(lower(o.name), length($3)) = $3
    ), entries as (
      select distinct on (entry) entry as name, null::uuid as id, null::timestamptz as updated_at,
             null::timestamptz as created_at, null::timestamptz as last_accessed_at,
             null::jsonb as metadata, true as is_folder
      from matched where is_folder
      union all
      select entry, m.id, m.updated_at, m.created_at, m.last_accessed_at, m.metadata, false
      from matched m where not m.is_folder
    )
    select e.name, e.id, e.updated_at, e.created_at, e.last_accessed_at, e.metadata from entries e
    order by %s
    limit $4 offset $5
    $sql$,
    -- by name: as upstream's skip-scan walks the full keys in lower(name) byte order, a folder
    -- sorts as its name and '/' (file "b.txt" before folder "b": '.' < '/')
    case when v_column = 'name'
      then format('lower(e.name || case when e.is_folder then %L else %L end) collate "C" %s', '/', '', v_order)
      else format('e.is_folder desc, e.%I %s, lower(e.name) collate "C" %s', v_column, v_order, v_order)
    end
  ) using v_levels, bucketname, v_match, least(coalesce(limits, 100), 1500), coalesce(offsets, 0),
    v_start;
end;
$$;

-- Vector buckets (Storage's tenant migration 0045; the routes: storage/vector-buckets.ts): the
-- buckets and their indexes, readable by the API roles as upstream grants them (RLS on, no policy:
-- only the service role's requests, made as the owner, see them). Each index's vectors are a table
-- in schema storage_vectors, which the data API does not expose.
create table if not exists storage.buckets_vectors (
  id text not null primary key,
  type storage.buckettype not null default 'VECTOR',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create table if not exists storage.vector_indexes (
  id text primary key default gen_random_uuid(),
  name text collate "C" not null,
  bucket_id text not null references storage.buckets_vectors (id),
  data_type text not null,
  dimension integer not null,
  distance_metric text not null,
  metadata_configuration jsonb null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index if not exists vector_indexes_name_bucket_id_idx on storage.vector_indexes (name, bucket_id);
alter table storage.buckets_vectors enable row level security;
alter table storage.vector_indexes enable row level security;
revoke all on storage.buckets_vectors, storage.vector_indexes from anon, authenticated, service_role;
grant select on storage.buckets_vectors, storage.vector_indexes to anon, authenticated, service_role;
create schema if not exists storage_vectors;

-- S3 multipart uploads (Storage's tenant migrations 0021, 0022, 0025, 0057; the routes:
-- storage/s3/multipart.ts): an upload in progress and its parts, RLS on and closed to anon and
-- authenticated, as upstream has them; the S3 endpoint reads and writes them as the owner once the
-- caller may write the object. Here `version` of a part names its bytes in the file store.
create table if not exists storage.s3_multipart_uploads (
  id text primary key,
  in_progress_size bigint not null default 0,
  upload_signature text not null,
  bucket_id text not null references storage.buckets (id),
  key text collate "C" not null,
  version text not null,
  owner_id text null,
  created_at timestamptz not null default now(),
  user_metadata jsonb null,
  metadata jsonb null
);
create table if not exists storage.s3_multipart_uploads_parts (
  id uuid primary key default gen_random_uuid(),
  upload_id text not null references storage.s3_multipart_uploads (id) on delete cascade,
  size bigint not null default 0,
  part_number int not null,
  bucket_id text not null references storage.buckets (id),
  key text collate "C" not null,
  etag text not null,
  owner_id text null,
  version text not null,
  created_at timestamptz not null default now()
);
create index if not exists idx_multipart_uploads_list
  on storage.s3_multipart_uploads (bucket_id, key, created_at asc);
alter table storage.s3_multipart_uploads enable row level security;
alter table storage.s3_multipart_uploads_parts enable row level security;
revoke all on storage.s3_multipart_uploads, storage.s3_multipart_uploads_parts from anon, authenticated;
grant all on storage.s3_multipart_uploads, storage.s3_multipart_uploads_parts to service_role;

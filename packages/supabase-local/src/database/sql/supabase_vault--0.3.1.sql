-- Supabase Vault (supabase_vault 0.3.1) for the local backend: its table, view and functions with
-- their names, columns, defaults and signatures, so a migration, a seed or config.toml's [db.vault]
-- use it as on a Supabase project. The hosted extension encrypts with libsodium under a root key
-- kept outside the database; PGlite has no build of it, so here a secret is encrypted with
-- pgcrypto (AES-CBC under a key derived from the root key, the nonce as its IV, and an HMAC-SHA256
-- over the secret's id, the IV and the ciphertext), and the root key is random and kept in
-- vault._root_key, which no role but the owner reads. Ciphertexts are local: a dump's secrets
-- decrypt only in the database they came from, as with the hosted key.

create table vault._root_key (
  id int primary key default 1 check (id = 1),
  key bytea not null
);
insert into vault._root_key (key) values (@extschema:pgcrypto@.gen_random_bytes(32));
revoke all on vault._root_key from public;

create function vault._crypto_aead_det_noncegen()
returns bytea
language sql volatile
as $$ select @extschema:pgcrypto@.gen_random_bytes(16) $$;

-- The key of a key id and context, derived from the root key: for the two functions below only.
create function vault._key(key_id bigint, context bytea)
returns bytea
language sql stable security definer
set search_path = ''
as $$
  select @extschema:pgcrypto@.hmac(context || convert_to(key_id::text, 'utf8'), r.key, 'sha256')
  from vault._root_key r
$$;
revoke execute on function vault._key(bigint, bytea) from public;

create function vault._crypto_aead_det_encrypt(
  message bytea, additional bytea, key_id bigint, context bytea = 'pgsodium', nonce bytea = null
)
returns bytea
language plpgsql stable security definer
set search_path = ''
as $$
declare
  k bytea := vault._key(key_id, context);
  iv bytea := substring(
    coalesce(nonce, @extschema:pgcrypto@.hmac(message || additional, k, 'sha256')) from 1 for 16
  );
  sealed bytea;
begin
  if length(iv) < 16 then
    raise exception 'pgsodium_crypto_aead_det_encrypt_by_id: invalid nonce' using errcode = '22000';
  end if;
  sealed := @extschema:pgcrypto@.encrypt_iv(message, k, iv, 'aes-cbc/pad:pkcs');
  return iv || sealed || @extschema:pgcrypto@.hmac(additional || iv || sealed, k, 'sha256');
end
$$;

create function vault._crypto_aead_det_decrypt(
  message bytea, additional bytea, key_id bigint, context bytea = 'pgsodium', nonce bytea = null
)
returns bytea
language plpgsql stable security definer
set search_path = ''
as $$
declare
  k bytea := vault._key(key_id, context);
  iv bytea;
  sealed bytea;
begin
  if message is null or length(message) < 16 + 16 + 32 then
    raise exception 'pgsodium_crypto_aead_det_decrypt_by_id: invalid message' using errcode = '22000';
  end if;
  iv := substring(message from 1 for 16);
  sealed := substring(message from 17 for length(message) - 48);
  if @extschema:pgcrypto@.hmac(additional || iv || sealed, k, 'sha256')
     is distinct from substring(message from length(message) - 31) then
    raise exception 'pgsodium_crypto_aead_det_decrypt_by_id: invalid message' using errcode = '22000';
  end if;
  return @extschema:pgcrypto@.decrypt_iv(sealed, k, iv, 'aes-cbc/pad:pkcs');
end
$$;

create table vault.secrets (
  id uuid primary key default gen_random_uuid(),
  name text,
  description text not null default '',
  secret text not null,
  key_id uuid,
  nonce bytea default vault._crypto_aead_det_noncegen(),
  created_at timestamptz not null default current_timestamp,
  updated_at timestamptz not null default current_timestamp
);
comment on table vault.secrets is 'Table with encrypted `secret` column for storing sensitive information on disk.';
create unique index on vault.secrets using btree (name) where name is not null;

create view vault.decrypted_secrets as
select s.id,
  s.name,
  s.description,
  s.secret,
  convert_from(
    vault._crypto_aead_det_decrypt(
      message := decode(s.secret, 'base64'::text),
      additional := convert_to(s.id::text, 'utf8'),
      key_id := 0,
      context := 'pgsodium'::bytea,
      nonce := s.nonce
    ),
    'utf8'::name
  ) as decrypted_secret,
  s.key_id,
  s.nonce,
  s.created_at,
  s.updated_at
from vault.secrets s;

create function vault.create_secret(
  new_secret text,
  new_name text = null,
  new_description text = '',
  -- unused
  new_key_id uuid = null
)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  rec record;
begin
  insert into vault.secrets (secret, name, description)
  values (new_secret, new_name, new_description)
  returning * into rec;
  update vault.secrets s
  set secret = encode(vault._crypto_aead_det_encrypt(
    message := convert_to(rec.secret, 'utf8'),
    additional := convert_to(s.id::text, 'utf8'),
    key_id := 0,
    context := 'pgsodium'::bytea,
    nonce := rec.nonce
  ), 'base64')
  where id = rec.id;
  return rec.id;
end
$$;

create function vault.update_secret(
  secret_id uuid,
  new_secret text = null,
  new_name text = null,
  new_description text = null,
  -- unused
  new_key_id uuid = null
)
returns void
language plpgsql
set search_path = ''
as $$
begin
  update vault.secrets s
  set
    secret = case when new_secret is null then s.secret
                  else encode(vault._crypto_aead_det_encrypt(
                    message := convert_to(new_secret, 'utf8'),
                    additional := convert_to(s.id::text, 'utf8'),
                    key_id := 0,
                    context := 'pgsodium'::bytea,
                    nonce := s.nonce
                  ), 'base64') end,
    name = coalesce(new_name, s.name),
    description = coalesce(new_description, s.description),
    updated_at = now()
  where s.id = secret_id;
end
$$;

select pg_catalog.pg_extension_config_dump('vault.secrets', '');

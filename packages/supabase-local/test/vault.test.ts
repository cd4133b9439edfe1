// Supabase Vault (supabase_vault 0.3.1, built here in SQL over pgcrypto): on a new project as on a
// hosted one, in schema vault; secrets encrypted at rest and decrypted by the view; closed to the
// API roles unless a migration grants them, as Supabase's guides do; and config.toml's [db.vault]
// made into secrets at the start, as `supabase start` makes them.
import { rmSync } from "node:fs";
import { createClient } from "@supabase/supabase-js";
import { afterAll, beforeAll, expect, test } from "vitest";
import { PUBLISHABLE_KEY, SECRET_KEY } from "../../../tests/support/backend.ts";
import { createLocalBackend, type LocalBackend } from "../src/index.ts";
import { applyVaultSecrets } from "../src/project/vault-secrets.ts";
import { temporaryProject } from "./support/base-snapshot.ts";

let project: string;
let backend: LocalBackend;

beforeAll(async () => {
  let cacheDir: string;
  ({ project, cacheDir } = await temporaryProject("vault-project", {
    // a migration as Supabase's guides write one: the service role reads one secret through a function
    "migrations/20240101000000_secret_reader.sql": `create extension if not exists supabase_vault with schema vault;
     create function public.read_secret(secret_name text) returns text
     language sql security definer set search_path = '' as $$
       select decrypted_secret from vault.decrypted_secrets where name = secret_name
     $$;
     revoke execute on function public.read_secret(text) from public, anon, authenticated;
     grant execute on function public.read_secret(text) to service_role;`,
    "config.toml": `[db.vault]
from_env = "env(VAULT_TEST_SECRET)"
literal = "plain value"
unset = "env(VAULT_TEST_NEVER_SET)"
empty = ""
`,
  }));
  process.env.VAULT_TEST_SECRET = "from the environment";
  try {
    backend = await createLocalBackend({ projectDir: project, host: false, cacheDir, seed: false });
  } finally {
    delete process.env.VAULT_TEST_SECRET;
  }
}, 120_000);

afterAll(async () => {
  await backend?.close();
  rmSync(project, { recursive: true, force: true });
});

const client = (key: string) =>
  createClient(backend.url, key, {
    auth: { persistSession: false, autoRefreshToken: false },
    global: { fetch: (input, init) => backend.fetch(new Request(input, init)) },
  });

test("a new project has supabase_vault in schema vault, as a hosted one", async () => {
  const { rows } = await backend.db.query(
    "select extnamespace::regnamespace::text as schema, extversion from pg_extension where extname = 'supabase_vault'",
  );
  expect(rows).toEqual([{ schema: "vault", extversion: "0.3.1" }]);
});

test("create_secret, decrypted_secrets and update_secret: the table holds no plaintext", async () => {
  const db = backend.db;
  const { rows } = await db.query<{ id: string }>(
    "select vault.create_secret('s3kr3t_k3y', 'round_trip', 'this is the foo secret key') as id",
  );
  const id = rows[0]?.id;
  const stored = await db.query<{ secret: string; nonce: Uint8Array }>(
    "select secret, nonce from vault.secrets where id = $1",
    [id],
  );
  expect(stored.rows[0]?.secret).not.toContain("s3kr3t");
  expect(stored.rows[0]?.nonce).toHaveLength(16);
  expect(
    (
      await db.query(
        "select decrypted_secret, description from vault.decrypted_secrets where id = $1",
        [id],
      )
    ).rows,
  ).toEqual([{ decrypted_secret: "s3kr3t_k3y", description: "this is the foo secret key" }]);

  await db.query(
    "select vault.update_secret($1, new_secret := 'new_s3kr3t', new_name := 'round_trip_2')",
    [id],
  );
  expect(
    (
      await db.query("select name, decrypted_secret from vault.decrypted_secrets where id = $1", [
        id,
      ])
    ).rows,
  ).toEqual([{ name: "round_trip_2", decrypted_secret: "new_s3kr3t" }]);

  // a name is unique; a secret moved to another row does not decrypt there
  await expect(db.query("select vault.create_secret('x', 'round_trip_2')")).rejects.toThrow(
    /duplicate key/,
  );
  const other = (await db.query<{ id: string }>("select vault.create_secret('other') as id"))
    .rows[0]?.id;
  await db.query(
    "update vault.secrets set secret = (select secret from vault.secrets where id = $1) where id = $2",
    [id, other],
  );
  await expect(
    db.query("select decrypted_secret from vault.decrypted_secrets where id = $1", [other]),
  ).rejects.toThrow("pgsodium_crypto_aead_det_decrypt_by_id: invalid message");
  await db.query("delete from vault.secrets where id = $1", [other]);
});

test("the API roles cannot reach it; a function a migration grants to the service role can", async () => {
  await backend.db.query("select vault.create_secret('for the server', 'server_key')");
  for (const role of ["anon", "authenticated", "service_role"]) {
    await expect(
      backend.db.transaction(async (tx) => {
        await tx.query(`set local role ${role}`);
        await tx.query("select * from vault.decrypted_secrets");
      }),
    ).rejects.toThrow("permission denied for schema vault");
  }
  const server = await client(SECRET_KEY).rpc("read_secret", { secret_name: "server_key" });
  expect(server).toMatchObject({ error: null, data: "for the server" });
  const browser = await client(PUBLISHABLE_KEY).rpc("read_secret", { secret_name: "server_key" });
  expect(browser.error).toMatchObject({ code: "42501" });
  // the data API does not serve the vault schema
  const direct = await client(SECRET_KEY).schema("vault").from("decrypted_secrets").select();
  expect(direct.error).toMatchObject({ code: "PGRST106" });
});

test("[db.vault]: values and env() values are secrets after the start; an unset env() or an empty value is left out", async () => {
  const secrets = async () =>
    (
      await backend.db.query<{ name: string; decrypted_secret: string }>(
        "select name, decrypted_secret from vault.decrypted_secrets where name in ('from_env', 'literal', 'unset', 'empty') order by name",
      )
    ).rows;
  expect(await secrets()).toEqual([
    { name: "from_env", decrypted_secret: "from the environment" },
    { name: "literal", decrypted_secret: "plain value" },
  ]);
  // the next start updates them by name
  await applyVaultSecrets(backend.db, {
    literal: "changed",
    from_env: "env(VAULT_TEST_NEVER_SET)",
  });
  expect(await secrets()).toEqual([
    { name: "from_env", decrypted_secret: "from the environment" },
    { name: "literal", decrypted_secret: "changed" },
  ]);
});

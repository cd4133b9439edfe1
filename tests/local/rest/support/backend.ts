/**
 * The data API under test. Against the shared test backend (http://127.0.0.1:54329) when
 * REST_TEST_URL is set; otherwise an in-process one: PGlite with Supabase's roles and auth.uid(),
 * the migrations + tests/fixtures, createRestHandler and a real HS256 JWT check, reached through
 * supabase-js's fetch option (same code path as over a socket, minus the socket).
 */
import { PGlite } from "@electric-sql/pglite";
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { jwtVerify, SignJWT } from "jose";
import { applyMigrations } from "../../../../local/migrations.ts";
import { createRestHandler } from "../../../../local/rest/index.ts";

const SECRET = new TextEncoder().encode("super-secret-jwt-token-with-at-least-32-characters-long");
export const URL_BASE = "http://rest.test";

const BOOTSTRAP = `
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'anon') THEN CREATE ROLE anon NOLOGIN NOINHERIT; END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'authenticated') THEN CREATE ROLE authenticated NOLOGIN NOINHERIT; END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'service_role') THEN CREATE ROLE service_role NOLOGIN NOINHERIT BYPASSRLS; END IF;
END $$;
GRANT USAGE ON SCHEMA public TO anon, authenticated, service_role;
CREATE SCHEMA IF NOT EXISTS auth;
GRANT USAGE ON SCHEMA auth TO anon, authenticated, service_role;
CREATE OR REPLACE FUNCTION auth.uid() RETURNS uuid LANGUAGE sql STABLE AS $$
  SELECT coalesce(nullif(current_setting('request.jwt.claim.sub', true), ''),
                  (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub'))::uuid $$;
CREATE OR REPLACE FUNCTION auth.jwt() RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT coalesce(nullif(current_setting('request.jwt.claim', true), ''),
                  nullif(current_setting('request.jwt.claims', true), ''))::jsonb $$;
CREATE SCHEMA IF NOT EXISTS rest_extra;
GRANT USAGE ON SCHEMA rest_extra TO anon, authenticated, service_role;
CREATE TABLE IF NOT EXISTS rest_extra.things (id int PRIMARY KEY, name text);
INSERT INTO rest_extra.things VALUES (1, 'extra') ON CONFLICT DO NOTHING;
GRANT SELECT ON rest_extra.things TO anon, authenticated, service_role;
`;

export async function sign(claims: Record<string, unknown>, expiresIn = "1h"): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuedAt()
    .setExpirationTime(expiresIn)
    .sign(SECRET);
}

export interface Backend {
  db: PGlite;
  fetch: typeof fetch;
  anonKey: string;
  serviceKey: string;
  client: (token?: string) => SupabaseClient;
  user: () => Promise<{ id: string; token: string; client: SupabaseClient }>;
}

let started: Promise<Backend> | undefined;

export function backend(): Promise<Backend> {
  started ??= start();
  return started;
}

async function start(): Promise<Backend> {
  const db = new PGlite();
  await db.exec(BOOTSTRAP);
  await applyMigrations(db, {
    migrationsDir: new URL("../../../../supabase/migrations", import.meta.url).pathname,
    fixtures: [new URL("../../../fixtures/rest.sql", import.meta.url).pathname],
  });
  const anonKey = await sign({ role: "anon", iss: "supabase-demo" }, "10y");
  const serviceKey = await sign({ role: "service_role", iss: "supabase-demo" }, "10y");
  const handler = createRestHandler({
    db,
    schemas: ["public", "rest_extra"],
    authenticate: async (request) => {
      const bearer = request.headers.get("authorization")?.replace(/^Bearer\s+/i, "");
      const token = bearer || request.headers.get("apikey");
      if (!token) return { claims: { role: "anon" } };
      try {
        const { payload } = await jwtVerify(token, SECRET);
        return { claims: { ...payload, role: String(payload.role ?? "anon") } };
      } catch (e) {
        return {
          error:
            (e as { code?: string }).code === "ERR_JWT_EXPIRED"
              ? "JWT expired"
              : "JWT cryptographic operation failed",
        };
      }
    },
  });
  const fetchImpl = (async (input: RequestInfo | URL, init?: RequestInit) =>
    handler(new Request(input, init))) as typeof fetch;
  const client = (token?: string) =>
    createClient(URL_BASE, anonKey, {
      auth: { persistSession: false, autoRefreshToken: false },
      global: { fetch: fetchImpl, headers: token ? { Authorization: `Bearer ${token}` } : {} },
    });
  let n = 0;
  const user = async () => {
    const id = crypto.randomUUID();
    n += 1;
    const token = await sign({ sub: id, role: "authenticated", aud: "authenticated" });
    const c = client(token);
    const { error } = await c
      .from("rest_profiles")
      .insert({ id, username: `user_${n}_${id.slice(0, 8)}` });
    if (error) throw new Error(error.message);
    return { id, token, client: c };
  };
  return { db, fetch: fetchImpl, anonKey, serviceKey, client, user };
}

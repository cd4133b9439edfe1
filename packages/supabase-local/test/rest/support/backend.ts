/**
 * The data API under test. `backend()` is the shared test backend (http://127.0.0.1:5178, started
 * by the root globalSetup with tests/fixtures applied) when it answers; otherwise (running this
 * folder's config alone) an in-process one. `localBackend()` is always in-process, for tests that
 * need the database itself (fuzzing, DDL): PGlite with Supabase's roles and auth.uid(), the
 * project's migrations (the working directory's, as for the Supabase CLI) + test/fixtures/rest.sql,
 * createRestHandler and a real HS256 JWT check, reached through supabase-js's fetch option (same
 * code path as over a socket, minus the socket).
 */
import type { PGlite } from "@electric-sql/pglite";
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { jwtVerify, SignJWT } from "jose";
import { baseSnapshot, snapshotCacheDir } from "../../../src/database/snapshot.ts";
import { applyMigrations, KEYS, openDatabase } from "../../../src/index.ts";
import { createRestHandler } from "../../../src/rest/index.ts";

// The Supabase CLI's well-known local JWT secret and demo keys (public values, not secrets).
const SECRET = new TextEncoder().encode(KEYS.jwtSecret);
const DEMO_ANON_KEY = KEYS.anon;
const DEMO_SERVICE_KEY = KEYS.serviceRole;
const SHARED_URL = `http://127.0.0.1:${process.env.TEST_BACKEND_PORT ?? 5178}`;
const LOCAL_URL = "http://rest.test";

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
  /** base URL: requests go to `${url}/rest/v1/...` */
  url: string;
  /** the exposed schemas */
  schemas: string[];
  remote: boolean;
  fetch: typeof fetch;
  anonKey: string;
  serviceKey: string;
  client: (token?: string) => SupabaseClient;
  user: () => Promise<{ id: string; token: string; client: SupabaseClient }>;
}

export interface LocalBackend extends Backend {
  db: PGlite;
}

let started: Promise<Backend> | undefined;
let local: Promise<LocalBackend> | undefined;

export function backend(): Promise<Backend> {
  started ??= sharedIsUp().then((up) => (up ? shared() : localBackend()));
  return started;
}

export function localBackend(): Promise<LocalBackend> {
  local ??= start();
  return local;
}

async function sharedIsUp(): Promise<boolean> {
  if (process.env.REST_TEST_LOCAL) return false;
  try {
    const res = await fetch(`${SHARED_URL}/rest/v1/rest_labels?select=id&limit=1`, {
      headers: { apikey: DEMO_ANON_KEY },
      signal: AbortSignal.timeout(1000),
    });
    return res.status === 200;
  } catch {
    return false;
  }
}

function clients(url: string, fetchImpl: typeof fetch, anonKey: string) {
  const client = (token?: string) =>
    createClient(url, anonKey, {
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
  return { client, user };
}

async function shared(): Promise<Backend> {
  const fetchImpl = ((input: RequestInfo | URL, init?: RequestInit) =>
    fetch(input, init)) as typeof fetch;
  return {
    url: SHARED_URL,
    schemas: ["public", "graphql_public"],
    remote: true,
    fetch: fetchImpl,
    anonKey: DEMO_ANON_KEY,
    serviceKey: DEMO_SERVICE_KEY,
    ...clients(SHARED_URL, fetchImpl, DEMO_ANON_KEY),
  };
}

async function start(): Promise<LocalBackend> {
  // The app's migrations reference auth.users (profiles, sharing): the backend's own roles and
  // auth schema first, from the base snapshot (initdb, roles, auth) the test run's backend made.
  const db = await openDatabase(undefined, {
    snapshot: await baseSnapshot(snapshotCacheDir(process.cwd())),
  });
  await db.exec(BOOTSTRAP);
  await applyMigrations(db, {
    projectDir: process.cwd(),
    fixtures: [new URL("../../fixtures/rest.sql", import.meta.url).pathname],
  });
  const anonKey = await sign({ role: "anon", iss: "supabase-demo" }, "10y");
  const serviceKey = await sign({ role: "service_role", iss: "supabase-demo" }, "10y");
  const schemas = ["public", "rest_extra"];
  const handler = createRestHandler({
    db,
    schemas,
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
  return {
    url: LOCAL_URL,
    schemas,
    remote: false,
    db,
    fetch: fetchImpl,
    anonKey,
    serviceKey,
    ...clients(LOCAL_URL, fetchImpl, anonKey),
  };
}

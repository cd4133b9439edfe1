// A project that uses the CLI's asymmetric signing keys: `[auth] signing_keys_path` naming the JWK
// array `supabase gen signing-key` writes (here an RS256 key kept to verify, key_ops ["verify"],
// then the ES256 one that signs). Access tokens are signed with the one key that may sign (as the
// real Auth server, which refuses to start with none or several), the CLI's anon and service_role
// keys with the file's first, every public key is in the JWKS, and JWTs signed with any of them (or
// HS256 with the JWT secret) are accepted by Auth and the data API.
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@supabase/supabase-js";
import { decodeProtectedHeader, exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  PASSWORD,
  PUBLISHABLE_KEY,
  QUICK_PASSWORD_HASH_COST,
  randomEmail,
} from "../../../../tests/support/backend.ts";
import { createLocalBackend, type LocalBackend } from "../../src/backend.ts";
import { KEYS } from "../../src/project/keys.ts";
import { withBaseSnapshot } from "../support/base-snapshot.ts";

/** A private JWK as `supabase gen signing-key --algorithm <alg>` writes it. */
async function cliKey(alg: "RS256" | "ES256"): Promise<JWK> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  const { key_ops: _ops, ext: _ext, ...members } = await exportJWK(privateKey);
  return {
    kid: randomUUID(),
    use: "sig",
    key_ops: ["sign", "verify"],
    alg,
    ext: true,
    ...members,
  };
}

let backend: LocalBackend;
let rsa: JWK;
let ec: JWK;

beforeAll(async () => {
  [rsa, ec] = await Promise.all([cliKey("RS256"), cliKey("ES256")]);
  rsa.key_ops = ["verify"];
  const project = projectWith([rsa, ec]);
  await withBaseSnapshot(project);
  backend = await createLocalBackend({
    projectDir: project,
    host: false,
    config: { auth: { passwordHashCost: QUICK_PASSWORD_HASH_COST } },
  });
}, 60_000);

/** A project directory whose config.toml names a signing_keys.json holding `keys`. */
function projectWith(keys: JWK[]): string {
  const project = mkdtempSync(join(tmpdir(), "signing-keys-"));
  projects.push(project);
  mkdirSync(join(project, "supabase"));
  writeFileSync(join(project, "supabase", "signing_keys.json"), JSON.stringify(keys));
  writeFileSync(
    join(project, "supabase", "config.toml"),
    '[auth]\nsigning_keys_path = "./signing_keys.json"\n',
  );
  return project;
}

/** every project directory made here, removed at the end */
const projects: string[] = [];

afterAll(async () => {
  await backend?.close();
  for (const project of projects) rmSync(project, { recursive: true, force: true });
});

const viaBackend = (input: RequestInfo | URL, init?: RequestInit) =>
  backend.fetch(new Request(input, init));

function client(key = PUBLISHABLE_KEY) {
  return createClient(backend.url, key, {
    auth: { persistSession: false, autoRefreshToken: false },
    global: { fetch: viaBackend },
  });
}

async function signWith(jwk: JWK, claims: Record<string, unknown>, kid = jwk.kid) {
  const { importJWK } = await import("jose");
  const key = await importJWK({ ...jwk, key_ops: undefined }, jwk.alg);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: jwk.alg as string, kid, typ: "JWT" })
    .setIssuedAt()
    .setExpirationTime("1h")
    .sign(key);
}

async function raw(path: string, token: string, init: RequestInit = {}) {
  const response = await backend.fetch(
    new Request(`${backend.url}${path}`, {
      ...init,
      headers: {
        apikey: PUBLISHABLE_KEY,
        Authorization: `Bearer ${token}`,
        "X-Supabase-Api-Version": "2024-01-01",
      },
    }),
  );
  return { status: response.status, body: await response.json() };
}

describe("[auth] signing_keys_path", () => {
  it("publishes the public half of every key, and no private member", async () => {
    const response = await backend.fetch(
      new Request(`${backend.url}/auth/v1/.well-known/jwks.json`),
    );
    const { keys } = (await response.json()) as { keys: JWK[] };
    expect(keys.map((k) => [k.kid, k.alg, k.kty, k.use, k.key_ops])).toEqual([
      [rsa.kid, "RS256", "RSA", "sig", ["verify"]],
      [ec.kid, "ES256", "EC", "sig", ["verify"]],
    ]);
    for (const key of keys) {
      for (const member of ["d", "p", "q", "dp", "dq", "qi"])
        expect(key).not.toHaveProperty(member);
    }
    expect(keys[0]).toMatchObject({ n: rsa.n, e: rsa.e });
    expect(keys[1]).toMatchObject({ crv: "P-256", x: ec.x, y: ec.y });
  });

  it("signs access tokens with the key whose key_ops include sign (not the first), verified by getClaims()", async () => {
    const supabase = client();
    const email = randomEmail("ec");
    const { data, error } = await supabase.auth.signUp({ email, password: PASSWORD });
    expect(error).toBeNull();
    const token = data.session?.access_token as string;
    expect(decodeProtectedHeader(token)).toEqual({ alg: "ES256", kid: ec.kid, typ: "JWT" });
    const claims = await supabase.auth.getClaims(token);
    expect(claims.error).toBeNull();
    expect(claims.data?.claims).toMatchObject({ email, role: "authenticated" });
    expect(claims.data?.header).toMatchObject({ alg: "ES256", kid: ec.kid });
    // the data API accepts it too: past authentication, an unknown table is PGRST205
    const rest = await raw("/rest/v1/nothing_here", token);
    expect(rest.status).toBe(404);
    expect(rest.body.code).toBe("PGRST205");
  });

  it("makes the anon and service_role keys JWTs of the file's first key, as the CLI does (whatever its key_ops)", async () => {
    for (const [key, role] of [
      [backend.keys.anon, "anon"],
      [backend.keys.serviceRole, "service_role"],
    ] as const) {
      expect(decodeProtectedHeader(key)).toEqual({ alg: "RS256", kid: rsa.kid, typ: "JWT" });
      const payload = JSON.parse(Buffer.from(key.split(".")[1] as string, "base64url").toString());
      expect(payload).toMatchObject({ iss: "supabase-demo", role });
      expect(payload.exp).toBeGreaterThan(Date.now() / 1000 + 9 * 365 * 24 * 3600);
    }
    // the secret key maps to that service_role JWT: admin calls work
    const admin = client(KEYS.secret);
    const created = await admin.auth.admin.createUser({ email: randomEmail("admin") });
    expect(created.error).toBeNull();
    // and so does the service_role JWT itself, as the key of a client
    const listed = await client(backend.keys.serviceRole).auth.admin.listUsers();
    expect(listed.error).toBeNull();
    expect(listed.data.users.map((u) => u.id)).toContain(created.data.user?.id);
  });

  it("accepts a service_role JWT signed with any key of the file, or HS256 with the JWT secret", async () => {
    for (const jwk of [rsa, ec]) {
      const token = await signWith(jwk, { role: "service_role", iss: "supabase-demo" });
      expect((await raw("/auth/v1/admin/users?per_page=1", token)).status).toBe(200);
      expect((await raw("/rest/v1/nothing_here", token)).body.code).toBe("PGRST205");
    }
    // the legacy service_role key (HS256 over jwt_secret, no kid)
    expect((await raw("/auth/v1/admin/users?per_page=1", KEYS.serviceRole)).status).toBe(200);
    expect((await raw("/rest/v1/nothing_here", KEYS.serviceRole)).body.code).toBe("PGRST205");
  });

  it("refuses a token signed with a key it does not know, as Auth and PostgREST do", async () => {
    const stranger = await cliKey("ES256");
    const token = await signWith(stranger, { role: "service_role" });
    expect(await raw("/auth/v1/admin/users", token)).toEqual({
      status: 403,
      body: {
        code: "bad_jwt",
        message: `invalid JWT: unable to parse or verify signature, token is unverifiable: error while executing keyfunc: unrecognized JWT kid ${stranger.kid} for algorithm ES256`,
      },
    });
    expect(await raw("/rest/v1/nothing_here", token)).toEqual({
      status: 401,
      body: {
        code: "PGRST301",
        details: "No suitable key was found to decode the JWT",
        hint: null,
        message: "No suitable key or wrong key type",
      },
    });
    // a known kid, but another key's signature
    const forged = await signWith(stranger, { role: "service_role" }, ec.kid);
    expect(await raw("/auth/v1/admin/users", forged)).toEqual({
      status: 403,
      body: {
        code: "bad_jwt",
        message:
          "invalid JWT: unable to parse or verify signature, token signature is invalid: crypto/ecdsa: verification error",
      },
    });
    expect((await raw("/rest/v1/nothing_here", forged)).body).toMatchObject({
      code: "PGRST301",
      message: "JWT cryptographic operation failed",
    });
  });
});

describe("key files the real Auth server refuses to start with", () => {
  it("several keys that may sign (what `gen signing-key --append` writes): no start, the file named", async () => {
    const [one, two] = await Promise.all([cliKey("ES256"), cliKey("RS256")]);
    const project = projectWith([one, two]);
    const file = join(project, "supabase", "signing_keys.json");
    await expect(createLocalBackend({ projectDir: project, host: false })).rejects.toThrow(
      `Invalid signing keys in ${file}: multiple signing keys detected, only 1 signing key is supported`,
    );
  });

  it("no key that may sign (key_ops without sign, or none at all)", async () => {
    const verifyOnly = { ...(await cliKey("ES256")), key_ops: ["verify"] };
    const { key_ops: _ops, ...noOps } = await cliKey("ES256");
    const project = projectWith([verifyOnly, noOps]);
    await expect(createLocalBackend({ projectDir: project, host: false })).rejects.toThrow(
      `Invalid signing keys in ${join(project, "supabase", "signing_keys.json")}: no signing key detected`,
    );
  });
});

import { randomUUID } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from "jose";
import { ConfigError } from "./config.ts";

/** The Supabase CLI's well-known local secrets (supabase/cli pkg/config/apikeys.go). */
export const JWT_SECRET = "super-secret-jwt-token-with-at-least-32-characters-long";
export const PUBLISHABLE_KEY = "sb_publishable_ACJWlzQHlZjBrEguHvfOxg_3BJgxAaH";
export const SECRET_KEY = "sb_secret_N7UND0UgjKTVK-Uodkm0Hg_xSvEMPvz";
/** HS256 over JWT_SECRET, {"iss":"supabase-demo","role":"anon","exp":1983812996}. */
export const ANON_KEY =
  "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6ImFub24iLCJleHAiOjE5ODM4MTI5OTZ9.CRXP1A7WOeoJeXxjNni43kdQwgnWNReilDMblYTn_I0";
/** HS256 over JWT_SECRET, {"iss":"supabase-demo","role":"service_role","exp":1983812996}. */
export const SERVICE_ROLE_KEY =
  "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6InNlcnZpY2Vfcm9sZSIsImV4cCI6MTk4MzgxMjk5Nn0.EGIM96RAZx35lJzdJsyH-qQwv8Hdp7fsn3W0YpN81IU";

export interface Keys {
  publishable: string;
  secret: string;
  anon: string;
  serviceRole: string;
  jwtSecret: string;
  /** With `signing_keys_path`: the file's key that signs the anon and service_role keys. Any such
   * key it signed is one of the project's (the CLI's `status` signs them afresh at every call). */
  signer?: SigningKey;
}

export const KEYS: Keys = {
  publishable: PUBLISHABLE_KEY,
  secret: SECRET_KEY,
  anon: ANON_KEY,
  serviceRole: SERVICE_ROLE_KEY,
  jwtSecret: JWT_SECRET,
};

/** An asymmetric key of the JWKS: signs access tokens (the current one) or verifies them. */
export interface SigningKey {
  kid: string;
  alg: "ES256" | "RS256";
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  /** What /.well-known/jwks.json publishes: the public members, `use: sig`, `key_ops: [verify]`. */
  publicJwk: JWK;
}

/** The keys Auth signs and verifies with: `current` signs new access tokens, `all` verify. */
export interface SigningKeys {
  current: SigningKey;
  all: SigningKey[];
}

/**
 * The project's signing keys: the JWK array `[auth] signing_keys_path` names (what `supabase gen
 * signing-key` writes: RS256 or ES256 private JWKs), or else an ES256 key generated once into
 * `dataDir/signing-key.json` (a fresh one per run in memory). As the real Auth server validates
 * GOTRUE_JWT_KEYS, exactly one key of the file may sign (`key_ops` with `sign`): it signs access
 * tokens; the others only verify. None, or several (`gen signing-key --append` writes every key
 * with `sign`), is refused, as Auth refuses to start.
 */
export async function loadSigningKeys(options: {
  dataDir?: string;
  path?: string;
}): Promise<SigningKeys> {
  const jwks = options.path
    ? await readKeyFile(options.path)
    : [await generatedKey(options.dataDir)];
  const all = await Promise.all(jwks.map(importKey));
  if (!options.path) return { current: all[0] as SigningKey, all };
  const signing = jwks.flatMap((jwk, i) => (jwk.key_ops?.includes("sign") ? [i] : []));
  if (signing.length !== 1) {
    const problem =
      signing.length === 0
        ? "no signing key detected"
        : "multiple signing keys detected, only 1 signing key is supported";
    throw new ConfigError(
      `Invalid signing keys in ${options.path}: ${problem} (Auth signs with the one key whose key_ops include "sign"; give the others key_ops ["verify"])`,
    );
  }
  return { current: all[signing[0] as number] as SigningKey, all };
}

/** The first key of the file, which the CLI signs the anon and service_role keys with (whatever
 * its key_ops). */
export async function firstFileKey(path: string): Promise<SigningKey> {
  const [first] = await readKeyFile(path);
  return importKey(first as JWK);
}

async function readKeyFile(path: string): Promise<JWK[]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new ConfigError(`failed to read signing keys: ${(error as Error).message}`);
  }
  let jwks: unknown;
  try {
    jwks = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`failed to decode signing keys: ${path}: ${(error as Error).message}`);
  }
  if (!Array.isArray(jwks) || jwks.length === 0 || !jwks.every((k) => k && typeof k === "object")) {
    throw new ConfigError(`failed to decode signing keys: ${path} must hold a JSON array of JWKs`);
  }
  return jwks as JWK[];
}

async function generatedKey(dataDir: string | undefined): Promise<JWK> {
  const file = dataDir ? join(dataDir, "signing-key.json") : undefined;
  if (file) {
    try {
      return { ext: true, ...(JSON.parse(await readFile(file, "utf8")) as JWK) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  const pair = await generateKeyPair("ES256", { extractable: true });
  const exported = await exportJWK(pair.privateKey);
  const jwk = { ...exported, kid: randomUUID(), alg: "ES256", use: "sig", ext: true };
  if (dataDir && file) {
    await mkdir(dataDir, { recursive: true });
    await writeFile(file, `${JSON.stringify(jwk, null, 2)}\n`, { mode: 0o600 });
  }
  return jwk;
}

const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth"];

async function importKey(jwk: JWK): Promise<SigningKey> {
  const alg = (jwk.alg ?? (jwk.kty === "RSA" ? "RS256" : "ES256")) as SigningKey["alg"];
  if (alg !== "ES256" && alg !== "RS256") {
    throw new Error(`unsupported signing key algorithm ${alg} (the CLI writes RS256 or ES256)`);
  }
  const publicPart = Object.fromEntries(
    Object.entries(jwk).filter(([name]) => !PRIVATE_MEMBERS.includes(name)),
  ) as JWK;
  const publicJwk: JWK = { ...publicPart, alg, use: "sig", key_ops: ["verify"] };
  return {
    kid: jwk.kid ?? "",
    alg,
    privateKey: (await importJWK({ ...jwk, key_ops: undefined }, alg)) as CryptoKey,
    publicKey: (await importJWK({ ...publicPart, key_ops: undefined }, alg)) as CryptoKey,
    publicJwk,
  };
}

/**
 * The API keys of a project: the CLI's well-known ones, except that with `signing_keys_path` the
 * CLI signs the anon and service_role JWTs with the first key of the file (kid in the header,
 * valid for ten years) instead of HS256 over the JWT secret (pkg/config/apikeys.go).
 */
export async function projectKeys(fromFile: SigningKey | undefined): Promise<Keys> {
  if (!fromFile) return KEYS;
  const exp = Math.floor(Date.now() / 1000) + 10 * 365 * 24 * 3600;
  const sign = (role: string) =>
    new SignJWT({ iss: "supabase-demo", role, exp })
      .setProtectedHeader({ alg: fromFile.alg, kid: fromFile.kid, typ: "JWT" })
      .sign(fromFile.privateKey);
  return {
    ...KEYS,
    anon: await sign("anon"),
    serviceRole: await sign("service_role"),
    signer: fromFile,
  };
}

/**
 * The key Storage signs its URLs with (signed URLs, signed upload URLs): 32 random bytes of this
 * install's own, generated once into `dataDir/storage-url-key` (a fresh one per run in memory),
 * removed by a reset with the rest of the data. Never the JWT secret: the CLI's is public, and
 * any page could then mint a URL to any object.
 */
export async function loadStorageUrlKey(dataDir: string | undefined): Promise<Uint8Array> {
  const file = dataDir ? join(dataDir, "storage-url-key") : undefined;
  if (file) {
    try {
      const saved = Buffer.from((await readFile(file, "utf8")).trim(), "base64url");
      if (saved.length >= 32) return new Uint8Array(saved);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  const key = crypto.getRandomValues(new Uint8Array(32));
  if (dataDir && file) {
    await mkdir(dataDir, { recursive: true });
    await writeFile(file, `${Buffer.from(key).toString("base64url")}\n`, { mode: 0o600 });
  }
  return key;
}

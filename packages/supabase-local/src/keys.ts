import { randomUUID } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { exportJWK, generateKeyPair, importJWK, type JWK } from "jose";

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
}

export const KEYS: Keys = {
  publishable: PUBLISHABLE_KEY,
  secret: SECRET_KEY,
  anon: ANON_KEY,
  serviceRole: SERVICE_ROLE_KEY,
  jwtSecret: JWT_SECRET,
};

/** The asymmetric key user access tokens are signed with (ES256), and its public JWKS. */
export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  publicJwk: JWK;
}

/** Loads the ES256 key from `dataDir/signing-key.json`, generating it once; in memory without a dir. */
export async function loadSigningKey(dataDir?: string): Promise<SigningKey> {
  const file = dataDir ? join(dataDir, "signing-key.json") : undefined;
  let jwk: JWK | undefined;
  if (file) {
    try {
      jwk = JSON.parse(await readFile(file, "utf8")) as JWK;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  if (!jwk) {
    const pair = await generateKeyPair("ES256", { extractable: true });
    jwk = { ...(await exportJWK(pair.privateKey)), kid: randomUUID(), alg: "ES256", use: "sig" };
    if (dataDir && file) {
      await mkdir(dataDir, { recursive: true });
      await writeFile(file, `${JSON.stringify(jwk, null, 2)}\n`, { mode: 0o600 });
    }
  }
  const { d: _d, ...publicPart } = jwk;
  const publicJwk: JWK = { ...publicPart, key_ops: ["verify"], ext: true };
  return {
    kid: jwk.kid as string,
    privateKey: (await importJWK(jwk, "ES256")) as CryptoKey,
    publicKey: (await importJWK(publicPart, "ES256")) as CryptoKey,
    publicJwk,
  };
}

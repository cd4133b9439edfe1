// POST /admin/users `password_hash` with Auth's other formats: argon2 (argon2i, argon2id) and
// Firebase scrypt. What Auth v2.189.0's parsers take is stored as it is and signs in with its
// password (and only with it); what they refuse is a 400 validation_failed with the reason.
// Hashes are made here, independently of the backend where it can be (Firebase's scrypt with
// node:crypto, argon2 with hash-wasm), and fixed vectors made elsewhere (Firebase's sample,
// Auth's own test vectors, made with Go) must verify too. On a second, in-memory backend so the
// tests can look at auth.users.
import { createCipheriv, randomBytes, scryptSync } from "node:crypto";
import { argon2i, argon2id } from "hash-wasm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomEmail, SECRET_KEY } from "../../../../tests/support/backend.ts";
import { type MemoryBackend, memoryBackend } from "../../../../tests/support/memory-backend.ts";

let local: MemoryBackend;

beforeAll(async () => {
  local = await memoryBackend({});
}, 60_000);
afterAll(() => local?.close());

/** POST /admin/users with a password_hash (supabase-js has no field for it). */
async function importUser(password_hash: string) {
  const email = randomEmail("imported");
  const response = await local.fetch(`${local.backend.url}/auth/v1/admin/users`, {
    method: "POST",
    headers: {
      apikey: SECRET_KEY,
      "Content-Type": "application/json",
      "X-Supabase-Api-Version": "2024-01-01",
    },
    body: JSON.stringify({ email, email_confirm: true, password_hash }),
  });
  return { email, status: response.status, body: await response.json() };
}

async function signIn(email: string, password: string) {
  return local.client().auth.signInWithPassword({ email, password });
}

/** Imports the hash, then signs in with its password (a session) and with another (refused). */
async function expectSignsIn(hash: string, password: string) {
  const imported = await importUser(hash);
  expect(imported.status, JSON.stringify(imported.body)).toBe(200);
  const right = await signIn(imported.email, password);
  expect(right.error).toBeNull();
  expect(right.data.session?.access_token).toBeTruthy();
  expect(right.data.user?.email).toBe(imported.email);
  const wrong = await signIn(imported.email, `${password}1`);
  expect(wrong.error).toMatchObject({
    status: 400,
    code: "invalid_credentials",
    message: "Invalid login credentials",
  });
  return imported.email;
}

async function storedHash(email: string): Promise<string | undefined> {
  const { rows } = await local.backend.db.query<{ hash: string }>(
    "select encrypted_password as hash from auth.users where email = $1",
    [email],
  );
  return rows[0]?.hash;
}

/** Firebase's scrypt, computed here: the signer key, AES-256-CTR (zero IV) encrypted with
 * scrypt(password, salt + salt separator, N = 2^n, r, p) as the key. */
function firebaseScrypt(
  password: string,
  params: { n: number; r: number; p: number; salt: Buffer; separator: Buffer; signerKey: Buffer },
): string {
  const { n, r, p, salt, separator, signerKey } = params;
  const key = scryptSync(password, Buffer.concat([salt, separator]), 32, {
    N: 2 ** n,
    r,
    p,
    maxmem: 256 * 1024 * 1024,
  });
  const cipher = createCipheriv("aes-256-ctr", key, Buffer.alloc(16));
  const hash = Buffer.concat([cipher.update(signerKey), cipher.final()]);
  const b64 = (bytes: Buffer) => bytes.toString("base64");
  return `$fbscrypt$v=1,n=${n},r=${r},p=${p},ss=${b64(separator)},sk=${b64(signerKey)}$${b64(salt)}$${b64(hash)}`;
}

describe("imported argon2 hashes", () => {
  it("an argon2id hash signs in with its password and with no other", async () => {
    const password = "argon2id-password-42";
    const hash = await argon2id({
      password,
      salt: randomBytes(16),
      iterations: 2,
      parallelism: 2,
      memorySize: 1024,
      hashLength: 32,
      outputType: "encoded",
    });
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=1024,t=2,p=2\$/);
    await expectSignsIn(hash, password);
  });

  it("an argon2i hash signs in with its password and with no other", async () => {
    const password = "argon2i-password-42";
    const hash = await argon2i({
      password,
      salt: randomBytes(16),
      iterations: 3,
      parallelism: 1,
      memorySize: 512,
      hashLength: 24,
      outputType: "encoded",
    });
    expect(hash).toMatch(/^\$argon2i\$v=19\$m=512,t=3,p=1\$/);
    await expectSignsIn(hash, password);
  });

  it("Auth's own argon2 test vectors (made with Go, password `test`) sign in", async () => {
    await expectSignsIn(
      "$argon2i$v=19$m=16,t=2,p=1$bGJRWThNOHJJTVBSdHl2dQ$NfEnUOuUpb7F2fQkgFUG4g",
      "test",
    );
    await expectSignsIn(
      "$argon2id$v=19$m=32,t=3,p=2$SFVpOWJ0eXhjRzVkdGN1RQ$RXnb8rh7LaDcn07xsssqqulZYXOM/EUCEFMVcAcyYVk",
      "test",
    );
  });
});

describe("imported Firebase scrypt hashes", () => {
  it("a hash computed with node:crypto signs in with its password and with no other", async () => {
    const password = "firebase-password-42";
    const hash = firebaseScrypt(password, {
      n: 14,
      r: 8,
      p: 1,
      salt: randomBytes(10),
      separator: Buffer.from([7]),
      signerKey: randomBytes(64),
    });
    await expectSignsIn(hash, password);
  });

  it("other parameters, an empty salt separator and signer key (absent) too", async () => {
    const password = "firebase-password-43";
    const hash = firebaseScrypt(password, {
      n: 10,
      r: 4,
      p: 2,
      salt: randomBytes(16),
      separator: Buffer.from([1, 2, 3]),
      signerKey: randomBytes(32),
    });
    await expectSignsIn(hash, password);
    // ss and sk may be left out: each is then empty, and so is the hash (an empty key encrypted)
    const bare = `$fbscrypt$v=1,n=4,r=1,p=1$${randomBytes(8).toString("base64")}$AA==`;
    const imported = await importUser(bare);
    expect(imported.status, JSON.stringify(imported.body)).toBe(200);
    expect((await signIn(imported.email, password)).error).toMatchObject({
      code: "invalid_credentials",
    });
  });

  it("Firebase's sample (firebase/scrypt README) and Auth's own vector sign in", async () => {
    // the README's project parameters (signer key, separator Bw==, rounds 8, mem_cost 14) and its
    // exported user1@test.com (salt, hash) with the password user1password
    await expectSignsIn(
      "$fbscrypt$v=1,n=14,r=8,p=1,ss=Bw==,sk=jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==$42xEC+ixf3L2lw==$lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==",
      "user1password",
    );
    // internal/crypto/password_test.go, password mytestpassword
    await expectSignsIn(
      "$fbscrypt$v=1,n=14,r=8,p=1,ss=Bw==,sk=ou9tdYTGyYm8kuR6Dt0Bp0kDuAYoXrK16mbZO4yGwAn3oLspjnN0/c41v8xZnO1n14J3MjKj1b2g6AUCAlFwMw==$C0sHCg9ek77hsg==$zKVTMvnWVw5BBOZNUdnsalx4c4c7y/w7IS5p6Ut2+CfEFFlz37J9huyQfov4iizN8dbjvEJlM5tQaJP84+hfTw==",
      "mytestpassword",
    );
  });
});

describe("after the import", () => {
  it("the hash is kept as it is after a sign-in; PUT /user compares with it too", async () => {
    const password = "kept-password-42";
    const argon2 = await argon2id({
      password,
      salt: randomBytes(16),
      iterations: 1,
      parallelism: 1,
      memorySize: 256,
      hashLength: 32,
      outputType: "encoded",
    });
    const firebase = firebaseScrypt(password, {
      n: 12,
      r: 8,
      p: 1,
      salt: randomBytes(12),
      separator: Buffer.from([7]),
      signerKey: randomBytes(48),
    });
    for (const hash of [argon2, firebase]) {
      const email = await expectSignsIn(hash, password);
      expect(await storedHash(email)).toBe(hash);

      const client = local.client();
      expect((await client.auth.signInWithPassword({ email, password })).error).toBeNull();
      const same = await client.auth.updateUser({ password });
      expect(same.error).toMatchObject({ status: 422, code: "same_password" });
      expect(await storedHash(email)).toBe(hash);
      // a new password replaces it with a bcrypt hash
      const changed = await client.auth.updateUser({ password: "a-new-password-42" });
      expect(changed.error).toBeNull();
      expect(await storedHash(email)).toMatch(/^\$2a\$/);
      expect((await signIn(email, "a-new-password-42")).error).toBeNull();
    }
  });
});

describe("what Auth's parsers decide at import", () => {
  const salt = "bGJRWThNOHJJTVBSdHl2dQ";
  const key = "NfEnUOuUpb7F2fQkgFUG4g";
  const ss = "Bw==";
  const sk =
    "ou9tdYTGyYm8kuR6Dt0Bp0kDuAYoXrK16mbZO4yGwAn3oLspjnN0/c41v8xZnO1n14J3MjKj1b2g6AUCAlFwMw==";
  const fbSalt = "C0sHCg9ek77hsg==";
  const fbKey =
    "zKVTMvnWVw5BBOZNUdnsalx4c4c7y/w7IS5p6Ut2+CfEFFlz37J9huyQfov4iizN8dbjvEJlM5tQaJP84+hfTw==";
  const fb = (params: string, tail = `${fbSalt}$${fbKey}`) => `$fbscrypt$${params}$${tail}`;

  it.each([
    ["argon2, version 16", `$argon2id$v=16$m=16,t=2,p=1$${salt}$${key}`, "version 16"],
    ["argon2, no version", `$argon2id$m=16,t=2,p=1$${salt}$${key}`, "PHC format"],
    ["argon2d", `$argon2d$v=19$m=16,t=2,p=1$${salt}$${key}`, "argon2d is not supported"],
    ["argon2, keyid", `$argon2id$v=19$m=16,t=2,p=1,keyid=abc$${salt}$${key}`, "keyid"],
    ["argon2, data", `$argon2id$v=19$m=16,t=2,p=1,data=abc$${salt}$${key}`, "data"],
    ["argon2, m over 1 GiB", `$argon2id$v=19$m=1048577,t=2,p=1$${salt}$${key}`, "over 1 GiB"],
    ["argon2, m over 32 bits", `$argon2id$v=19$m=4294967297,t=2,p=1$${salt}$${key}`, "32-bit"],
    ["argon2, t over 20", `$argon2id$v=19$m=16,t=21,p=1$${salt}$${key}`, "over 20"],
    ["argon2, p over 16", `$argon2id$v=19$m=16,t=2,p=17$${salt}$${key}`, "over 16"],
    ["argon2, p over 8 bits", `$argon2id$v=19$m=16,t=2,p=256$${salt}$${key}`, "8-bit"],
    ["argon2, empty salt", `$argon2id$v=19$m=16,t=2,p=1$$${key}`, "salt is empty"],
    ["argon2, empty hash", `$argon2id$v=19$m=16,t=2,p=1$${salt}$`, "hash is empty"],
    ["argon2, salt not base64", `$argon2id$v=19$m=16,t=2,p=1$!!!$${key}`, "salt is not base64"],
    ["argon2, hash not base64", `$argon2id$v=19$m=16,t=2,p=1$${salt}$!!!`, "hash is not base64"],
    ["argon2, padded base64", `$argon2id$v=19$m=16,t=2,p=1$${salt}$${key}==`, "not base64"],
    ["argon2, URL-safe base64", `$argon2id$v=19$m=16,t=2,p=1$${salt}$ab_-`, "not base64"],
    ["argon2, unknown", "$argon2x$v=19$m=16,t=2,p=1$YWJjZGVmZ2g$YWJjZA", "PHC format"],
    ["fbscrypt, version 2", fb(`v=2,n=14,r=8,p=1,ss=${ss},sk=${sk}`), "version 2"],
    ["fbscrypt, n of 0", fb(`v=1,n=0,r=8,p=1,ss=${ss},sk=${sk}`), "n parameter is 0"],
    ["fbscrypt, n over 32 bits", fb(`v=1,n=4294967297,r=8,p=1,ss=${ss},sk=${sk}`), "32-bit"],
    ["fbscrypt, r of 0", fb(`v=1,n=14,r=0,p=1,ss=${ss},sk=${sk}`), "r parameter is 0"],
    [
      "fbscrypt, r over 64 bits",
      fb(`v=1,n=14,r=18446744073709551617,p=1,ss=${ss},sk=${sk}`),
      "64-bit",
    ],
    ["fbscrypt, p of 0", fb(`v=1,n=14,r=8,p=0,ss=${ss},sk=${sk}`), "p parameter is 0"],
    ["fbscrypt, p over 8 bits", fb(`v=1,n=14,r=8,p=256,ss=${ss},sk=${sk}`), "8-bit"],
    [
      "fbscrypt, hash not base64",
      fb(`v=1,n=14,r=8,p=1,ss=${ss},sk=${sk}`, `${fbSalt}$!!!`),
      "the Firebase scrypt hash is not base64",
    ],
    ["fbscrypt, salt not base64", fb(`v=1,n=14,r=8,p=1,ss=${ss},sk=${sk}`, `!!!$${fbKey}`), "salt"],
    ["fbscrypt, signer key not base64", fb(`v=1,n=14,r=8,p=1,ss=${ss},sk=!!!`), "signer key"],
    ["fbscrypt, separator not base64", fb(`v=1,n=14,r=8,p=1,ss=!!!,sk=${sk}`), "separator"],
    ["fbscrypt, unpadded base64", fb(`v=1,n=14,r=8,p=1,ss=Bw,sk=${sk}`), "separator"],
    [
      "fbscrypt, no salt",
      `$fbscrypt$v=1,n=14,r=8,p=1,ss=${ss}$$${fbKey}`,
      "not a Firebase scrypt hash",
    ],
    ["too long for auth.users", `$argon2id$v=19$m=16,t=2,p=1$${salt}$${"A".repeat(300)}`, "255"],
  ])("refuses %s", async (_, hash, reason) => {
    const { status, body } = await importUser(hash);
    expect(status).toBe(400);
    expect(body.code).toBe("validation_failed");
    expect(body.message).toMatch(/^Invalid password_hash: /);
    expect(body.message).toContain(reason);
  });

  it("takes what they take, and where no key can be computed here, no password matches", async () => {
    // Auth's limits themselves are taken (not signed in with: up to a minute of argon2)
    for (const hash of [
      `$argon2id$v=19$m=1048576,t=20,p=16$${salt}$${key}`,
      `$argon2i$v=19$m=0016,t=02,p=01$${salt}$${key}`,
    ]) {
      expect((await importUser(hash)).status, hash).toBe(200);
    }
    // hashes Auth takes but could not (or this backend cannot) compute: a wrong password's answer
    for (const hash of [
      "$argon2id$v=19$m=65536,t=1,p=1$YWJj$YWJj", // salt under 8 bytes, hash under 4
      `$argon2id$v=19$m=16,t=0,p=1$${salt}$${key}`, // t of 0
      `$argon2id$v=19$m=16,t=2,p=0$${salt}$${key}`, // p of 0
      `$argon2id$v=19$m=4,t=2,p=1$${salt}$${key}`, // m under 8·p
      fb(`v=1,n=40,r=8,p=1,ss=${ss},sk=${sk}`), // 2^40·1 KiB of memory
      fb(`v=1,n=4294967295,r=8,p=1,ss=${ss},sk=${sk}`),
      fb(`v=1,n=1,r=18446744073709551615,p=1,ss=${ss},sk=${sk}`),
      fb(`v=1,n=20,r=8,p=255,ss=${ss},sk=${sk}`),
      fb(`v=1,n=16,r=1,p=1,ss=${ss},sk=${sk}`), // N of 2^(16·r): OpenSSL refuses it
    ]) {
      const imported = await importUser(hash);
      expect(imported.status, hash).toBe(200);
      const started = performance.now();
      expect((await signIn(imported.email, "mytestpassword")).error, hash).toMatchObject({
        status: 400,
        code: "invalid_credentials",
      });
      expect(performance.now() - started, hash).toBeLessThan(5_000);
    }
  });
});

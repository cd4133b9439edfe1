// Web3 sign-in ([auth.web3.solana], [auth.web3.ethereum]) through the real supabase-js
// (signInWithWeb3, with wallet objects that sign as Phantom and MetaMask do), and the messages
// Auth refuses, with its words.
import { generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { base58 } from "@scure/base";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MemoryBackend, memoryBackend } from "../../../../tests/support/memory-backend.ts";

let backend: MemoryBackend;
/** Only Solana on, and a rate limit that refills slowly. */
let solanaOnly: MemoryBackend;

beforeAll(async () => {
  backend = await memoryBackend({
    auth: {
      web3: { solana: { enabled: true }, ethereum: { enabled: true } },
      additionalRedirectUrls: ["https://app.example.com/**", "https://other.example.com/**"],
      rateLimit: { web3: 1_000_000 },
    },
  });
  solanaOnly = await memoryBackend({
    auth: { web3: { solana: { enabled: true } }, rateLimit: { web3: 1 } },
  });
}, 60_000);
afterAll(async () => {
  await Promise.all([backend?.close(), solanaOnly?.close()]);
});

/** A Solana wallet: an ed25519 key, its address in base58. */
function solanaWallet() {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const raw = Buffer.from(publicKey.export({ format: "jwk" }).x as string, "base64url");
  const address = base58.encode(raw);
  return {
    address,
    raw,
    privateKey,
    /** The wallet interface supabase-js asks for (signMessage, publicKey.toBase58). */
    api: {
      publicKey: { toBase58: () => address },
      signMessage: async (bytes: Uint8Array) => new Uint8Array(sign(null, bytes, privateKey)),
    },
  };
}

/** An Ethereum wallet: a secp256k1 key, its address; personal_sign as wallets answer it. */
function ethereumWallet() {
  const secret = secp256k1.utils.randomSecretKey();
  const point = secp256k1.getPublicKey(secret, false);
  const address = `0x${Buffer.from(keccak_256(point.subarray(1)).subarray(12)).toString("hex")}`;
  const personalSign = (message: string) => {
    const text = Buffer.from(message, "utf8");
    const digest = keccak_256(
      Buffer.concat([Buffer.from(`\x19Ethereum Signed Message:\n${text.length}`), text]),
    );
    const recovered = secp256k1.sign(digest, secret, { prehash: false, format: "recovered" });
    // r, s, then v as 27 or 28
    return `0x${Buffer.from([...recovered.subarray(1), (recovered[0] as number) + 27]).toString("hex")}`;
  };
  return {
    address,
    personalSign,
    api: {
      request: async ({ method, params }: { method: string; params?: unknown[] }) => {
        if (method === "eth_requestAccounts") return [address];
        if (method === "eth_chainId") return "0x1";
        if (method === "personal_sign") {
          return personalSign(Buffer.from((params?.[0] as string).slice(2), "hex").toString());
        }
        throw new Error(`no ${method}`);
      },
    },
  };
}

/** A Sign in with Solana message, with its fields as given (undefined leaves one out). */
function solanaMessage(
  address: string,
  fields: {
    domain?: string;
    uri?: string;
    issuedAt?: Date;
    expirationTime?: Date;
    notBefore?: Date;
    version?: string;
  } = {},
): string {
  const issuedAt = fields.issuedAt ?? new Date();
  return [
    `${fields.domain ?? "localhost:5173"} wants you to sign in with your Solana account:`,
    address,
    "",
    "Sign in to Edge Notes",
    "",
    `Version: ${fields.version ?? "1"}`,
    `URI: ${fields.uri ?? "http://localhost:5173/sign-in"}`,
    `Issued At: ${issuedAt.toISOString()}`,
    ...(fields.notBefore ? [`Not Before: ${fields.notBefore.toISOString()}`] : []),
    ...(fields.expirationTime ? [`Expiration Time: ${fields.expirationTime.toISOString()}`] : []),
  ].join("\n");
}

/** A Sign in with Ethereum message for localhost, on chain 1, with `extra` lines at its end. */
function ethereumMessage(address: string, issuedAt = new Date(), extra: string[] = []): string {
  return [
    "localhost:5173 wants you to sign in with your Ethereum account:",
    address,
    "",
    "URI: http://localhost:5173/",
    "Version: 1",
    "Chain ID: 1",
    `Issued At: ${issuedAt.toISOString()}`,
    ...extra,
  ].join("\n");
}

const signed = (message: string, key: KeyObject) =>
  sign(null, Buffer.from(message), key).toString("base64url");

/** The grant of a Solana message with `fields`, signed by `wallet`. */
const signedBy =
  (wallet: ReturnType<typeof solanaWallet>) => (fields: Parameters<typeof solanaMessage>[1]) => {
    const message = solanaMessage(wallet.address, fields);
    return grant(backend, {
      chain: "solana",
      message,
      signature: signed(message, wallet.privateKey),
    });
  };

/** POST /token?grant_type=web3 as supabase-js sends it: the error body and status. */
async function grant(target: MemoryBackend, body: Record<string, unknown>) {
  const response = await target.fetch(`${target.backend.url}/auth/v1/token?grant_type=web3`, {
    method: "POST",
    headers: {
      apikey: target.backend.keys.publishable,
      "content-type": "application/json",
      "x-supabase-api-version": "2024-01-01",
    },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Auth's OAuth-shaped refusal (its error and description, whatever the API version). */
const refusal = (description: string) => ({
  status: 400,
  body: { error: "invalid_grant", error_description: description },
});
const invalid = (message: string) => ({
  status: 400,
  body: { code: "validation_failed", message },
});

describe("signInWithWeb3", () => {
  it("signs a Solana wallet in, as the same account each time, with the message's claims", async () => {
    const wallet = solanaWallet();
    const client = backend.client();
    const signIn = () =>
      client.auth.signInWithWeb3({
        chain: "solana",
        wallet: wallet.api,
        statement: "Sign in to Edge Notes",
        options: { url: "http://localhost:5173/sign-in" },
      });
    const first = await signIn();
    expect(first.error).toBeNull();
    const user = first.data.user;
    expect(user).toMatchObject({
      app_metadata: { provider: "web3", providers: ["web3"] },
      user_metadata: {
        sub: `web3:solana:${wallet.address}`,
        custom_claims: {
          address: wallet.address,
          chain: "solana",
          domain: "localhost:5173",
          statement: "Sign in to Edge Notes",
          network: "",
        },
      },
      is_anonymous: false,
    });
    expect(user?.email ?? "").toBe("");
    expect(user?.identities).toMatchObject([
      { provider: "web3", id: `web3:solana:${wallet.address}` },
    ]);
    const claims = decodeJwt(first.data.session?.access_token ?? "");
    expect(claims).toMatchObject({ sub: user?.id, aal: "aal1", role: "authenticated" });
    expect((claims.amr as { method: string }[]).map((a) => a.method)).toEqual(["web3"]);

    const again = await signIn();
    expect(again.error).toBeNull();
    expect(again.data.user?.id).toBe(user?.id);
    // another wallet is another account
    const other = await backend.client().auth.signInWithWeb3({
      chain: "solana",
      wallet: solanaWallet().api,
      options: { url: "http://localhost:5173/sign-in" },
    });
    expect(other.error).toBeNull();
    expect(other.data.user?.id).not.toBe(user?.id);
  });

  it("signs an Ethereum wallet in with an EIP-4361 message supabase-js builds", async () => {
    const wallet = ethereumWallet();
    const { data, error } = await backend.client().auth.signInWithWeb3({
      chain: "ethereum",
      // EIP-1193's request() is typed per method; this one answers the three supabase-js calls
      wallet: wallet.api as never,
      options: { url: "https://app.example.com/sign-in" },
    });
    expect(error).toBeNull();
    const sub = data.user?.user_metadata.sub as string;
    // the address as the message carries it (checksummed by supabase-js)
    expect(sub.toLowerCase()).toBe(`web3:ethereum:${wallet.address}`);
    expect(data.user?.user_metadata.custom_claims).toMatchObject({
      chain: "ethereum",
      network: "1",
      domain: "app.example.com",
      statement: null,
    });
  });

  it("accepts a Solana signature of the off-chain message envelope, as a Ledger signs", async () => {
    const wallet = solanaWallet();
    const message = solanaMessage(wallet.address);
    const text = Buffer.from(message);
    const domain = Buffer.alloc(32);
    domain.write("localhost:5173");
    const length = Buffer.alloc(2);
    length.writeUInt16LE(text.length);
    const envelope = Buffer.concat([
      Buffer.from("\xffsolana offchain", "latin1"),
      Buffer.from([0]),
      domain,
      Buffer.from([0, 1]),
      wallet.raw,
      length,
      text,
    ]);
    const signature = sign(null, envelope, wallet.privateKey).toString("base64");
    const { status } = await grant(backend, { chain: "solana", message, signature });
    expect(status).toBe(200);
  });
});

describe("what Auth refuses", () => {
  it("a signature by another key than the address's", async () => {
    const wallet = solanaWallet();
    const message = solanaMessage(wallet.address);
    expect(
      await grant(backend, {
        chain: "solana",
        message,
        signature: signed(message, solanaWallet().privateKey),
      }),
    ).toMatchObject(refusal("Signature does not match address in message"));
    const eth = ethereumWallet();
    const ethMessage = ethereumMessage(eth.address);
    expect(
      await grant(backend, {
        chain: "ethereum",
        message: ethMessage,
        signature: ethereumWallet().personalSign(ethMessage),
      }),
    ).toMatchObject(refusal("Signature does not match address in message"));
    // the right one, without its 0x (Auth's decoder needs it), or with a recovery id past 3
    const good = eth.personalSign(ethMessage);
    expect(
      await grant(backend, { chain: "ethereum", message: ethMessage, signature: good.slice(2) }),
    ).toMatchObject(refusal("Signature does not match address in message"));
    expect(
      await grant(backend, {
        chain: "ethereum",
        message: ethMessage,
        signature: `${good.slice(0, -2)}1f`,
      }),
    ).toMatchObject(refusal("Signature does not match address in message"));
    expect(
      (await grant(backend, { chain: "ethereum", message: ethMessage, signature: good })).status,
    ).toBe(200);
  });

  it("a message signed for another app, or not over HTTPS, or for a domain not its URI's", async () => {
    const attempt = signedBy(solanaWallet());
    expect(await attempt({ domain: "evil.example", uri: "https://evil.example/" })).toMatchObject(
      refusal(
        "Signed Solana message is using URI which is not allowed on this server, message was signed for another app",
      ),
    );
    expect(
      await attempt({ domain: "app.example.com", uri: "http://app.example.com/" }),
    ).toMatchObject(refusal("Signed Solana message is using URI which does not use HTTPS"));
    // a path is a URI for Go's ParseRequestURI, with no scheme (and no host after "//")
    expect(await attempt({ uri: "//localhost/" })).toMatchObject(
      refusal("Signed Solana message is using URI which does not use HTTPS"),
    );
    expect(
      await attempt({ domain: "other.example.com", uri: "https://app.example.com/" }),
    ).toMatchObject(
      refusal(
        "Signed Solana message is using a Domain that does not match the one in URI which is not allowed on this server",
      ),
    );
    expect(
      (await attempt({ domain: "app.example.com", uri: "https://app.example.com/" })).status,
    ).toBe(200);
  });

  it("a message too old, too new, expired or not yet valid", async () => {
    const wallet = solanaWallet();
    const minutes = (n: number) => new Date(Date.now() + n * 60_000);
    const attempt = signedBy(wallet);
    expect(await attempt({ issuedAt: minutes(-11) })).toMatchObject(
      refusal("Solana message was issued too long ago"),
    );
    expect(await attempt({ issuedAt: minutes(11) })).toMatchObject(
      refusal("Solana message was issued too far in the future"),
    );
    expect(await attempt({ issuedAt: minutes(-2), expirationTime: minutes(-1) })).toMatchObject(
      refusal("Signed Solana message is expired"),
    );
    expect(await attempt({ notBefore: minutes(1), expirationTime: minutes(5) })).toMatchObject(
      refusal("Signed Solana message becomes valid in the future"),
    );
    expect((await attempt({ issuedAt: minutes(-9) })).status).toBe(200);
  });

  it("Ethereum's grant reads an Expiration Time only beside a Not Before, as Auth's does", async () => {
    const eth = ethereumWallet();
    const message = (extra: string[]) =>
      ethereumMessage(eth.address, new Date(Date.now() - 120_000), extra);
    const expired = `Expiration Time: ${new Date(Date.now() - 60_000).toISOString()}`;
    const lone = message([expired]);
    expect(
      (
        await grant(backend, {
          chain: "ethereum",
          message: lone,
          signature: eth.personalSign(lone),
        })
      ).status,
    ).toBe(200);
    const paired = message([`Not Before: ${new Date(Date.now() - 90_000).toISOString()}`, expired]);
    expect(
      await grant(backend, {
        chain: "ethereum",
        message: paired,
        signature: eth.personalSign(paired),
      }),
    ).toMatchObject(refusal("Signed Ethereum message is expired"));
  });

  it("malformed messages and signatures, with the parsers' words", async () => {
    const wallet = solanaWallet();
    const good = solanaMessage(wallet.address);
    const signature = signed(good, wallet.privateKey);
    const cases: [Record<string, unknown>, { status: number; body: Record<string, string> }][] = [
      [{ chain: "solana", message: "too short", signature }, invalid("message is too short")],
      [
        { chain: "solana", message: "x".repeat(20 * 1024 + 1), signature },
        invalid("message must not exceed 20KB"),
      ],
      [
        { chain: "solana", message: good, signature: "abc" },
        invalid("signature must be 64 bytes encoded as base64 with or without padding"),
      ],
      [
        { chain: "solana", message: good, signature: `${"!".repeat(86)}` },
        invalid("signature does not contain valid base64 characters"),
      ],
      [
        { chain: "solana", message: good.replace("Solana account", "Solana wallet"), signature },
        invalid(
          'siws: message first line does not end in " wants you to sign in with your Solana account:"',
        ),
      ],
      [
        { chain: "solana", message: solanaMessage(wallet.address, { version: "2" }), signature },
        invalid('siws: Version value is not supported, expected 1 got "2"'),
      ],
      [
        { chain: "solana", message: good.replace(wallet.address, "0OIl".repeat(9)), signature },
        refusal("Signature does not match address in message"),
      ],
      [
        {
          chain: "solana",
          message: good.replace(/Issued At: .*/, "Issued At: yesterday"),
          signature,
        },
        invalid("siws: Issued At is not a valid ISO8601 timestamp"),
      ],
      [
        { chain: "solana", message: good.replace(/URI: .*/, "URI: not a uri"), signature },
        invalid("siws: URI is not valid"),
      ],
      // Go's zero time is no Issued At
      [
        {
          chain: "solana",
          message: good.replace(/Issued At: .*/, "Issued At: 0001-01-01T00:00:00Z"),
          signature,
        },
        invalid("siws: Issued At is not specified"),
      ],
      [
        { chain: "ethereum", message: good, signature: `0x${"0".repeat(130)}` },
        invalid(
          'siwe: message first line does not end in " wants you to sign in with your Ethereum account:"',
        ),
      ],
      [
        {
          chain: "ethereum",
          // past what strconv.Atoi reads
          message: ethereumMessage(`0x${"a".repeat(40)}`).replace(
            "Chain ID: 1",
            "Chain ID: 99999999999999999999999",
          ),
          signature: `0x${"0".repeat(130)}`,
        },
        invalid("siwe: Chain ID is not valid"),
      ],
      [
        { chain: "ethereum", message: good, signature: "0x12" },
        invalid(
          "signature must be 65 bytes long, encoded as a 130 character-long hexadecimal string",
        ),
      ],
    ];
    for (const [body, expected] of cases) {
      expect(await grant(backend, body), JSON.stringify(body).slice(0, 80)).toMatchObject(expected);
    }
    expect(await grant(backend, { chain: "bitcoin", message: good, signature })).toMatchObject({
      status: 400,
      body: { code: "web3_unsupported_chain", message: "Unsupported chain" },
    });
  });

  it("a chain the project has off, and more than the web3 rate limit allows", async () => {
    const eth = ethereumWallet();
    const { error } = await solanaOnly.client().auth.signInWithWeb3({
      chain: "ethereum",
      wallet: eth.api as never,
      options: { url: "http://localhost:5173/" },
    });
    expect(error).toMatchObject({
      status: 422,
      code: "web3_provider_disabled",
      message: "Ethereum Web3 provider is disabled",
    });
    // a bucket of 30 (that one was the first), refilled at one per 5 minutes here
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      statuses.push(
        (await grant(solanaOnly, { chain: "solana", message: "", signature: "" })).status,
      );
    }
    expect(statuses.slice(0, 29).every((s) => s === 400)).toBe(true);
    expect(statuses[29]).toBe(429);
  });

  it("a banned wallet's account", async () => {
    const wallet = solanaWallet();
    const signIn = () =>
      backend.client().auth.signInWithWeb3({
        chain: "solana",
        wallet: wallet.api,
        options: { url: "http://localhost:5173/" },
      });
    const first = await signIn();
    expect(first.error).toBeNull();
    const banned = await backend
      .admin()
      .auth.admin.updateUserById(first.data.user?.id ?? "", { ban_duration: "1h" });
    expect(banned.error).toBeNull();
    expect((await signIn()).error).toMatchObject({
      status: 403,
      code: "user_banned",
      message: "User is banned",
    });
  });
});

// Whether a wallet signed a sign-in message, as Auth checks it: Solana's ed25519 signature of the
// message (or of Solana's off-chain message envelope, as a Ledger signs it), and Ethereum's
// personal_sign (EIP-191) signature, whose public key is recovered and must hash to the address.
// A signature that cannot be read never matches (Auth's Go would panic on some: a base58 address
// that does not decode to 32 bytes).
import { createPublicKey, verify } from "node:crypto";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { base58 } from "@scure/base";
import type { SignInMessage } from "./message.ts";

/** siws.VerifySignature: `signature` (64 bytes) by the key the message's address names. */
export function solanaSigned(message: SignInMessage, signature: Uint8Array): boolean {
  let publicKey: Uint8Array;
  try {
    publicKey = base58.decode(message.address);
  } catch {
    return false;
  }
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  const key = createPublicKey({
    key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(publicKey).toString("base64url") },
    format: "jwk",
  });
  const raw = Buffer.from(message.raw, "utf8");
  if (verify(null, raw, key, signature)) return true;
  // The off-chain message format: "\xffsolana offchain", version 0, the domain in 32 bytes,
  // format 0 (ASCII), one signer, its key, the length (2 bytes, little-endian), the message.
  if (raw.length > 0xffff) return false;
  const domain = Buffer.alloc(32);
  Buffer.from(message.domain, "utf8").copy(domain, 0, 0, 32);
  const length = Buffer.alloc(2);
  length.writeUInt16LE(raw.length);
  const envelope = Buffer.concat([
    Buffer.from("\xffsolana offchain", "latin1"),
    Buffer.from([0]),
    domain,
    Buffer.from([0, 1]),
    publicKey,
    length,
    raw,
  ]);
  return verify(null, envelope, key, signature);
}

/**
 * siwe.VerifySignature: `signature`, "0x" and 65 bytes in hex (r, s, v), recovers a public key
 * whose address is the message's (in any case).
 */
export function ethereumSigned(message: SignInMessage, signature: string): boolean {
  // hexutil.Decode: the 0x prefix is required, then an even number of hex digits
  if (!/^0[xX]([0-9a-fA-F]{2})*$/.test(signature)) return false;
  const bytes = Buffer.from(signature.slice(2), "hex");
  if (bytes.length !== 65) return false;
  let v = bytes[64] as number;
  if (v >= 27) v -= 27;
  if (v > 3) return false;
  const text = Buffer.from(message.raw, "utf8");
  // accounts.TextHash: keccak256("\x19Ethereum Signed Message:\n" + length + message)
  const digest = keccak_256(
    Buffer.concat([Buffer.from(`\x19Ethereum Signed Message:\n${text.length}`, "utf8"), text]),
  );
  let point: Uint8Array;
  try {
    // @noble/curves' recovered form: the recovery id first, then r and s
    const recovered = secp256k1.recoverPublicKey(
      Uint8Array.from([v, ...bytes.subarray(0, 64)]),
      digest,
      { prehash: false },
    );
    point = secp256k1.Point.fromBytes(recovered).toBytes(false);
  } catch {
    return false;
  }
  const address = Buffer.from(keccak_256(point.subarray(1)).subarray(12)).toString("hex");
  return `0x${address}` === message.address.toLowerCase();
}

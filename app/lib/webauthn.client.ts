/**
 * The browser half of a WebAuthn ceremony: the auth server's JSON options (base64url strings) in,
 * `navigator.credentials` in the middle, the credential as JSON (base64url again) out. The server
 * (through the app's actions) fetches the options and verifies the result; this module only
 * converts. Loaded with `import()` when a passkey button is used or the page is idle, never in a
 * page's first load.
 */

type Json = Record<string, unknown>;

function fromBase64url(value: string): ArrayBuffer {
  const base64 = value.replace(/-/g, "+").replace(/_/g, "/");
  const binary = atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes.buffer;
}

function toBase64url(buffer: ArrayBuffer | ArrayBufferView | null | undefined): string | undefined {
  if (!buffer) return undefined;
  const bytes =
    buffer instanceof ArrayBuffer
      ? new Uint8Array(buffer)
      : new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function descriptors(list: unknown): PublicKeyCredentialDescriptor[] | undefined {
  if (!Array.isArray(list)) return undefined;
  return list.map((d: Json) => ({ ...d, id: fromBase64url(String(d.id)) })) as never;
}

/** Can this browser offer passkeys in the email field's autofill (conditional mediation)? */
export async function supportsAutofill(): Promise<boolean> {
  return (
    typeof PublicKeyCredential !== "undefined" &&
    typeof PublicKeyCredential.isConditionalMediationAvailable === "function" &&
    (await PublicKeyCredential.isConditionalMediationAvailable())
  );
}

/** navigator.credentials.get with the server's request options; the assertion as JSON. */
export async function getAssertion(
  options: Json,
  mediation: CredentialMediationRequirement | undefined,
  signal: AbortSignal,
): Promise<Json> {
  const publicKey = {
    ...options,
    challenge: fromBase64url(String(options.challenge)),
    allowCredentials: descriptors(options.allowCredentials),
  } as PublicKeyCredentialRequestOptions;
  const credential = (await navigator.credentials.get({
    publicKey,
    mediation,
    signal,
  })) as PublicKeyCredential | null;
  if (!credential) throw new DOMException("No passkey was chosen.", "NotAllowedError");
  const response = credential.response as AuthenticatorAssertionResponse;
  return credentialJson(credential, {
    clientDataJSON: toBase64url(response.clientDataJSON),
    authenticatorData: toBase64url(response.authenticatorData),
    signature: toBase64url(response.signature),
    userHandle: toBase64url(response.userHandle),
  });
}

/** navigator.credentials.create with the server's creation options; the attestation as JSON. */
export async function createCredential(options: Json, signal: AbortSignal): Promise<Json> {
  const user = options.user as Json;
  const publicKey = {
    ...options,
    challenge: fromBase64url(String(options.challenge)),
    user: { ...user, id: fromBase64url(String(user.id)) },
    excludeCredentials: descriptors(options.excludeCredentials),
  } as PublicKeyCredentialCreationOptions;
  const credential = (await navigator.credentials.create({
    publicKey,
    signal,
  })) as PublicKeyCredential | null;
  if (!credential) throw new DOMException("No passkey was made.", "NotAllowedError");
  const response = credential.response as AuthenticatorAttestationResponse;
  return credentialJson(credential, {
    clientDataJSON: toBase64url(response.clientDataJSON),
    attestationObject: toBase64url(response.attestationObject),
    transports: response.getTransports?.() ?? [],
  });
}

/** A credential as the server reads it (WebAuthn's toJSON() shape), around its response's fields. */
function credentialJson(credential: PublicKeyCredential, response: Json): Json {
  return {
    id: credential.id,
    rawId: toBase64url(credential.rawId),
    type: credential.type,
    authenticatorAttachment: credential.authenticatorAttachment ?? undefined,
    clientExtensionResults: credential.getClientExtensionResults(),
    response,
  };
}

/** POSTs a form to one of the app's passkey actions and reads its JSON answer. */
export async function postForm(path: string, fields: Record<string, string>): Promise<Json> {
  const response = await fetch(path, {
    method: "POST",
    body: new URLSearchParams(fields),
    headers: { Accept: "application/json" },
  });
  const body = (await response.json().catch(() => ({}))) as Json;
  if (!response.ok) {
    throw Object.assign(new Error(String(body.message ?? "Something went wrong.")), {
      code: String(body.code ?? response.status),
    });
  }
  return body;
}

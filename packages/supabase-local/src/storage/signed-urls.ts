// Signed URLs and signed upload URLs: a JWT (HS256) whose `url` claim is `<bucket>/<key>`, as
// upstream's signObjectUrl and signUploadObjectUrl make them, but signed with a key of this
// install's own (project/keys.ts: generated once into the data directory), never the JWT secret:
// the CLI's JWT secret is public, so any page could otherwise mint a URL to any object.
import { errors as joseErrors, jwtVerify, SignJWT } from "jose";
import { ERRORS } from "./errors.ts";

/**
 * What a token is for: a signed URL downloads (or renders), a signed upload URL uploads, and
 * neither does the other (upstream's scope claim, since v1.60.7).
 */
export type SignedUrlScope = "download" | "upload";

export interface SignedToken {
  scope?: SignedUrlScope;
  url: string;
  exp: number;
  /** A signed upload URL's: the owner of the object it uploads, and whether it may replace one. */
  owner?: string;
  upsert?: boolean;
  /** A signed URL of a transformed image: the transformation it allows. */
  transformations?: string;
  format?: string;
}

/**
 * Upstream's check of expiresIn in the handler (assertValidNumericJWTExpiration), after its schema
 * refused what is no integer or under a second (routes.ts): an exp past what a safe integer of
 * milliseconds holds is InvalidParameter.
 */
export function mustBeValidExpiresIn(expiresIn: unknown): number {
  if (
    typeof expiresIn !== "number" ||
    !Number.isFinite(expiresIn) ||
    expiresIn < 1 ||
    Math.floor(Date.now() / 1000) + expiresIn > 2 ** 53 / 1000
  )
    throw ERRORS.invalidParameter("expiresIn");
  return expiresIn;
}

export async function signToken(
  key: Uint8Array,
  claims: Omit<SignedToken, "exp">,
  expiresIn: number,
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuedAt(now)
    .setExpirationTime(now + Math.floor(expiresIn))
    .sign(key);
}

/**
 * A token's claims, if this install signed it and it has not expired (InvalidJWT with jose's
 * words otherwise, as upstream answers), it was made for `scope` and it names this object
 * (InvalidSignature otherwise).
 */
export async function verifyToken(
  key: Uint8Array,
  token: string | undefined,
  url: string,
  scope: SignedUrlScope,
): Promise<SignedToken> {
  if (!token) throw ERRORS.invalidJwt("Invalid Compact JWS");
  let payload: SignedToken;
  try {
    payload = (await jwtVerify(token, key, { algorithms: ["HS256"] }))
      .payload as unknown as SignedToken;
  } catch (error) {
    if (error instanceof joseErrors.JOSEError) throw ERRORS.invalidJwt(error.message);
    throw ERRORS.invalidJwt();
  }
  if (!scoped(payload, scope)) throw ERRORS.invalidSignature(`Token is not scoped for ${scope}`);
  if (payload.url !== url) throw ERRORS.invalidSignature();
  return payload;
}

/** Upstream's rule, with its reading of tokens made before the claim: an upload's has `upsert`. */
function scoped(payload: SignedToken, scope: SignedUrlScope): boolean {
  if (payload.scope !== undefined) return payload.scope === scope;
  return "upsert" in payload === (scope === "upload");
}

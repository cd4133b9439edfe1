// AWS Signature Version 4, as Storage's S3 endpoint checks it (supabase/storage v1.70.6,
// storage/protocols/s3/signature-v4.ts): the signature of an `Authorization: AWS4-HMAC-SHA256 …`
// header or of a presigned URL's X-Amz-* parameters, made again here from the request and the
// server's secret and compared in constant time. What upstream checks, this checks; what it lets
// pass, this lets pass: no clock-skew limit on a signed header's date, no 7-day cap on a presigned
// URL, and the payload's claimed SHA-256 is signed over, not compared with the bytes.
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { ERRORS } from "../errors.ts";

export const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/** Headers a signature never covers, whatever SignedHeaders lists (upstream's list). */
const UNSIGNABLE_HEADERS = new Set([
  "authorization",
  "connection",
  "expect",
  "from",
  "keep-alive",
  "max-forwards",
  "pragma",
  "referer",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "user-agent",
  "x-amzn-trace-id",
]);

export interface Scope {
  accessKey: string;
  shortDate: string;
  region: string;
  service: string;
}

/** What the client signed with, read from the request. */
export interface ClientSignature {
  scope: Scope;
  signature: string;
  signedHeaders: string[];
  longDate: string;
  /** x-amz-content-sha256 (or the presigned X-Amz-Content-Sha256). */
  contentSha?: string;
  /** x-amz-security-token: a user's JWT, the caller instead of the access key's service role. */
  sessionToken?: string;
  presigned: boolean;
}

/** The server's side of a signature: the key pair it expects and its region. */
export interface ServerCredentials {
  accessKey: string;
  secretKey: string;
  region: string;
}

/**
 * The signature a request carries: the Authorization header when it is one of SigV4, else a
 * presigned URL's parameters (an expired one refused here), else none (AccessDenied).
 */
export function clientSignature(request: Request, url: URL): ClientSignature {
  const authorization = request.headers.get("authorization");
  if (authorization?.startsWith("AWS4-HMAC-SHA256 ")) {
    const params = new Map<string, string>();
    for (const part of authorization.slice("AWS4-HMAC-SHA256 ".length).split(",")) {
      const [name, value] = part.split("=");
      if (name) params.set(name.trim(), value ?? "");
    }
    return parsed(
      params.get("Credential"),
      params.get("SignedHeaders"),
      params.get("Signature"),
      request.headers.get("x-amz-date") ?? undefined,
      request.headers.get("x-amz-content-sha256") ?? undefined,
      request.headers.get("x-amz-security-token") ?? undefined,
      false,
    );
  }
  const query = url.searchParams;
  if (query.has("X-Amz-Credential")) {
    const longDate = query.get("X-Amz-Date") ?? undefined;
    const expires = query.get("X-Amz-Expires");
    const signature = parsed(
      query.get("X-Amz-Credential") ?? undefined,
      query.get("X-Amz-SignedHeaders") ?? undefined,
      query.get("X-Amz-Signature") ?? undefined,
      longDate,
      query.get("X-Amz-Content-Sha256") ?? undefined,
      query.get("X-Amz-Security-Token") ?? undefined,
      true,
    );
    if (expires) mustNotHaveExpired(signature.longDate, expires);
    return signature;
  }
  throw ERRORS.accessDenied("Missing signature");
}

function parsed(
  credential: string | undefined,
  signedHeaders: string | undefined,
  signature: string | undefined,
  longDate: string | undefined,
  contentSha: string | undefined,
  sessionToken: string | undefined,
  presigned: boolean,
): ClientSignature {
  if (
    credential === undefined ||
    signedHeaders === undefined ||
    signature === undefined ||
    longDate === undefined
  )
    throw ERRORS.invalidSignature("Invalid signature format");
  const parts = credential.split("/");
  if (parts.length !== 5) throw ERRORS.invalidSignature("Invalid credentials");
  const [accessKey = "", shortDate = "", region = "", service = ""] = parts;
  return {
    scope: { accessKey, shortDate, region, service },
    signature,
    signedHeaders: signedHeaders.split(";"),
    longDate,
    contentSha,
    sessionToken,
    presigned,
  };
}

/** A presigned URL's X-Amz-Expires seconds after its X-Amz-Date, as upstream counts them. */
function mustNotHaveExpired(longDate: string, expires: string): void {
  const seconds = Number.parseInt(expires, 10);
  if (Number.isNaN(seconds) || seconds < 0) throw ERRORS.invalidSignature("Invalid expiration");
  const iso = longDate.replace(
    /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/,
    "$1-$2-$3T$4:$5:$6Z",
  );
  // an unreadable date never expires upstream either (NaN compares false); its signature fails
  if (new Date(iso).getTime() + seconds * 1000 < Date.now()) throw ERRORS.expiredSignature();
}

/**
 * A POST upload's signature, from its form's fields (named as S3's forms name them, case and all,
 * as upstream reads them): the policy is what is signed.
 */
export function formSignature(fields: Record<string, string>): ClientSignature & {
  policy: string;
} {
  const policy = fields.Policy;
  if (policy === undefined) throw ERRORS.invalidSignature("Invalid signature format");
  return {
    ...parsed(
      fields["X-Amz-Credential"],
      "",
      fields["X-Amz-Signature"],
      fields["X-Amz-Date"],
      fields["X-Amz-Content-Sha256"],
      fields["X-Amz-Security-Token"],
      false,
    ),
    signedHeaders: [],
    policy,
  };
}

/** Whether a POST upload's policy is signed by `server`'s key (its HMAC, as S3 signs one). */
export function verifyPolicySignature(
  client: ClientSignature,
  policy: string,
  server: ServerCredentials,
): boolean {
  const region = regionFor(client, server);
  const key = signingKey(server.secretKey, client.scope.shortDate, region, "s3");
  return equalSignatures(client.signature, hmac(key, policy).toString("hex"));
}

/**
 * The region a signature is checked in, once the access key is the server's and the service
 * `s3` (AccessDenied otherwise): a region other than the server's counts as the server's unless it
 * is one a client may name for any region (upstream's list).
 */
function regionFor(client: ClientSignature, server: ServerCredentials): string {
  if (client.scope.accessKey !== server.accessKey) throw ERRORS.accessDenied("Invalid Access Key");
  if (client.scope.service !== "s3") throw ERRORS.accessDenied("Invalid Service");
  return ["auto", "us-east-1", server.region, ""].includes(client.scope.region)
    ? client.scope.region
    : server.region;
}

function equalSignatures(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Whether the client's signature is the one `server` makes of this request. */
export function verifySignature(
  client: ClientSignature,
  request: Request,
  url: URL,
  server: ServerCredentials,
  /** The path as the client sent it, when known (a URL's own has "." and ".." resolved). */
  path = url.pathname,
): boolean {
  const region = regionFor(client, server);
  const canonical = canonicalRequest(client, request, url, path);
  const scope = `${client.scope.shortDate}/${region}/s3/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", client.longDate, scope, sha256Hex(canonical)].join(
    "\n",
  );
  const key = signingKey(server.secretKey, client.scope.shortDate, region, "s3");
  return equalSignatures(client.signature, hmac(key, stringToSign).toString("hex"));
}

/**
 * The canonical request: the path as sent (still percent-encoded), the query decoded and encoded
 * again by RFC 3986 in key order (X-Amz-Signature left out), the signed headers as the request
 * has them, and the payload's hash: UNSIGNED-PAYLOAD for a presigned GET, else the one claimed,
 * else UNSIGNED-PAYLOAD (upstream never reads the body to hash it).
 */
function canonicalRequest(
  client: ClientSignature,
  request: Request,
  url: URL,
  path: string,
): string {
  const query = [...url.searchParams.entries()]
    .filter(([name]) => name !== "X-Amz-Signature")
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${rfc3986(name)}=${rfc3986(value)}`)
    .join("&");
  const signed = [...client.signedHeaders].sort();
  const headers = signed
    .filter((name) => request.headers.has(name) && !UNSIGNABLE_HEADERS.has(name.toLowerCase()))
    .map((name) => `${name}:${request.headers.get(name)}`)
    .join("\n");
  const payload =
    client.presigned && request.method === "GET"
      ? "UNSIGNED-PAYLOAD"
      : (client.contentSha ?? "UNSIGNED-PAYLOAD");
  return [request.method, path || "/", query, `${headers}\n`, signed.join(";"), payload].join("\n");
}

/**
 * A streamed body's chunk signature (STREAMING-AWS4-HMAC-SHA256-PAYLOAD): each chunk signs its
 * hash after the previous chunk's signature, the first after the request's.
 */
export function chunkSignature(
  client: ClientSignature,
  secretKey: string,
  previous: string,
  chunkHash: string,
): string {
  const { shortDate, region, service } = client.scope;
  const stringToSign = [
    "AWS4-HMAC-SHA256-PAYLOAD",
    client.longDate,
    `${shortDate}/${region}/${service}/aws4_request`,
    previous,
    EMPTY_SHA256,
    chunkHash,
  ].join("\n");
  return hmac(signingKey(secretKey, shortDate, region, service), stringToSign).toString("hex");
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

function signingKey(secret: string, date: string, region: string, service: string): Buffer {
  const kDate = hmac(`AWS4${secret}`, date);
  return hmac(hmac(hmac(kDate, region), service), "aws4_request");
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac("sha256", key).update(data).digest();
}

/** encodeURIComponent, with the characters it leaves that RFC 3986 reserves encoded too. */
function rfc3986(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

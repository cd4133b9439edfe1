// Who is asking, and the transactions Storage runs for them. Every read and write of
// storage.buckets and storage.objects a request makes runs in a transaction as the caller's role,
// with what upstream's Storage tells the database of the request in each one (its setScope): the
// caller's claims and token (request.jwt.claims, as PostgREST sets them, and request.jwt), the
// request's headers, method and path, and its route's operation (storage.operation()), so the
// project's RLS policies decide as on the real server; only what upstream does as its superuser
// (finding a bucket's limits, completing an upload once it was allowed, a signed URL's object)
// runs as the database owner. A permission is tested as upstream's testPermission does: the write
// is made as the caller, then rolled back.
import type { PGlite, Transaction } from "@electric-sql/pglite";
import { requestContext } from "../http/context.ts";
import { type Claims, JwtRejected } from "../http/jwt.ts";
import { ERRORS, fromDatabaseError, StorageError } from "./errors.ts";

/** The caller of a request: a role the API knows and its claims; the owner is the JWT's sub. */
export interface Caller {
  role: string;
  claims: Claims;
  /** The JWT's sub (the owner of what they upload), when there is one. */
  owner?: string;
  /** Whether a JWT verified (false: no token, upstream's allowInvalidJwt routes count anon). */
  authenticated: boolean;
  /** The JWT the claims came from (request.jwt), when one verified. */
  jwt?: string;
  /** The request it makes, for the transactions made as it (none outside a request). */
  scope?: RequestScope;
}

/**
 * What upstream's policies see of the request besides the caller, the same in each of its
 * transactions: its route's operation (operations.ts), its method, its path as the server behind
 * the gateway has it (Fastify's request.url: without /storage/v1, which the gateway strips, and
 * with the query), and every header it came with as JSON, names in lower case (Node's
 * request.headers, serialized whole).
 */
export interface RequestScope {
  operation: string;
  method: string;
  path: string;
  /** The headers' JSON, made once for every transaction of the request. */
  headers: string;
}

const API_ROLES = ["anon", "authenticated", "service_role"];

/** The anonymous caller of the routes that need no token (public objects, signed URLs). */
export const ANON: Caller = { role: "anon", claims: { role: "anon" }, authenticated: false };

/** The role upstream's superuser acts as where no caller decides (a signed upload URL's upload,
 * config.toml's buckets): RLS does not apply, the constraints still do. */
export const SERVICE_ROLE: Caller = {
  role: "service_role",
  claims: { role: "service_role" },
  authenticated: true,
};

/**
 * The caller of a request, from the gateway's context (http/context.ts), making it for the route
 * named by `operation` (operations.ts). A token that does not verify is refused as upstream's JWT
 * plugin refuses it (AccessDenied, with jose's words), unless the route lets an invalid token
 * count as anon (`lenient`: upstream's allowInvalidJwt).
 */
export async function callerOf(
  request: Request,
  operation: string,
  lenient = false,
): Promise<Caller> {
  const context = requestContext(request);
  if (!context.bearer) {
    if (lenient) return inRequest(ANON, request, operation);
    throw ERRORS.accessDenied("Access denied: JWT is not authenticated");
  }
  let claims: Claims;
  try {
    claims = await context.claims();
  } catch (error) {
    if (!(error instanceof JwtRejected)) throw error;
    if (lenient) return inRequest(ANON, request, operation);
    throw ERRORS.accessDenied(joseMessage(error));
  }
  return inRequest(callerFromClaims(claims, context.bearer), request, operation);
}

/**
 * The caller a verified JWT stands for: its role, which must be one the API knows (upstream's
 * role check: 403 otherwise), and its sub as the owner of what it uploads.
 */
export function callerFromClaims(claims: Claims, jwt: string): Caller {
  if (!API_ROLES.includes(claims.role)) throw ERRORS.accessDeniedJwt("Access denied: Invalid role");
  return {
    role: claims.role,
    claims,
    owner: typeof claims.sub === "string" && claims.sub !== "" ? claims.sub : undefined,
    authenticated: true,
    jwt,
  };
}

/**
 * `caller` making this request for the route named by `operation`: ANON or SERVICE_ROLE where
 * upstream acts for a request without its caller's token (a signed upload URL's upload runs as its
 * superuser, with the request's headers, path and operation all the same).
 */
export function inRequest(caller: Caller, request: Request, operation: string): Caller {
  const url = new URL(request.url);
  const headers: Record<string, string> = {};
  // Headers iterates names in lower case and joins a repeated header's values with ", ", as
  // Node's request.headers does for most (it joins Cookie's with "; ", and keeps the first of a
  // repeated Authorization or Content-Type: headers a request does not repeat in practice).
  request.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return {
    ...caller,
    scope: {
      operation,
      method: request.method,
      path: url.pathname.replace(/^\/storage\/v1(?=\/|$)/, "") + url.search,
      headers: JSON.stringify(headers),
    },
  };
}

/** Why a token was refused, in the words of the library upstream verifies with (jose). */
export function joseMessage(error: JwtRejected): string {
  if (error.rest.message === "JWT expired") return '"exp" claim timestamp check failed';
  if (error.rest.message === "JWT cryptographic operation failed")
    return "signature verification failed";
  return "Invalid Compact JWS";
}

type Work<T> = (tx: Transaction) => Promise<T>;

/**
 * Runs `work` in one transaction as the caller, with upstream's settings for it alone, in one
 * statement: the role, the claims and token, the request's headers, method, path and operation
 * (each empty outside a request, the headers `{}`, as upstream leaves what it does not have).
 * Deletes are allowed past protect_delete: this is the Storage API, which removes the bytes as
 * well. Postgres errors come out as upstream's.
 */
export async function asCaller<T>(db: PGlite, caller: Caller, work: Work<T>): Promise<T> {
  const scope = caller.scope;
  try {
    return await db.transaction(async (tx) => {
      await tx.query(
        `select set_config('role', $1, true),
                set_config('request.jwt.claim.role', $1, true),
                set_config('request.jwt', $2, true),
                set_config('request.jwt.claim.sub', $3, true),
                set_config('request.jwt.claims', $4, true),
                set_config('request.headers', $5, true),
                set_config('request.method', $6, true),
                set_config('request.path', $7, true),
                set_config('storage.operation', $8, true),
                set_config('storage.allow_delete_query', 'true', true)`,
        [
          caller.role,
          caller.jwt ?? "",
          caller.owner ?? "",
          JSON.stringify(caller.claims),
          scope?.headers ?? "{}",
          scope?.method ?? "",
          scope?.path ?? "",
          scope?.operation ?? "",
        ],
      );
      return work(tx);
    });
  } catch (error) {
    throw storageError(error);
  }
}

/** Runs `work` as the database owner (no RLS): what upstream does as its superuser. */
export async function asOwner<T>(db: PGlite, work: Work<T>): Promise<T> {
  try {
    return await db.transaction(async (tx) => {
      await tx.query("select set_config('storage.allow_delete_query', 'true', true)");
      return work(tx);
    });
  } catch (error) {
    throw storageError(error);
  }
}

class Rollback extends Error {
  readonly result: unknown;
  constructor(result: unknown) {
    super("rollback");
    this.result = result;
  }
}

/**
 * Whether the caller may do what `work` does: it runs as the caller and is rolled back (upstream's
 * testPermission). A refusal throws as upstream's (an RLS refusal: AccessDenied).
 */
export async function testPermission<T>(db: PGlite, caller: Caller, work: Work<T>): Promise<T> {
  try {
    await asCaller(db, caller, async (tx) => {
      throw new Rollback(await work(tx));
    });
  } catch (error) {
    if (error instanceof Rollback) return error.result as T;
    throw error;
  }
  throw new Error("unreachable");
}

/** A StorageError as it is, a Postgres error as upstream maps it; anything else as it is. */
function storageError(error: unknown): unknown {
  if (error instanceof StorageError || error instanceof Rollback) return error;
  return fromDatabaseError(error) ?? error;
}

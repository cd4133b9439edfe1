// Who is asking, and the transactions Storage runs for them. Every read and write of
// storage.buckets and storage.objects a request makes runs in a transaction as the caller's role
// with its claims (request.jwt.claims, as PostgREST and upstream's Storage set them), so the
// project's RLS policies decide; only what upstream does as its superuser (finding a bucket's
// limits, completing an upload once it was allowed, a signed URL's object) runs as the database
// owner. A permission is tested as upstream's testPermission does: the write is made as the caller,
// then rolled back.
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
 * The caller of a request, from the gateway's context (http/context.ts). A token that does not
 * verify is refused as upstream's JWT plugin refuses it (AccessDenied, with jose's words), unless
 * the route lets an invalid token count as anon (`lenient`: upstream's allowInvalidJwt).
 */
export async function callerOf(request: Request, lenient = false): Promise<Caller> {
  const context = requestContext(request);
  if (!context.bearer) {
    if (lenient) return ANON;
    throw ERRORS.accessDenied("Access denied: JWT is not authenticated");
  }
  let claims: Claims;
  try {
    claims = await context.claims();
  } catch (error) {
    if (!(error instanceof JwtRejected)) throw error;
    if (lenient) return ANON;
    throw ERRORS.accessDenied(joseMessage(error));
  }
  if (!API_ROLES.includes(claims.role)) throw ERRORS.accessDeniedJwt("Access denied: Invalid role");
  return {
    role: claims.role,
    claims,
    owner: typeof claims.sub === "string" && claims.sub !== "" ? claims.sub : undefined,
    authenticated: true,
  };
}

/** Why a token was refused, in the words of the library upstream verifies with (jose). */
function joseMessage(error: JwtRejected): string {
  if (error.rest.message === "JWT expired") return '"exp" claim timestamp check failed';
  if (error.rest.message === "JWT cryptographic operation failed")
    return "signature verification failed";
  return "Invalid Compact JWS";
}

type Work<T> = (tx: Transaction) => Promise<T>;

/**
 * Runs `work` in one transaction as the caller (role and claims set for it alone; the operation
 * for policies that read storage.operation()). Deletes are allowed past protect_delete: this is
 * the Storage API, which removes the bytes as well. Postgres errors come out as upstream's.
 */
export async function asCaller<T>(
  db: PGlite,
  caller: Caller,
  operation: string,
  work: Work<T>,
): Promise<T> {
  try {
    return await db.transaction(async (tx) => {
      await tx.query(
        `select set_config('request.jwt.claims', $1, true),
                set_config('request.jwt.claim.sub', $2, true),
                set_config('request.jwt.claim.role', $3, true),
                set_config('storage.operation', $4, true),
                set_config('storage.allow_delete_query', 'true', true),
                set_config('role', $3, true)`,
        [JSON.stringify(caller.claims), caller.owner ?? "", caller.role, operation],
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
export async function testPermission<T>(
  db: PGlite,
  caller: Caller,
  operation: string,
  work: Work<T>,
): Promise<T> {
  try {
    await asCaller(db, caller, operation, async (tx) => {
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

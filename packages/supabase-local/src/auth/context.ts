import type { PGlite } from "@electric-sql/pglite";
import type { Inbox } from "../mail/inbox.ts";
import type { Config } from "../project/config.ts";
import type { Keys, SigningKeys } from "../project/keys.ts";
import type { RateLimits } from "./rate-limits.ts";

/** Everything an Auth handler needs, built once by the server. */
export interface AuthContext {
  db: PGlite;
  config: Config;
  keys: Keys;
  /** The key that signs access tokens, and every key that verifies them (the JWKS). */
  signingKeys: SigningKeys;
  inbox: Inbox;
  /** [auth.rate_limit] counters (in memory, like the real service's limiters). */
  rateLimits: RateLimits;
  /** The public URL of the Auth API, e.g. http://127.0.0.1:54321/auth/v1 (also the JWT issuer,
   * unless [auth] jwt_issuer says otherwise: jwtIssuer()). */
  externalUrl: () => string;
  now: () => Date;
  /** The project directory: email templates' content_path is relative to it, as for the CLI. */
  projectDir: string;
}

/** An Auth endpoint: a plain function of the context and the request (the route table's unit). */
export type Handler = (ctx: AuthContext, request: Request) => Response | Promise<Response>;

/** The `iss` of access tokens and the discovery document's issuer: [auth] jwt_issuer, else the
 * external URL (GOTRUE_JWT_ISSUER as the CLI sets it). */
export function jwtIssuer(ctx: AuthContext): string {
  return ctx.config.auth.jwtIssuer ?? ctx.externalUrl();
}

// What the gateway decided about a request (gateway.ts), as the services read it: the kind of key,
// the caller's bearer and claims, and the client address. It travels on the Request object itself,
// so a copy made after the gateway has none, and says so at once.
import type { Claims } from "./jwt.ts";

/** Which of the project's API keys a request carried: the new keys, or the legacy JWT keys. */
export type KeyKind = "publishable" | "secret" | "legacy_anon" | "legacy_service_role";

/**
 * What the gateway decided about a request, once, for the service behind it (Auth, the data API):
 * the service reads it with requestContext(request) and never looks at the key headers again.
 */
export interface GatewayContext {
  /** The project's key the request carried (none on an open route asked without one). */
  key?: KeyKind;
  /** The JWT passed on as the caller: the request's own `Authorization: Bearer`, or the key's. */
  bearer?: string;
  /**
   * The JWT the project key itself stands for (the publishable key's anon JWT, the secret key's
   * service_role JWT, a legacy JWT key as it is), whatever `Authorization` says: what Realtime
   * takes as a socket's token (upstream reads the key, never the Authorization header).
   */
  keyJwt?: string;
  /** The bearer's claims, verified on first use and then remembered (a JwtRejected otherwise). */
  claims(): Promise<Claims>;
  /** The caller's address: Sb-Forwarded-For's when honoured, else the peer's (client-address.ts). */
  clientAddress: string;
  /** Whether clientAddress came from Sb-Forwarded-For. */
  forwarded: boolean;
  /**
   * From another website's page (or a browser following another site's link with the key in its
   * URL): what a service that authenticates by itself (Storage's S3 endpoint) refuses its
   * well-known credentials from, as the gateway refuses the service_role key.
   */
  elsewhere: boolean;
}

/** Where the gateway's decision travels with the request, to the service that answers it. */
const CONTEXT = Symbol("supabase-local gateway context");
type Carrier = Request & { [CONTEXT]?: GatewayContext };

/** Hands the gateway's decision to the services, on this very Request object. */
export function withContext(request: Request, context: GatewayContext): Request {
  Object.defineProperty(request, CONTEXT, { value: context, enumerable: false });
  return request;
}

/**
 * The gateway's decision about this request. A Request the gateway never saw (a copy made after
 * it) has none, and that is a bug to see at once: it must never quietly count as another caller.
 */
export function requestContext(request: Request): GatewayContext {
  const context = (request as Carrier)[CONTEXT];
  if (!context) {
    throw new Error(
      "this Request did not pass the gateway (http/app.ts): it has no caller context",
    );
  }
  return context;
}

// The backend's HTTP surface as one Hono app: who may call what (local-only.ts), the API gateway,
// Auth at /auth/v1, the data API at /rest/v1, the mail inbox (/inbox, and as Mailpit's API on a
// port of its own) and the OAuth provider page. createLocalBackend (backend.ts) loads this module
// while the database opens: Auth and the data API are most of the backend's code, and importing
// them then costs a start nothing.
import type { Readable } from "node:stream";
import type { PGlite } from "@electric-sql/pglite";
import { Hono } from "hono";
import { cors } from "hono/cors";
import type { AuthContext } from "../auth/context.ts";
import { authRoutes } from "../auth/index.ts";
import { preloadPasswords } from "../auth/passwords.ts";
import { RateLimits } from "../auth/rate-limits.ts";
import { preloadWebAuthn } from "../auth/webauthn/webauthn.ts";
import { Inbox, inboxRoutes } from "../mail/inbox.ts";
import { mailpitRoutes } from "../mail/mailpit.ts";
import type { KeyedProject } from "../project/project.ts";
import { providerPageRoutes } from "../provider/page.ts";
import { type Accept, acceptedUpgrade, createRealtime } from "../realtime/index.ts";
import { channelTokenVerifier } from "../realtime/tokens.ts";
import { API_ROLES, type Authenticate, createRestHandler } from "../rest/index.ts";
import { createStorage, preloadStorage, type Storage } from "../storage/index.ts";
import { requestContext, withContext } from "./context.ts";
import { gateway, openGatewayRoute } from "./gateway.ts";
import { JwtRejected, verifyJwt } from "./jwt.ts";
import { apiCaller, isLocalOnly, noFraming, ProjectOrigins, refuseForeign } from "./local-only.ts";

export interface ApiOptions {
  db: PGlite;
  /** Whether this backend opened the database (rather than sharing another backend's). */
  ownDatabase?: boolean;
  /** The project, resolved once at start (project/project.ts): its paths, config and keys. */
  project: KeyedProject;
  /** The backend's own URL, e.g. http://127.0.0.1:54321. */
  url: string;
  /** Where Storage keeps its bytes (the database's storageDir). */
  storageDir: string;
}

/** What the server knows of a request before the app: who sent it (client-address.ts). */
export interface Peer {
  /** The socket's address, or a trusted proxy header's; 127.0.0.1 in process. */
  peer: string;
  /**
   * The request's body as Node's own stream, when it came through the Node server: an upload
   * reads it as it comes, without the Web stream @hono/node-server would put around it (a tenth
   * of an upload's time). Absent in process (tests call fetch): the Request's body then.
   */
  incoming?: Readable;
}

export interface Api {
  /** Everything, on the API's port; `fetch(request, { peer })`. */
  app: Hono<{ Bindings: Peer }>;
  /** The inbox as Mailpit's API at its root, for Mailpit's own port. */
  mail: Hono;
  inbox: Inbox;
  /**
   * An HTTP upgrade request (the Realtime socket), through the same rules as every request: the
   * socket's start when accepted, or the answer to send back.
   */
  upgrade(request: Request, peer: Peer): Promise<{ accept: Accept } | { response: Response }>;
  /**
   * Storage's start-up work (config.toml's buckets on a fresh database, orphaned bytes swept) and
   * its close.
   */
  storage: Pick<Storage, "seed" | "sweep" | "close">;
}

export function createApi(options: ApiOptions): Api {
  const { db, project, url } = options;
  const { config, keys, signingKeys, storageUrlKey } = project;
  const inbox = new Inbox();
  const ctx: AuthContext = {
    db,
    config,
    keys,
    signingKeys,
    inbox,
    rateLimits: new RateLimits(config.auth.rateLimit),
    externalUrl: () => config.auth.externalUrl ?? `${url}/auth/v1`,
    now: () => new Date(),
    projectDir: project.paths.projectDir,
  };

  const app = new Hono<{ Bindings: Peer }>();
  const origins = new ProjectOrigins(config);
  const apiCors = cors({
    origin: (origin) => origin,
    credentials: true,
    exposeHeaders: [
      "X-Supabase-Api-Version",
      "x-sb-error-code",
      "Content-Range",
      "Content-Profile",
      "Preference-Applied",
      // what storage-js and a TUS client read
      "ETag",
      "Content-Disposition",
      "Location",
      "Tus-Resumable",
      "Tus-Version",
      "Tus-Max-Size",
      "Tus-Extension",
      "Upload-Offset",
      "Upload-Length",
      "Upload-Metadata",
      "Upload-Expires",
    ],
  });
  const gatewayOptions = {
    keys,
    signingKeys,
    sbForwardedFor: config.local.sbForwardedFor,
  };
  // Who may call what (local-only.ts): the local pages and the admin API answer only the
  // developer's own tab and tools; every API answers only on a loopback Host, grants CORS to the
  // project's own origins alone, and then the gateway decides the caller once.
  app.use("*", async (c, next) => {
    const path = c.req.path;
    const localOnly = isLocalOnly(path);
    if (localOnly) {
      const refused = refuseForeign(c.req.raw, path);
      if (refused) return refused;
    }
    if (LOCAL_API.test(path)) {
      const caller = apiCaller(c.req.raw, path, origins);
      if ("refused" in caller) return caller.refused;
      const peer = c.env?.peer;
      // the server always says who sent the request: without it every caller would be one
      if (!peer) throw new Error("createApi's app.fetch needs the peer: fetch(request, { peer })");
      const answer = async () => {
        const result = await gateway(
          c.req.raw,
          { open: openGatewayRoute(path), peer, foreign: caller.foreign },
          gatewayOptions,
        );
        if ("reject" in result) {
          c.res = result.reject;
          return;
        }
        withContext(c.req.raw, result.context);
        await next();
      };
      // (a preflight from one of the project's origins is answered by the CORS middleware alone)
      const preflight = caller.cors && !localOnly ? await apiCors(c, answer) : await answer();
      if (preflight) return preflight;
    } else {
      await next();
    }
    if (localOnly) for (const [name, value] of noFraming()) c.header(name, value);
  });
  app.route("/auth/v1", authRoutes(ctx));
  const rest = createRestHandler({
    db,
    schemas: config.api.schemas,
    maxRows: config.api.maxRows,
    extraSearchPath: config.api.extraSearchPath,
    authenticate: authenticateRest,
  });
  app.all("/rest/v1/*", (c) => rest(withoutApiKeyParam(c.req.raw)));
  const realtime = createRealtime({
    db,
    ownDatabase: options.ownDatabase ?? false,
    limits: config.local.realtime,
    verify: channelTokenVerifier(keys.jwtSecret, signingKeys),
  });
  app.get("/realtime/v1/websocket", (c) => realtime.websocket(c.req.raw));
  app.post("/realtime/v1/api/broadcast", (c) => realtime.broadcast(c.req.raw));
  app.post("/realtime/v1/api/broadcast/:topic/events/:event", (c) =>
    realtime.broadcast(c.req.raw, { topic: c.req.param("topic"), event: c.req.param("event") }),
  );
  const storage = createStorage({
    db,
    directory: options.storageDir,
    urlKey: storageUrlKey,
    config: config.storage,
    s3Keys: {
      anonKey: keys.anon,
      serviceRoleKey: keys.serviceRole,
      verifyJwt: (token) => verifyJwt(token, keys, signingKeys),
    },
  });
  if (config.storage.enabled) app.route("/storage/v1", storage.routes);
  app.route("/inbox", inboxRoutes(inbox));
  app.route("/inbox", mailpitRoutes(inbox));
  app.route("/provider", providerPageRoutes(ctx));
  app.get("/", (c) => c.redirect("/inbox"));

  // Mailpit's own port: the same routes at its root, local-only like /inbox
  const mail = new Hono();
  mail.use("*", async (c, next) => {
    const refused = refuseForeign(c.req.raw, `/inbox${c.req.path}`);
    if (refused) return refused;
    await next();
    for (const [name, value] of noFraming()) c.header(name, value);
  });
  mail.route("/", mailpitRoutes(inbox));
  mail.get("/", (c) => c.redirect(`${url}/inbox`));
  const upgrade: Api["upgrade"] = async (request, peer) => {
    const response = await app.fetch(request, peer);
    const accept = acceptedUpgrade(request);
    return accept ? { accept } : { response };
  };
  return { app, mail, inbox, upgrade, storage };
}

/** The local APIs: each request passes apiCaller and the gateway before its service sees it. */
const LOCAL_API = /^\/(?:auth|rest|realtime|storage)\/v1(?:\/|$)/;

/**
 * The request the data API sees: Kong's key-auth strips `?apikey=` before PostgREST (kong.yml's
 * hide_credentials), which would otherwise read it as a filter. The gateway's context goes along.
 */
function withoutApiKeyParam(request: Request): Request {
  const url = new URL(request.url);
  if (!url.searchParams.has("apikey")) return request;
  url.searchParams.delete("apikey");
  const copy = new Request(url, {
    method: request.method,
    headers: request.headers,
    body: request.body,
    signal: request.signal,
    duplex: "half",
  } as RequestInit);
  return withContext(copy, requestContext(request));
}

/** The data API's view of the caller, from the gateway's context (PostgREST: no token = anon; a
 * bad token = 401). */
export const authenticateRest: Authenticate = async (request) => {
  const context = requestContext(request);
  if (!context.bearer) return { claims: { role: "anon" } };
  try {
    const claims = await context.claims();
    if (!API_ROLES.includes(claims.role)) {
      return { error: `role "${String(claims.role)}" does not exist` };
    }
    return { claims };
  } catch (error) {
    if (!(error instanceof JwtRejected)) throw error;
    return { error: error.rest.message, details: error.rest.details };
  }
};

/**
 * Loads what only some requests need (bcrypt for passwords, @simplewebauthn/server for passkeys
 * and WebAuthn factors, qrcode for TOTP enrollment, @tus/server for resumable uploads, sharp for
 * image transformations), which no module imports statically: createLocalBackend calls this once
 * it serves, so that a start does not wait for them and no request does either.
 */
export function loadAfterStart(): void {
  preloadPasswords();
  preloadWebAuthn();
  import("qrcode").catch(() => {});
  preloadStorage();
}

// The backend's HTTP surface as one Hono app: who may call what (local-only.ts), the API gateway,
// Auth at /auth/v1, the data API at /rest/v1, the mail inbox (/inbox, and as Mailpit's API on a
// port of its own) and the OAuth provider page. createLocalBackend (server.ts) loads this module
// while the database opens: Auth and the data API are most of the backend's code, and importing
// them then costs a start nothing.
import type { PGlite } from "@electric-sql/pglite";
import { Hono } from "hono";
import { cors } from "hono/cors";
import type { AuthContext } from "./auth/context.ts";
import { authRoutes } from "./auth/index.ts";
import { RateLimits } from "./auth/rate-limits.ts";
import { preloadWebAuthn } from "./auth/webauthn.ts";
import type { Config } from "./config.ts";
import { createAuthenticate, gateway, openGatewayRoute } from "./gateway.ts";
import type { Keys, SigningKeys } from "./keys.ts";
import { isLocalOnly, noFraming, refuseForeign } from "./local-only.ts";
import { Inbox, inboxRoutes } from "./mail/inbox.ts";
import { mailpitRoutes } from "./mail/mailpit.ts";
import { providerPageRoutes } from "./provider/page.ts";
import { createRestHandler } from "./rest/index.ts";

export interface ApiOptions {
  db: PGlite;
  config: Config;
  keys: Keys;
  signingKeys: SigningKeys;
  /** The backend's own URL, e.g. http://127.0.0.1:54321. */
  url: string;
  projectDir: string;
}

export interface Api {
  /** Everything, on the API's port. */
  app: Hono;
  /** The inbox as Mailpit's API at its root, for Mailpit's own port. */
  mail: Hono;
  inbox: Inbox;
}

export function createApi(options: ApiOptions): Api {
  const { db, config, keys, signingKeys, url, projectDir } = options;
  const inbox = new Inbox();
  const ctx: AuthContext = {
    db,
    config,
    keys,
    signingKeys,
    inbox,
    rateLimits: new RateLimits(config.auth.rateLimit),
    externalUrl: () => `${url}/auth/v1`,
    now: () => new Date(),
    projectDir,
  };

  const app = new Hono();
  const apiCors = cors({
    origin: (origin) => origin,
    credentials: true,
    exposeHeaders: [
      "X-Supabase-Api-Version",
      "x-sb-error-code",
      "Content-Range",
      "Content-Profile",
      "Preference-Applied",
    ],
  });
  // Who may call what (local-only.ts): the local pages and the admin API answer only the
  // developer's own tab and tools; the APIs browsers call keep their CORS.
  app.use("*", async (c, next) => {
    const path = c.req.path;
    if (isLocalOnly(path)) {
      const refused = refuseForeign(c.req.raw, path);
      if (refused) return refused;
      await next();
      for (const [name, value] of noFraming()) c.header(name, value);
      return;
    }
    if (/^\/(?:auth|rest)\/v1(?:\/|$)/.test(path)) return apiCors(c, next);
    await next();
  });
  // The gateway's own answers (no API key, an unknown one, the secret key from a browser) come
  // before Auth and the data API see the request.
  const apiGateway = async (
    c: { req: { raw: Request; path: string } },
    next: () => Promise<void>,
  ) => {
    if (openGatewayRoute(c.req.path)) return next();
    const result = await gateway(c.req.raw, keys);
    if ("reject" in result) return result.reject;
    await next();
  };
  app.use("/auth/v1/*", apiGateway);
  app.use("/rest/v1/*", apiGateway);
  app.route("/auth/v1", authRoutes(ctx));
  const rest = createRestHandler({
    db,
    schemas: config.api.schemas,
    maxRows: config.api.maxRows,
    extraSearchPath: config.api.extraSearchPath,
    authenticate: createAuthenticate(keys, signingKeys),
  });
  app.all("/rest/v1/*", (c) => rest(c.req.raw));
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
  return { app, mail, inbox };
}

/**
 * Loads what only some requests need (@simplewebauthn/server for passkeys and WebAuthn factors,
 * qrcode for TOTP enrollment), which no module imports statically: createLocalBackend calls this
 * once it serves, so that a start does not wait for them and no request does either.
 */
export function loadAfterStart(): void {
  preloadWebAuthn();
  import("qrcode").catch(() => {});
}

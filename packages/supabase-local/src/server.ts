import type { AddressInfo, Socket } from "node:net";
import type { PGlite } from "@electric-sql/pglite";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { cors } from "hono/cors";
import { authRoutes } from "./auth/index.ts";
import { RateLimits } from "./auth/rate-limits.ts";
import { rememberClientAddress } from "./client-address.ts";
import { type Config, type DeepPartial, loadConfig } from "./config.ts";
import { openDatabase } from "./database.ts";
import { createAuthenticate, gateway } from "./gateway.ts";
import { KEYS, type Keys, loadSigningKey, type SigningKey } from "./keys.ts";
import { isLocalOnly, noFraming, refuseForeign } from "./local-only.ts";
import { Inbox, inboxRoutes } from "./mail/inbox.ts";
import { applyMigrations } from "./migrations.ts";
import { projectPaths, seedFiles } from "./project.ts";
import { providerPageRoutes } from "./provider/page.ts";
import { createRestHandler } from "./rest/index.ts";

export interface LocalBackendOptions {
  /**
   * The project: the directory whose supabase/config.toml, supabase/migrations and
   * supabase/seed.sql the backend serves (default: the working directory, as the Supabase CLI).
   */
  projectDir?: string;
  /** Where PGlite and the signing key live; undefined = in memory (tests). `supabase-local
   * start` uses the project's .local-data. */
  dataDir?: string;
  /** Port to listen on (default: config.toml [api] port, 54321); 0 = any free port. */
  port?: number;
  /** Hosts to listen on (default 127.0.0.1 and ::1); `false` = no socket, use `fetch` directly. */
  host?: string | string[] | false;
  /** The project's supabase/config.toml by default. */
  configPath?: string;
  /** Deep-merged over config.toml (tests that need another setting). */
  config?: DeepPartial<Config>;
  /** Extra SQL files applied after migrations and seed (test fixtures). */
  fixtures?: string[];
  /** The project's supabase/migrations by default. */
  migrationsDir?: string;
  /**
   * SQL files applied once, to a fresh database; `false`: none. Default: config.toml [db.seed]
   * (`sql_paths`, relative to supabase/; supabase/seed.sql), none when `enabled = false`.
   */
  seed?: string[] | false;
  /**
   * A request header that carries the client's address (e.g. "X-Forwarded-For"), for a backend
   * behind a proxy that sets it. Unset (the default), the address is the socket's and such headers
   * are ignored: anyone can write them. Default: $LOCAL_BACKEND_TRUST_PROXY_HEADER.
   */
  trustProxyHeader?: string;
}

export interface LocalBackend {
  /** e.g. http://127.0.0.1:54321 (what SUPABASE_URL should be). */
  url: string;
  /** The whole backend as a fetch handler (no socket needed). */
  fetch: (request: Request) => Promise<Response>;
  keys: Keys;
  db: PGlite;
  config: Config;
  inbox: Inbox;
  close: () => Promise<void>;
}

/** Starts the local stand-in for a Supabase project: /auth/v1, /rest/v1 and the mail inbox. */
export async function createLocalBackend(options: LocalBackendOptions = {}): Promise<LocalBackend> {
  const project = projectPaths(options.projectDir);
  const config = loadConfig({
    configFile: options.configPath ?? project.configFile,
    overrides: options.config,
  });
  // Take the port first: a second instance must fail before it opens the same data directory.
  const port = options.port ?? config.api.port;
  const trustProxyHeader =
    options.trustProxyHeader ?? (process.env.LOCAL_BACKEND_TRUST_PROXY_HEADER || undefined);
  let handler: ((request: Request) => Promise<Response>) | undefined;
  let markReady = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  const early = async (request: Request, env?: { incoming?: { socket: Socket } }) => {
    rememberClientAddress(request, env?.incoming?.socket?.remoteAddress, trustProxyHeader);
    await ready;
    return (handler as (request: Request) => Promise<Response>)(request);
  };
  const servers: ReturnType<typeof serve>[] = [];
  const hosts = options.host === false ? [] : [options.host ?? ["127.0.0.1", "::1"]].flat();
  let actualPort = port;
  for (const [i, hostname] of hosts.entries()) {
    try {
      const server = await listen(early, hostname, i === 0 ? port : actualPort);
      actualPort = (server.address() as AddressInfo).port;
      servers.push(server);
    } catch (error) {
      // ::1 is optional (machines without IPv6); the first host is not.
      if (i === 0) throw error;
    }
  }
  const url = `http://127.0.0.1:${actualPort}`;

  let db: PGlite | undefined;
  let signingKey: SigningKey;
  try {
    [db, signingKey] = await Promise.all([
      openDatabase(options.dataDir),
      loadSigningKey(options.dataDir),
    ]);
    await applyMigrations(db, {
      migrationsDir: options.migrationsDir ?? project.migrationsDir,
      seedFiles:
        options.seed === false
          ? []
          : (options.seed ??
            (config.db.seed.enabled
              ? await seedFiles(project.supabaseDir, config.db.seed.sqlPaths)
              : [])),
      fixtures: options.fixtures,
    });
  } catch (error) {
    await Promise.all(servers.map(closeServer));
    await db?.close();
    throw error;
  }

  const inbox = new Inbox();
  const ctx = {
    db,
    config,
    keys: KEYS,
    signingKey,
    inbox,
    rateLimits: new RateLimits(config.auth.rateLimit),
    externalUrl: () => `${url}/auth/v1`,
    now: () => new Date(),
    projectDir: project.projectDir,
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
  // The gateway's own answer (an unknown sb_ key) comes before Auth and the data API see the request.
  const apiGateway = async (c: { req: { raw: Request } }, next: () => Promise<void>) => {
    const result = gateway(c.req.raw, KEYS);
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
    authenticate: createAuthenticate(KEYS, signingKey),
  });
  app.all("/rest/v1/*", (c) => rest(c.req.raw));
  app.route("/inbox", inboxRoutes(inbox));
  app.route("/provider", providerPageRoutes(ctx));
  app.get("/", (c) => c.redirect("/inbox"));

  handler = async (request: Request) => app.fetch(request);
  // In-process callers (tests) have no socket: their address is this machine's, or the trusted header.
  const fetch = async (request: Request) => {
    rememberClientAddress(request, undefined, trustProxyHeader);
    return app.fetch(request);
  };
  markReady();

  return {
    get url() {
      return url;
    },
    fetch,
    keys: KEYS,
    db,
    config,
    inbox,
    close: async () => {
      await Promise.all(servers.map(closeServer));
      await db.close();
    },
  };
}

function listen(
  fetch: (r: Request, env?: { incoming?: { socket: Socket } }) => Promise<Response>,
  hostname: string,
  port: number,
) {
  return new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const server = serve({ fetch, hostname, port }, () => resolve(server));
    server.once("error", reject);
  });
}

function closeServer(server: ReturnType<typeof serve>): Promise<void> {
  return new Promise((resolve) => {
    if ("closeAllConnections" in server) server.closeAllConnections();
    server.close(() => resolve());
  });
}

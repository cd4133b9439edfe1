import { type IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex, Readable } from "node:stream";
import type { PGlite } from "@electric-sql/pglite";
import { serve } from "@hono/node-server";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { hasDatabase } from "./database/data-dir.ts";
import { pgliteEngine, prestartDatabaseThread } from "./database/engine.ts";
import { openDatabase } from "./database/open.ts";
import { startPgNetWorker } from "./database/pg-net.ts";
import { snapshotCacheDir, snapshotFor } from "./database/snapshot.ts";
import { listenOnceFree } from "./database/thread/port-in-use.js";
import { peerAddress } from "./http/client-address.ts";
import { sendNodeBody } from "./http/node-body.ts";
import { refuseUpgrade, type UpgradeResult, upgradeRequest, WebSockets } from "./http/upgrade.ts";
import type { Inbox } from "./mail/inbox.ts";
import type { Config, DeepPartial } from "./project/config.ts";
import {
  type Keys,
  loadSigningKeys,
  loadStorageUrlKey,
  projectKeys,
  type SigningKeys,
} from "./project/keys.ts";
import { applyMigrations } from "./project/migrations.ts";
import { seedFiles } from "./project/paths.ts";
import { resolveProject } from "./project/project.ts";
import { applyVaultSecrets } from "./project/vault-secrets.ts";

/** What @hono/node-server hands the fetch handler: the request as Node has it (HTTP/1 or 2). */
type ServerRequest = Readable & { socket?: { remoteAddress?: string } };

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
  /**
   * An open database to serve instead of opening one: another backend's `db`, of the same project.
   * Its migrations are brought up to date as a fresh one's would be; closing this backend leaves
   * it open. Backends that differ only in their settings (tests) then share one database.
   */
  db?: PGlite;
  /** Extra SQL files applied after migrations and seed (test fixtures). */
  fixtures?: string[];
  /**
   * Serve the Postgres wire protocol (psql, `pg`, `supabase gen types --db-url`) on this port, on
   * the first host; `supabase-local start` passes config.toml [db] port (54322). Default: none.
   * 0 = a free port.
   */
  postgresPort?: number;
  /**
   * Serve the mail inbox as Mailpit's API on this port, on the first host; `supabase-local start`
   * passes config.toml [local_smtp] port (54324). Default: none (the same API is always at /inbox).
   */
  mailpitPort?: number;
  /** How long (ms) a Postgres connection idle in a transaction may keep others waiting (10 000). */
  idleInTransactionTimeout?: number;
  /** The project's supabase/migrations by default. */
  migrationsDir?: string;
  /**
   * SQL files applied once, to a fresh database; `false`: none. Default: config.toml [db.seed]
   * (`sql_paths`, relative to supabase/; supabase/seed.sql), none when `enabled = false`.
   */
  seed?: string[] | false;
  /**
   * Where the start snapshots are kept (snapshot.ts): a fresh database starts as a copy of the one
   * for its migrations and seed. Default: the project's node_modules/.cache/supabase-local.
   */
  cacheDir?: string;
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
  /** postgresql://postgres:postgres@127.0.0.1:<port>/postgres, when a Postgres port is served. */
  dbUrl: string | undefined;
  /** The Mailpit API's base URL (its own port, else `<url>/inbox`). */
  mailpitUrl: string;
  db: PGlite;
  config: Config;
  inbox: Inbox;
  close: () => Promise<void>;
}

/** Starts the local stand-in for a Supabase project: /auth/v1, /rest/v1 and the mail inbox. */
export async function createLocalBackend(options: LocalBackendOptions = {}): Promise<LocalBackend> {
  // PGlite's WebAssembly compiles on V8's own threads while the config, the ports and the keys
  // are dealt with (the promise is kept: a failure is the database open's to report).
  const engine = options.db ? Promise.resolve() : pgliteEngine().catch(() => {});
  // and the database thread starts (Node's start of a thread, PGlite's JavaScript) meanwhile too
  if (!options.db) prestartDatabaseThread();
  // The HTTP surface (http/app.ts: Auth, the data API, the inbox: most of the backend's code) loads on
  // this thread while PGlite starts in its own. Not before the engine is compiled: until it is
  // sent to the database thread, the open needs this thread for its own steps, and loading the
  // modules first held it up (by 0.1 to 0.3 s). (A failure to load is reported when awaited.)
  const api = engine.then(() => import("./http/app.ts"));
  api.catch(() => {});
  // the project's paths and config, once: what every part below is handed
  const project = resolveProject(options);
  const { config, paths } = project;
  // Take the port first: a second instance must fail before it opens the same data directory.
  const port = options.port ?? config.api.port;
  const trustProxyHeader =
    options.trustProxyHeader ?? (process.env.LOCAL_BACKEND_TRUST_PROXY_HEADER || undefined);
  let handler:
    | ((request: Request, peer: string, incoming?: Readable) => Promise<Response>)
    | undefined;
  let markReady = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  const early = async (request: Request, env?: { incoming?: ServerRequest }) => {
    const peer = peerAddress(request, env?.incoming?.socket?.remoteAddress, trustProxyHeader);
    await ready;
    return (handler as NonNullable<typeof handler>)(request, peer, env?.incoming);
  };
  // The Realtime socket: an upgrade goes through the app as a request (http/upgrade.ts).
  let upgrader: ((request: Request, peer: string) => Promise<UpgradeResult>) | undefined;
  const webSockets = new WebSockets();
  const onUpgrade = async (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => {});
    try {
      const request = upgradeRequest(req);
      const peer = peerAddress(request, req.socket.remoteAddress, trustProxyHeader);
      await ready;
      const result = await (upgrader as NonNullable<typeof upgrader>)(request, peer);
      if ("accept" in result) await webSockets.accept(req, socket, head, result.accept);
      else await refuseUpgrade(socket, result.response);
    } catch {
      socket.destroy();
    }
  };
  const servers: ReturnType<typeof serve>[] = [];
  const hosts = options.host === false ? [] : [options.host ?? ["127.0.0.1", "::1"]].flat();
  let actualPort = port;
  for (const [i, hostname] of hosts.entries()) {
    try {
      const server = await listen(early, hostname, i === 0 ? port : actualPort);
      server.on("upgrade", onUpgrade);
      actualPort = (server.address() as AddressInfo).port;
      servers.push(server);
    } catch (error) {
      // ::1 is optional (machines without IPv6); the first host is not.
      if (i === 0) throw error;
    }
  }
  const url = `http://127.0.0.1:${actualPort}`;

  let db: PGlite | undefined;
  let signingKeys: SigningKeys;
  let keys: Keys;
  let storageUrlKey: Uint8Array;
  // a database that starts from the snapshot: config.toml's buckets are seeded into it
  let fresh = false;
  // pg_net's worker (database/pg-net.ts), stopped before the database closes
  let stopPgNet: () => Promise<void> = async () => {};
  let apiModule: typeof import("./http/app.ts");
  try {
    const migrations = {
      migrationsDir: options.migrationsDir ?? paths.migrationsDir,
      migrationsEnabled: config.db.migrations.enabled,
      autoExposeNewTables: config.api.autoExposeNewTables,
      seedFiles:
        options.seed === false
          ? []
          : (options.seed ??
            (config.db.seed.enabled
              ? await seedFiles(paths.supabaseDir, config.db.seed.sqlPaths)
              : [])),
    };
    // First (a few ms): a key file Auth would refuse stops the start before any database work.
    signingKeys = await loadSigningKeys({
      dataDir: options.dataDir,
      path: config.auth.signingKeysPath,
    });
    // The keys need no database: made while it opens.
    const made = Promise.all([
      projectKeys(config.auth.signingKeysPath ? signingKeys.all[0] : undefined),
      loadStorageUrlKey(options.dataDir),
    ]);
    made.catch(() => {}); // (a failure is reported when awaited, after a failed open's own)
    if (options.db) {
      db = options.db;
    } else {
      // A fresh database (in memory, or a data directory without one) starts from the snapshot.
      fresh = options.dataDir === undefined || !hasDatabase(options.dataDir);
      const snapshot = fresh
        ? await snapshotFor(migrations, options.cacheDir ?? snapshotCacheDir(paths.projectDir))
        : undefined;
      db = await openDatabase(options.dataDir, {
        snapshot,
        // a persisted database is started fresh again after a reset: the spare makes that quick
        spare: options.dataDir !== undefined,
        postgres:
          options.postgresPort === undefined || hosts.length === 0
            ? undefined
            : {
                port: options.postgresPort,
                host: hosts[0],
                idleInTransactionTimeout: options.idleInTransactionTimeout,
              },
      });
    }
    [keys, storageUrlKey] = await made;
    await applyMigrations(db, { ...migrations, fixtures: options.fixtures });
    await applyVaultSecrets(db, config.db.vault);
    stopPgNet = await startPgNetWorker(db);
    apiModule = await api;
  } catch (error) {
    await Promise.all([...servers.map(closeServer), stopPgNet()]);
    if (!options.db) await db?.close();
    throw error;
  }

  const { app, mail, inbox, upgrade, storage } = apiModule.createApi({
    db,
    ownDatabase: !options.db,
    project: { ...project, keys, signingKeys, storageUrlKey },
    url,
    storageDir: (db as unknown as { storageDir: string }).storageDir,
  });
  if (config.storage.enabled) {
    try {
      // as `supabase start` on a fresh database and `db reset`: config.toml's buckets
      if (fresh) await storage.seed();
      // bytes a crash left without a row (not while another backend shares the database)
      else if (!options.db) await storage.sweep();
    } catch (error) {
      await Promise.all([...servers.map(closeServer), stopPgNet()]);
      if (!options.db) await db.close();
      throw error;
    }
  }

  let mailpitUrl = `${url}/inbox`;
  if (options.mailpitPort !== undefined && hosts.length > 0) {
    try {
      const server = await listen(
        async (r) => mail.fetch(r),
        hosts[0] as string,
        options.mailpitPort,
      );
      servers.push(server);
      mailpitUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    } catch (error) {
      await Promise.all([...servers.map(closeServer), stopPgNet()]);
      if (!options.db) await db.close();
      throw error;
    }
  }

  // The peer goes to the app with the request (http/app.ts), whose gateway decides the caller once.
  handler = async (request: Request, peer: string, incoming?: Readable) =>
    app.fetch(request, { peer, incoming });
  upgrader = (request: Request, peer: string) => upgrade(request, { peer });
  // In-process callers (tests) have no socket: their address is this machine's, or the trusted header.
  const fetch = async (request: Request) =>
    app.fetch(request, { peer: peerAddress(request, undefined, trustProxyHeader) });
  markReady();
  apiModule.loadAfterStart();

  return {
    get url() {
      return url;
    },
    fetch,
    keys,
    dbUrl: postgresUrl(db),
    mailpitUrl,
    db,
    config,
    inbox,
    close: async () => {
      await webSockets.close();
      await Promise.all([...servers.map(closeServer), storage.close(), stopPgNet()]);
      if (!options.db) await db.close();
    },
  };
}

/**
 * Serves `fetch` on the port, once connections that still hold it let go (port-in-use.js). A
 * stored object's bytes go from its file to the socket (http/node-body.ts).
 */
function listen(
  fetch: (r: Request, env?: { incoming?: ServerRequest }) => Promise<Response>,
  hostname: string,
  port: number,
) {
  const send = async (request: Request, env?: { incoming?: ServerRequest; outgoing?: unknown }) => {
    const response = await fetch(request, env);
    const outgoing = env?.outgoing;
    if (outgoing instanceof ServerResponse && sendNodeBody(response, outgoing)) {
      return RESPONSE_ALREADY_SENT;
    }
    return response;
  };
  return listenOnceFree(
    () =>
      new Promise<ReturnType<typeof serve>>((resolve, reject) => {
        const server = serve({ fetch: send, hostname, port }, () => resolve(server));
        server.once("error", reject);
      }),
    port,
  );
}

function closeServer(server: ReturnType<typeof serve>): Promise<void> {
  return new Promise((resolve) => {
    if ("closeAllConnections" in server) server.closeAllConnections();
    server.close(() => resolve());
  });
}

/** The connection string `supabase status` prints, for the port the database serves (if any). */
function postgresUrl(db: PGlite): string | undefined {
  const port = (db as unknown as { postgresPort?: number }).postgresPort;
  return port === undefined
    ? undefined
    : `postgresql://postgres:postgres@127.0.0.1:${port}/postgres`;
}

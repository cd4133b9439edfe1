import type { PGlite } from "@electric-sql/pglite";
import type { Config } from "../project/config.ts";
import type { Keys } from "../project/keys.ts";

/** What the local provider page needs from the server (a part of what Auth is given). */
export interface ProviderContext {
  /** Accounts used before are read from auth.identities. */
  db: PGlite;
  /** [auth.external.<name>] enabled. */
  config: Config;
  /** Codes are signed with a key derived from the JWT secret. */
  keys: Keys;
  /** The Auth API's public URL (…/auth/v1): the page answers its /callback. */
  externalUrl: () => string;
}

import { fileURLToPath } from "node:url";

/** Where `npm run local` keeps its database and signing key (gitignored). */
export const DATA_DIR = fileURLToPath(new URL("../../../.local-data", import.meta.url));
/** The repository root (ends with a slash). */
export const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

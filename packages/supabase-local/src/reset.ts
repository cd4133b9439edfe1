// `npm run local:reset`: deletes the local backend's data (accounts, sessions, app data, signing key).
import { rm } from "node:fs/promises";
import { DATA_DIR } from "./paths.ts";

await rm(DATA_DIR, { recursive: true, force: true });
console.log(`Removed ${DATA_DIR}. The next \`npm run local\` starts from an empty database.`);

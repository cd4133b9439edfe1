import { fileURLToPath } from "node:url";

/** Where failing tests leave their screenshots and page logs (gitignored; a CI artifact). */
export const RESULTS_DIR = fileURLToPath(new URL("../../../test-results/e2e", import.meta.url));

#!/usr/bin/env node
// The `supabase-local` command. JavaScript, so that the TypeScript cache (src/typescript-cache.js)
// is in place before the command line (src/cli.ts) and the backend's modules load.
import "../src/typescript-cache.js";

await import("../src/cli.ts");

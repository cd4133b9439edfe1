#!/usr/bin/env node
// The `supabase-local` command. JavaScript, so that Node's compile cache (src/compile-cache.js)
// and the TypeScript cache (src/typescript-cache.js) are in place before the command line
// (src/cli.ts) and the backend's modules load.
import "../src/compile-cache.js";
import "../src/typescript-cache.js";

await import("../src/cli.ts");

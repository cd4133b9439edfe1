#!/usr/bin/env node
// The `supabase-local` command. JavaScript, so that Node's compile cache (src/boot/compile-cache.js)
// and the TypeScript cache (src/boot/typescript-cache.js) are in place before the command line
// (src/cli/cli.ts) and the backend's modules load.
import "../src/boot/compile-cache.js";
import "../src/boot/typescript-cache.js";

await import("../src/cli/cli.ts");

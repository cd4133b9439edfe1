// Node compiles the JavaScript of every module it loads, at every start, and keeps nothing unless
// its compile cache is on (NODE_COMPILE_CACHE, or module.enableCompileCache()). A backend start
// loads a few hundred modules on two threads: the backend's own and its libraries on the main
// thread, PGlite's on the database thread. Importing this module turns the cache on for this
// process, in the cache directory (cache-dir.js: node_modules/.cache/node-compile-cache, where
// `npm test` keeps it too), and names it in NODE_COMPILE_CACHE, because Node does not carry
// enableCompileCache() over to worker threads or child processes: the database thread, started
// later, then keeps its compiled code as well. A process started with NODE_COMPILE_CACHE already
// set keeps the directory it names.
//
// Node checks each entry against the module's source and its own version, so an edited module or
// a new Node is compiled again; what runs is the same either way. The command line
// (bin/supabase-local.js), `npm run dev` and the bench's start timing import it first.
import { enableCompileCache } from "node:module";
import { compileCacheDir } from "./cache-dir.js";

if (!process.env.NODE_COMPILE_CACHE) {
  const { directory } = enableCompileCache(compileCacheDir(process.cwd()));
  if (directory) process.env.NODE_COMPILE_CACHE = directory;
}

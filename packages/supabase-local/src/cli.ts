// `npm run local`: the local backend on 127.0.0.1 and ::1 (port 54321), persisted under
// .local-data/. Prints what `supabase status` would. Ctrl-C stops it cleanly.
import { DATA_DIR } from "./paths.ts";
import { createLocalBackend } from "./server.ts";

const started = performance.now();
const port = process.env.LOCAL_BACKEND_PORT ? Number(process.env.LOCAL_BACKEND_PORT) : undefined;
const backend = await createLocalBackend({ dataDir: DATA_DIR, port }).catch((error) => {
  if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
    console.error(
      `Port ${port ?? 54321} is in use: is another \`npm run local\` (or supabase start) running?`,
    );
    process.exit(1);
  }
  throw error;
});
const ms = Math.round(performance.now() - started);
const { url, keys } = backend;

console.log(`
Local Supabase backend started in ${ms} ms (data in .local-data/, reset with npm run local:reset)

         API URL: ${url}
     Auth API URL: ${url}/auth/v1
     REST API URL: ${url}/rest/v1
        JWKS URL: ${url}/auth/v1/.well-known/jwks.json
       Inbox URL: ${url}/inbox
  Publishable key: ${keys.publishable}
       Secret key: ${keys.secret}
       JWT secret: ${keys.jwtSecret}
         anon key: ${keys.anon}
 service_role key: ${keys.serviceRole}

Press Ctrl-C to stop.`);

let stopping = false;
async function stop(signal: string) {
  if (stopping) return;
  stopping = true;
  console.log(`\n${signal}: stopping the local backend…`);
  await backend.close();
  process.exit(0);
}
process.on("SIGINT", () => void stop("SIGINT"));
process.on("SIGTERM", () => void stop("SIGTERM"));

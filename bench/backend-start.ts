// One local backend start, timed in a fresh Node process (nothing compiled or cached from an
// earlier start): `node bench/backend-start.ts <dataDir> <port>` prints
// {"importMs": …, "readyMs": …, "totalMs": …}. importMs is loading the backend's modules; readyMs
// runs from the createLocalBackend() call to its promise resolving (database open, migrations
// applied, listening); totalMs is both, as `npm run local` reports its start ("started in …"). It
// starts what `npm run local` starts: the APIs on <port> and the Postgres port on <port> + 1.
// bench/run.ts runs it with Node's compile cache and the TypeScript cache imported first, as the
// command line loads them.
export {};

const [dataDir, port] = process.argv.slice(2);
if (!dataDir || !port) throw new Error("usage: node bench/backend-start.ts <dataDir> <port>");

const importStarted = performance.now();
const { createLocalBackend } = await import("./backend.ts");
const started = performance.now();
const backend = await createLocalBackend({
  dataDir,
  port: Number(port),
  postgresPort: Number(port) + 1,
  host: "127.0.0.1",
});
const ready = performance.now();
try {
  const health = await fetch(`${backend.url}/auth/v1/health`, {
    headers: { apikey: backend.keys.publishable },
    // a start that cannot answer fails the bench, rather than hanging it
    signal: AbortSignal.timeout(10_000),
  });
  if (!health.ok) throw new Error(`the backend answered its health check with ${health.status}`);
} finally {
  await backend.close();
}
console.log(
  JSON.stringify({
    importMs: started - importStarted,
    readyMs: ready - started,
    totalMs: ready - importStarted,
  }),
);

/**
 * A string only the bench-only getUser() build contains (bench/get-user/supabase.server.ts puts
 * it in the Worker): `npm run bench` checks it is in that build and nowhere in the app's.
 */
export const BENCH_ONLY_MARKER = "bench-only: getUser() on every request";

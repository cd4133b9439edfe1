// The app + backend pairs the end-to-end run starts (tests/e2e/setup/servers.ts) and the tests
// drive. Each is the built Worker served by `vite preview` (what `npm run preview` runs) pointed at
// its own in-memory local backend.
//   main          supabase/config.toml as it is (one-hour access tokens): every flow but expiry
//   shortTokens   10-second access tokens (shorter than the browser client's 30 s refresh tick, so
//                 they really expire between ticks): sign-out scopes meet token expiry within
//                 seconds
//   earlyRefresh  100-second access tokens: supabase-js refreshes a session once its token has
//                 less than 90 s left (EXPIRY_MARGIN_MS), so these are due 10 s after they are
//                 issued, while a token just issued is not, as with every lifetime Supabase
//                 recommends (5 minutes to an hour). Idle tabs meet refresh and rotation within
//                 seconds. (On the 10-second stack every token is inside that margin from the
//                 start: each session read refreshes again, three rotations per request, and two
//                 requests sent at once could sign a person out, as the hosted service would.)
//   unreachable   the app alone, pointed at a port where no backend listens: what a visitor sees
//                 when Supabase is down (the accessibility check audits those pages too)
// E2E_APP_PORT and E2E_BACKEND_PORT move them all (the others use the ports after each).

export interface Stack {
  name: string;
  /** The app as the browser reaches it. */
  appUrl: string;
  appPort: number;
  /** The local backend (SUPABASE_URL for the app; the inbox page lives at /inbox). */
  backendUrl: string;
  backendPort: number;
  /** Access-token lifetime in seconds, when it differs from config.toml's. */
  jwtExpiry?: number;
  /** false: no backend is started; the app's SUPABASE_URL points at a port nobody answers. */
  backend: boolean;
}

// Below Linux's ephemeral range (32768-60999), as the apps' are: the kernel gives ports of that
// range to outbound connections and to servers listening on port 0, and a socket that `npm test`,
// run just before, left closing could still hold one (the short-token stack's backend, once on
// :54394, found its port taken for minutes after a CI run's `npm test`).
const APP_PORT = Number(process.env.E2E_APP_PORT ?? 8793);
const BACKEND_PORT = Number(process.env.E2E_BACKEND_PORT ?? 8893);

function stack(name: string, offset: number, jwtExpiry?: number, backend = true): Stack {
  const appPort = APP_PORT + offset;
  const backendPort = BACKEND_PORT + offset;
  return {
    name,
    appUrl: `http://localhost:${appPort}`,
    appPort,
    backendUrl: `http://127.0.0.1:${backendPort}`,
    backendPort,
    jwtExpiry,
    backend,
  };
}

export const main = stack("main", 0);
export const shortTokens = stack("short-tokens", 1, 10);
export const unreachable = stack("unreachable", 2, undefined, false);
export const earlyRefresh = stack("early-refresh", 3, 100);
export const STACKS = [main, shortTokens, unreachable, earlyRefresh];

/** supabase-js refreshes a session whose access token has less than this left (EXPIRY_MARGIN_MS). */
export const REFRESH_MARGIN_MS = 90_000;

// The two app + backend pairs the end-to-end run starts (tests/e2e/setup/servers.ts) and the tests
// drive. Each is the built Worker served by `vite preview` (what `npm run preview` runs) pointed at
// its own in-memory local backend.
//   main         supabase/config.toml as it is (one-hour access tokens): every flow but expiry
//   shortTokens  10-second access tokens (shorter than the browser client's 30 s refresh tick, so
//                they really expire between ticks): sign-out scopes and idle tabs meet token
//                expiry and rotation within seconds
//   unreachable  the app alone, pointed at a port where no backend listens: what a visitor sees
//                when Supabase is down (the accessibility check audits those pages too)
// E2E_APP_PORT and E2E_BACKEND_PORT move all three (the others use the ports after each).

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
export const STACKS = [main, shortTokens, unreachable];

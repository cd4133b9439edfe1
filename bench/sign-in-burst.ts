// Does a burst of password sign-ins stall the local backend? A data API request's latency while 40
// sign-ins are being answered, against the same request with the backend idle (issue 37: with
// bcrypt in JavaScript on the backend's one thread, the request waited for the whole burst).
//
// The sign-ins come as the Worker sends them: 40 visitors, each from an address of its own, named
// by Sb-Forwarded-For with the secret key (supabase/local-backend.toml turns it on), so the real
// limits apply and none is refused. Alone: `node bench/sign-in-burst.ts` starts a backend of its
// own (the project's settings, the real hash cost) and prints the line the bench prints.
import { pathToFileURL } from "node:url";
import { createClient } from "@supabase/supabase-js";
import { PUBLISHABLE_KEY, SECRET_KEY } from "../tests/support/backend.ts";
import { median } from "./client-checks.ts";

export const BURST = 40;
const ROUNDS = 5;
/** How long after the burst is fired the data request goes: the sign-ins are all in by then. */
const INTO_THE_BURST_MS = 20;

export interface BurstResult {
  /** Median latency of the data API request, idle and during a burst (ms). */
  idleMs: number;
  duringMs: number;
  /** Median time for the whole burst of sign-ins to be answered (ms). */
  burstMs: number;
  rounds: number;
}

/** Medians over ROUNDS bursts of BURST password sign-ins at `url`, each with a data request. */
export async function measureSignInBurst(url: string): Promise<BurstResult> {
  const email = `burst-${crypto.randomUUID()}@example.com`;
  const password = `burst-${crypto.randomUUID()}`;
  const admin = createClient(url, SECRET_KEY, {
    auth: { persistSession: false, autoRefreshToken: false },
  });
  const created = await admin.auth.admin.createUser({ email, password, email_confirm: true });
  if (created.error) throw created.error;
  const signIn = (visitor = 0) =>
    fetch(`${url}/auth/v1/token?grant_type=password`, {
      method: "POST",
      headers: {
        apikey: SECRET_KEY,
        "Sb-Forwarded-For": `198.51.${100 + (visitor >> 8)}.${visitor & 255}`,
        "Content-Type": "application/json",
      },
      body: JSON.stringify({ email, password }),
    }).then(async (response) => {
      if (!response.ok) throw new Error(`sign-in: ${response.status} ${await response.text()}`);
      return (await response.json()) as { access_token: string };
    });
  // The user's own notes (none): RLS, the session check and a JWT to verify, as the app's reads.
  const { access_token } = await signIn();
  const dataRequest = async () => {
    const started = performance.now();
    const response = await fetch(`${url}/rest/v1/notes?select=id&limit=1`, {
      headers: { apikey: PUBLISHABLE_KEY, Authorization: `Bearer ${access_token}` },
    });
    await response.text();
    if (!response.ok) throw new Error(`data API: ${response.status}`);
    return performance.now() - started;
  };

  const idle: number[] = [];
  const during: number[] = [];
  const bursts: number[] = [];
  for (let i = 0; i < 5; i++) await dataRequest(); // warm
  let visitor = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < 5; i++) idle.push(await dataRequest());
    const started = performance.now();
    const burst = Promise.all(Array.from({ length: BURST }, () => signIn(++visitor))).then(
      () => performance.now() - started,
    );
    await new Promise((resolve) => setTimeout(resolve, INTO_THE_BURST_MS));
    during.push(await dataRequest());
    bursts.push(await burst);
  }
  return {
    idleMs: median(idle),
    duringMs: median(during),
    burstMs: median(bursts),
    rounds: ROUNDS,
  };
}

/** The report's line, as its other ratios: the median latency during the burst ÷ idle. */
export function burstLine(result: BurstResult): string {
  const label = `data API request during ${BURST} sign-ins ÷ idle`;
  return `  ratio ${label.padEnd(52)} ${(result.duringMs / result.idleMs).toFixed(1)}x (${result.duringMs.toFixed(1)} vs ${result.idleMs.toFixed(1)} ms; the burst took ${Math.round(result.burstMs)} ms; medians of ${result.rounds})`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { startBackendThread } = await import("./backend.ts");
  const backend = await startBackendThread({ port: 0, host: "127.0.0.1" });
  try {
    const result = await measureSignInBurst(backend.url);
    console.log(burstLine(result));
  } finally {
    await backend.close();
  }
}

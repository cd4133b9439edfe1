// supabase-js in Node, on one session: getClaims() (verified locally against the cached JWKS) vs
// getUser() (a round trip to the auth server). Rounds are interleaved (one sample of each per
// round) so that load on the machine hits both alike; each reports its median.
import { createClient } from "@supabase/supabase-js";
import { PUBLISHABLE_KEY } from "../tests/support/backend.ts";

export interface ClientChecks {
  rounds: number;
  getClaimsMs: number;
  getUserMs: number;
}

export async function clientChecks(
  url: string,
  email: string,
  password: string,
  rounds: number,
): Promise<ClientChecks> {
  const client = createClient(url, PUBLISHABLE_KEY, {
    auth: { persistSession: false, autoRefreshToken: false },
  });
  const signedIn = await client.auth.signInWithPassword({ email, password });
  if (signedIn.error) throw signedIn.error;
  await client.auth.getClaims(); // fetches and caches the JWKS once
  const local: number[] = [];
  const remote: number[] = [];
  for (let round = 0; round < rounds; round++) {
    local.push(await timed(async () => assertOk(await client.auth.getClaims())));
    remote.push(await timed(async () => assertOk(await client.auth.getUser())));
  }
  await client.auth.signOut({ scope: "local" });
  return { rounds, getClaimsMs: median(local), getUserMs: median(remote) };
}

function assertOk(result: { error: unknown }) {
  if (result.error) throw result.error;
}

async function timed(run: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

export function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

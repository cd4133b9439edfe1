import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { PASSWORD, PUBLISHABLE_KEY } from "./backend.ts";
import type { MemoryBackend } from "./memory-backend.ts";
import { totpCode } from "./mfa.ts";

/**
 * A user's session on another device, stepped up to aal2 when the user has a factor, then signed
 * out there: a client that keeps sending that session's access token (still unexpired), as a copy
 * of it would. Decision 023: the database refuses it at once. Make it before any aal1 sign-in of
 * the same user that should stay alive (verifying a factor ends the user's aal1 sessions).
 */
export async function signedOutSession(
  local: MemoryBackend,
  email: string,
  totp?: { factorId: string; secret: string },
): Promise<SupabaseClient> {
  const device = local.client();
  const signIn = await device.auth.signInWithPassword({ email, password: PASSWORD });
  if (signIn.error) throw signIn.error;
  if (totp) {
    const stepUp = await device.auth.mfa.challengeAndVerify({
      factorId: totp.factorId,
      // the next period's code: the one that verified the factor may not be used again
      code: totpCode(totp.secret, 30),
    });
    if (stepUp.error) throw stepUp.error;
  }
  const token = (await device.auth.getSession()).data.session?.access_token ?? "";
  const signOut = await device.auth.signOut({ scope: "local" });
  if (signOut.error) throw signOut.error;
  return createClient(local.backend.url, PUBLISHABLE_KEY, {
    auth: { persistSession: false, autoRefreshToken: false },
    global: { fetch: local.fetch, headers: { Authorization: `Bearer ${token}` } },
  });
}

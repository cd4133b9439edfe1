import type { SupabaseClient } from "@supabase/supabase-js";
import { Secret, TOTP } from "otpauth";

/** The code an authenticator app would show for `secret` now (or `offsetSeconds` away). */
export function totpCode(secret: string, offsetSeconds = 0): string {
  const totp = new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 });
  return totp.generate({ timestamp: Date.now() + offsetSeconds * 1000 });
}

/** A six-digit code that is not `code` (for wrong guesses). */
export function otherCode(code: string): string {
  return String((Number(code) + 500_000) % 1_000_000).padStart(6, "0");
}

export async function enroll(client: SupabaseClient, friendlyName?: string) {
  const { data, error } = await client.auth.mfa.enroll({ factorType: "totp", friendlyName });
  if (error) throw error;
  return data;
}

/** Enrolls and verifies a TOTP factor: the client's session is aal2 afterwards. */
export async function enrollVerified(client: SupabaseClient) {
  const factor = await enroll(client, "Phone app");
  const { data, error } = await client.auth.mfa.challengeAndVerify({
    factorId: factor.id,
    code: totpCode(factor.totp.secret),
  });
  if (error) throw error;
  return { factor, session: data };
}

/** Enrolls a TOTP factor and verifies it with supabase-js: the client's session is aal2 after. */
export async function enrollVerifiedTotp(client: SupabaseClient, friendlyName = "Phone app") {
  const enrolled = await client.auth.mfa.enroll({ factorType: "totp", friendlyName });
  if (enrolled.error) throw enrolled.error;
  const verified = await client.auth.mfa.challengeAndVerify({
    factorId: enrolled.data.id,
    code: totpCode(enrolled.data.totp.secret),
  });
  if (verified.error) throw verified.error;
  return { factorId: enrolled.data.id, secret: enrolled.data.totp.secret };
}

/** The `aal` claim of a client's current access token. */
export async function aalOf(client: SupabaseClient): Promise<string | undefined> {
  const { data } = await client.auth.getSession();
  const token = data.session?.access_token ?? "";
  const payload = token.split(".")[1] ?? "";
  return JSON.parse(Buffer.from(payload, "base64url").toString() || "{}").aal;
}

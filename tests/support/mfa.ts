import type { SupabaseClient } from "@supabase/supabase-js";
import { Secret, TOTP } from "otpauth";

/** The code an authenticator app would show now for `secret` (RFC 6238: SHA1, 6 digits, 30 s). */
export function totpCode(secret: string): string {
  return new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 }).generate();
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

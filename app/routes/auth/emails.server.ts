import type { AuthError, SupabaseClient } from "@supabase/supabase-js";
import type { SafePath } from "../../lib/safe-redirect";
import { callbackUrl } from "./redirects.server";

/**
 * Emails a sign-in code and magic link (one email carries both; the page decides which the person
 * uses). Never creates an account, and an address without one gets the same answer as one with
 * an account, so the form does not reveal who has signed up.
 */
export async function sendSignInEmail(
  supabase: SupabaseClient,
  request: Request,
  email: string,
  next: SafePath | undefined,
): Promise<AuthError | null> {
  const { error } = await supabase.auth.signInWithOtp({
    email,
    options: { shouldCreateUser: false, emailRedirectTo: callbackUrl(request, next) },
  });
  if (error && (error.code === "otp_disabled" || error.code === "user_not_found")) return null;
  return error;
}

/** Sends the sign-up confirmation email again. */
export async function resendConfirmation(
  supabase: SupabaseClient,
  request: Request,
  email: string,
  next: SafePath | undefined,
): Promise<AuthError | null> {
  const { error } = await supabase.auth.resend({
    type: "signup",
    email,
    options: { emailRedirectTo: callbackUrl(request, next) },
  });
  return error;
}

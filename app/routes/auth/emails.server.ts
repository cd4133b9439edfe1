import type { AuthError, SupabaseClient } from "@supabase/supabase-js";
import { data } from "react-router";
import { NO_STORE } from "../../lib/auth-cookies.server";
import { describeAuthError } from "../../lib/auth-errors";
import type { FormFailure } from "../../lib/forms.server";
import type { SafePath } from "../../lib/safe-redirect";
import { callbackUrl } from "./redirects.server";

/**
 * The action result for an auth server refusal: the message beside the field it concerns (or
 * above the form), the error code for support, and the server's status when it is a 4xx
 * (503 when the server failed or could not be reached: never a 500 from us).
 */
export function authFailure(
  error: AuthError,
  values: Record<string, string>,
  extra: Partial<Pick<FormFailure, "unconfirmed">> = {},
) {
  const info = describeAuthError(error);
  const fields = info.place === "form" ? {} : { [info.place]: info.message };
  const form = info.place === "form" ? info.message : undefined;
  const status = error.status && error.status >= 400 && error.status < 500 ? error.status : 503;
  const failure: FormFailure = {
    ok: false,
    errors: { fields, form, code: info.code, retryAfter: info.retryAfter },
    values,
    ...extra,
  };
  return data(failure, { status, headers: { "Cache-Control": NO_STORE } });
}

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

import type { AuthError, SupabaseClient } from "@supabase/supabase-js";
import { type RouterContextProvider } from "react-router";
import { getAuth } from "../../../lib/auth.server";
import { authFailure, formFailure, formNotice } from "../../../lib/form-results.server";
import { readFormValues, validateForm } from "../../../lib/forms.server";
import type { SafePath } from "../../../lib/safe-redirect";
import { callbackUrl } from "./redirects.server";
import { emailOnlySchema } from "./schemas.server";

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

/** The address the previous step sent the visitor here with (`?email=`), for the page and its Resend form. */
export function emailFromUrl(request: Request): string {
  return new URL(request.url).searchParams.get("email")?.slice(0, 255) ?? "";
}

/**
 * A Resend form's answer: the address (and next) from the form, the email sent again with
 * `send`, then a notice naming the address; or the refusal, beside the field or above the form.
 */
export async function resendEmail(
  supabase: SupabaseClient,
  request: Request,
  values: Record<string, string>,
  send: typeof sendSignInEmail,
  notice: (email: string) => string,
) {
  const parsed = validateForm(values, emailOnlySchema);
  if (!parsed.ok) return formFailure(parsed);
  const { email, next } = parsed.data;
  const error = await send(supabase, request, email, next);
  if (error) return authFailure(error, parsed.values);
  return formNotice(notice(email));
}

/** The action of a "check your inbox" page: its Resend form sends the email again with `send`. */
export function resendAction(send: typeof sendSignInEmail, notice: (email: string) => string) {
  return async ({
    request,
    context,
  }: {
    request: Request;
    context: Readonly<RouterContextProvider>;
  }) =>
    resendEmail(getAuth(context).supabase, request, await readFormValues(request), send, notice);
}

import type { AuthError } from "@supabase/supabase-js";
import { data } from "react-router";
import { NO_STORE } from "./auth-cookies.server";
import { describeAuthError } from "./auth-errors";
import type { FormFailure } from "./forms.server";

/**
 * An account form's answer to an auth server refusal: like authFailure, with per-page wording
 * (`messages`, by error code, and where it goes) where the generic one would mislead (e.g.
 * "email exists" means "sign in instead" on sign-up but "taken by someone else" here).
 */
export function accountFailure(
  error: AuthError,
  values: Record<string, string>,
  overrides: Record<string, { place: string; message: string }> = {},
) {
  const info = describeAuthError(error);
  const override = overrides[info.code];
  const place = override?.place ?? info.place;
  const message = override?.message ?? info.message;
  const status = error.status && error.status >= 400 && error.status < 500 ? error.status : 503;
  const failure: FormFailure = {
    ok: false,
    errors: {
      fields: place === "form" ? {} : { [place]: message },
      form: place === "form" ? message : undefined,
      code: info.code,
      retryAfter: info.retryAfter,
    },
    values,
  };
  return data(failure, { status, headers: { "Cache-Control": NO_STORE } });
}

/** A form-level refusal the app decides itself (not found, not yours, last identity…). */
export function accountRefusal(
  message: string,
  status: number,
  code: string,
  values: Record<string, string> = {},
  field?: string,
) {
  const failure: FormFailure = {
    ok: false,
    errors: {
      fields: field ? { [field]: message } : {},
      form: field ? undefined : message,
      code,
    },
    values,
  };
  return data(failure, { status, headers: { "Cache-Control": NO_STORE } });
}

/** A successful account change: a notice to show, never cached. */
export function accountNotice(notice: string, extra: Record<string, unknown> = {}) {
  return data({ ok: true as const, notice, ...extra }, { headers: { "Cache-Control": NO_STORE } });
}

import type { AuthError } from "@supabase/supabase-js";
import type { data } from "react-router";
import { describeAuthError } from "./auth-errors";
import type { FormFailure } from "./forms.server";
import { dataNoStore, jsonNoStore } from "./http.server";

/**
 * What an action returns for a form, never cached: a failure to show beside the fields or above
 * the form (with what was typed, secrets left out), or a notice that it worked. Reading and
 * validating the form is forms.server.ts.
 */

/** An action result for a form that needs fixing: 400 (or the given status), never cached. */
export function formFailure(
  failure: Omit<FormFailure, "ok"> | FormFailure,
  status = 400,
): ReturnType<typeof data<FormFailure>> {
  return dataNoStore(
    { ok: false as const, errors: failure.errors, values: failure.values },
    { status },
  );
}

/** Per-page wording for an auth error code: where the message goes and what it says. */
export type AuthErrorWording = Record<string, { place: string; message: string }>;

/**
 * The action result for an auth server refusal: the message beside the field it concerns (or
 * above the form), the error code for support, and the server's status when it is a 4xx (503
 * when the server failed or could not be reached: never a 500 from us). `wording` replaces the
 * generic message where it would mislead on this page (e.g. "email exists" means "sign in
 * instead" on sign-up but "taken by someone else" on the account's email page).
 */
export function authFailure(
  error: AuthError,
  values: Record<string, string>,
  options: { wording?: AuthErrorWording; unconfirmed?: boolean } = {},
) {
  const info = describeAuthError(error);
  const override = options.wording?.[info.code];
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
    ...(options.unconfirmed === undefined ? {} : { unconfirmed: options.unconfirmed }),
  };
  return dataNoStore(failure, { status });
}

/** A refusal the app decides itself (not found, not yours, last identity…): beside `field`, or above the form. */
export function formRefusal(
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
  return dataNoStore(failure, { status });
}

/** A form that did what was asked: a notice to show (and anything else the page needs), never cached. */
export function formNotice(notice: string, extra: Record<string, unknown> = {}) {
  return dataNoStore({ ok: true as const, notice, ...extra });
}

/** An auth server refusal as JSON for the page's own scripts (the passkey steps): code and message. */
export function authFailureJson(error: { code?: string; message?: string; status?: number }) {
  const info = describeAuthError(error);
  const status = error.status && error.status >= 400 && error.status < 500 ? error.status : 503;
  return jsonNoStore({ code: info.code, message: info.message }, status);
}

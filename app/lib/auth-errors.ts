/**
 * What an error from the auth server means to the person in front of the page: one table from
 * Supabase `error_code` to a plain message and where it belongs (beside a field, above the form,
 * or on its own page when nothing on the form can fix it). The code itself is always kept so the
 * page can show it for support.
 */
export type AuthErrorPlace =
  | "email"
  | "password"
  | "currentPassword"
  | "code"
  | "nonce"
  | "name"
  | "form";

export interface AuthErrorInfo {
  place: AuthErrorPlace;
  message: string;
  code: string;
  /** Seconds before the server accepts the request again (rate limits), when it said so. */
  retryAfter?: number;
}

/** The parts of an AuthError (or a plain error object) this module looks at. */
export interface AuthErrorLike {
  code?: string;
  message?: string;
  status?: number;
  name?: string;
  reasons?: string[];
}

const TABLE: Record<string, { place: AuthErrorPlace; message: string }> = {
  invalid_credentials: { place: "form", message: "The email or password is incorrect." },
  email_not_confirmed: {
    place: "form",
    message:
      "This email address is not confirmed yet. Open the link in the confirmation email, or send it again.",
  },
  user_banned: {
    place: "form",
    message: "This account is suspended. Contact support if you think this is a mistake.",
  },
  email_address_invalid: { place: "email", message: "Enter a valid email address." },
  email_address_not_authorized: {
    place: "email",
    message: "Email can't be sent to this address. Use another address.",
  },
  user_already_exists: {
    place: "email",
    message: "An account with this email already exists. Sign in instead.",
  },
  email_exists: {
    place: "email",
    message: "An account with this email already exists. Sign in instead.",
  },
  weak_password: { place: "password", message: "Choose a stronger password." },
  same_password: {
    place: "password",
    message: "Choose a password that is different from your current one.",
  },
  otp_expired: {
    place: "code",
    message: "That code is wrong or has expired. Check the latest email, or send a new code.",
  },
  signup_disabled: { place: "form", message: "New sign-ups are closed right now." },
  email_provider_disabled: { place: "form", message: "Signing in by email is turned off." },
  otp_disabled: { place: "form", message: "Signing in with an emailed code is turned off." },
  provider_disabled: { place: "form", message: "This sign-in provider is not enabled." },
  over_email_send_rate_limit: {
    place: "form",
    message: "Too many emails were sent to this address. Wait a moment, then try again.",
  },
  over_request_rate_limit: {
    place: "form",
    message: "Too many attempts from your network. Wait a few minutes, then try again.",
  },
  request_timeout: { place: "form", message: "The sign-in service took too long. Try again." },
  session_not_found: { place: "form", message: "Your session has ended. Sign in again." },
  reauthentication_needed: {
    place: "password",
    message: "For your security, sign in again before changing your password.",
  },
  reauthentication_not_valid: {
    place: "nonce",
    message: "That code is wrong or has expired. Send a new one and enter it here.",
  },
  // Multi-factor authentication.
  mfa_verification_failed: {
    place: "code",
    message:
      "That code is wrong. Check that your phone's clock is right and enter the newest code from the app.",
  },
  mfa_recovery_codes_locked: {
    place: "form",
    message: "Too many wrong recovery codes. Wait a while, or use your authenticator app.",
  },
  mfa_recovery_codes_sole_factor: {
    place: "form",
    message: "Recovery codes back up another second factor: add an authenticator app first.",
  },
  mfa_verification_rejected: {
    place: "code",
    message: "That code was refused. Enter the newest code from the app.",
  },
  mfa_challenge_expired: {
    place: "code",
    message: "That took too long. Enter the newest code from the app.",
  },
  mfa_factor_name_conflict: {
    place: "name",
    message: "You already have an authenticator with this name. Choose another name.",
  },
  mfa_factor_not_found: {
    place: "form",
    message: "That authenticator doesn't exist (it may have been removed already).",
  },
  too_many_enrolled_mfa_factors: {
    place: "form",
    message: "You have as many authenticators as an account can have. Remove one first.",
  },
  mfa_totp_enroll_not_enabled: {
    place: "form",
    message: "Adding authenticator apps is turned off for this site.",
  },
  mfa_totp_verify_not_enabled: {
    place: "form",
    message: "Authenticator apps are turned off for this site.",
  },
  insufficient_aal: {
    place: "form",
    message: "This needs your second factor. Enter a code from your authenticator app first.",
  },
  // Linked identities.
  identity_already_exists: {
    place: "form",
    message: "That account is already linked to another Edge Notes account.",
  },
  identity_not_found: {
    place: "form",
    message: "That linked account doesn't exist (it may have been unlinked already).",
  },
  single_identity_not_deletable: {
    place: "form",
    message: "This is your only way to sign in, so it can't be unlinked.",
  },
  manual_linking_disabled: {
    place: "form",
    message: "Linking other accounts is turned off for this site.",
  },
  webauthn_verification_failed: {
    place: "form",
    message: "That passkey could not be checked. Try again, or sign in another way.",
  },
  webauthn_challenge_expired: {
    place: "form",
    message: "The passkey request took too long. Try again.",
  },
  webauthn_challenge_not_found: {
    place: "form",
    message: "The passkey request was already used or has expired. Try again.",
  },
  webauthn_credential_exists: {
    place: "form",
    message: "This passkey is already on your account.",
  },
  passkey_disabled: { place: "form", message: "Passkeys are not available right now." },
  too_many_passkeys: {
    place: "form",
    message: "You have as many passkeys as an account can have. Remove one first.",
  },
};

/** "For security purposes, you can only request this after 42 seconds." -> 42. */
export function retryAfterSeconds(message: string | undefined): number | undefined {
  const match = /after (\d+) seconds?/i.exec(message ?? "");
  // "after 0 seconds" happens in the last fraction of a second: still wait one.
  return match ? Math.max(1, Number(match[1])) : undefined;
}

export function describeAuthError(error: AuthErrorLike): AuthErrorInfo {
  const code = error.code || (error.status === 429 ? "over_request_rate_limit" : "unexpected");
  const retryAfter = retryAfterSeconds(error.message);
  const known = Object.hasOwn(TABLE, code) ? TABLE[code] : undefined;
  if (code === "weak_password" && error.reasons?.length) {
    return { place: "password", code, message: weakPasswordMessage(error.reasons) };
  }
  if (known) {
    const message =
      retryAfter !== undefined
        ? `For security, you can request this again in ${retryAfter} second${retryAfter === 1 ? "" : "s"}.`
        : known.message;
    return { ...known, code, message, retryAfter };
  }
  if (error.name === "AuthRetryableFetchError" || error.status === 0) {
    return {
      place: "form",
      code: "backend_unreachable",
      message: "The sign-in service can't be reached right now. Try again in a moment.",
    };
  }
  return {
    place: "form",
    code,
    message: "Something went wrong on our side. Try again in a moment.",
  };
}

function weakPasswordMessage(reasons: string[]): string {
  const parts = reasons.map(
    (reason) =>
      ({
        length: "it is too short",
        characters: "it needs more kinds of characters (lower and upper case, digits, symbols)",
        pwned: "it has appeared in a data breach",
      })[reason] ?? reason,
  );
  return `Choose a stronger password: ${parts.join("; ")}.`;
}

/** Why an email link or OAuth return could not sign someone in, as its own page. */
export type LinkProblem =
  | "other-browser"
  | "expired"
  | "used"
  | "denied"
  | "taken"
  | "rate-limited"
  | "invalid";

export interface LinkProblemPage {
  problem: LinkProblem;
  title: string;
  what: string;
  todo: string;
  /** The way forward: a page that sends a fresh link, or back to sign-in. */
  action: { href: string; label: string };
}

export function linkProblem(
  code: string | undefined,
  options: { signedIn?: boolean } = {},
): LinkProblem {
  switch (code) {
    case "pkce_code_verifier_not_found":
      // The verifier cookie goes when its flow completes: signed in here, the link was used here.
      return options.signedIn ? "used" : "other-browser";
    case "bad_code_verifier":
      return "other-browser";
    case "flow_state_not_found":
      return "used";
    case "otp_expired":
      return options.signedIn ? "used" : "expired";
    case "flow_state_expired":
      return "expired";
    case "access_denied":
    case "provider_disabled":
      return "denied";
    case "identity_already_exists":
      return "taken";
    case "over_request_rate_limit":
      return "rate-limited";
    default:
      return "invalid";
  }
}

export function linkProblemPage(
  problem: LinkProblem,
  kind: "recovery" | "sign-in",
  options: { signedIn?: boolean } = {},
): LinkProblemPage {
  const fresh =
    kind === "recovery"
      ? { href: "/forgot-password", label: "Send a new reset link" }
      : { href: "/sign-in", label: "Get a new sign-in link" };
  switch (problem) {
    case "other-browser":
      return {
        problem,
        title: "Open the link in the browser you used",
        what: "This link was opened in a different browser or device from the one that asked for it (or that browser's cookies were cleared). For your security it only works where it was requested.",
        todo: "Open the link in the browser where you started, or ask for a new one here.",
        action: fresh,
      };
    case "expired":
      return {
        problem,
        title: "This link has expired",
        what: "Links in our emails work once and only for a limited time. This one is no longer valid (it expired, or a newer email replaced it).",
        todo: "Ask for a new link; it arrives in a minute or two.",
        action: fresh,
      };
    case "used":
      return {
        problem,
        title: "This link was already used",
        what: "Each link in our emails works once, and this one has been used already (perhaps it was clicked twice, or opened by a mail scanner).",
        todo: options.signedIn
          ? "You are signed in already, so you can carry on."
          : "Sign in, or ask for a new link.",
        action: options.signedIn ? { href: "/", label: "Continue" } : fresh,
      };
    case "denied":
      return {
        problem,
        title: "Sign-in was cancelled",
        what: "The sign-in provider did not let you in: the request was cancelled or refused.",
        todo: "Try again, or sign in with your email instead.",
        action: { href: "/sign-in", label: "Back to sign in" },
      };
    case "taken":
      return {
        problem,
        title: "That account is linked to someone else",
        what: "The sign-in account you chose is already linked to a different Edge Notes account, so it was not linked to yours. Nothing was changed.",
        todo: "Sign in to the other account and unlink it there first, or choose another account.",
        action: { href: "/account/identities", label: "Back to linked accounts" },
      };
    case "rate-limited":
      // Refused before it was checked, so the link is as good as it was: a new one would not help.
      return {
        problem,
        title: "Too many attempts",
        what: "Too many attempts came from your network in the last few minutes, so this one was not checked. The link itself was not used.",
        todo: "Wait a few minutes, then open the link from the email again.",
        action: { href: "/", label: "Back to the start page" },
      };
    default:
      return {
        problem,
        title: "This link doesn't work",
        what: "The link is incomplete or was changed, so it can't sign you in.",
        todo: "Copy the whole link from the email, or ask for a new one.",
        action: fresh,
      };
  }
}

import { FormField } from "../../../components/form-field";
import { PASSWORD_RULES } from "./password-rules";

/**
 * The fields the sign-in and account forms share, so an address, a new password or an
 * authenticator code is asked for the same way (and autofilled the same way) on every page.
 */

/** An email address; `autoComplete="username"` where it signs in (plus `webauthn` where passkeys autofill), "email" where it is new. */
export function EmailField({
  label = "Email",
  autoComplete,
  defaultValue,
  error,
}: {
  label?: string;
  autoComplete: "username" | "username webauthn" | "email";
  defaultValue?: string;
  error?: string;
}) {
  return (
    <FormField
      label={label}
      name="email"
      type="email"
      autoComplete={autoComplete}
      inputMode="email"
      required
      defaultValue={defaultValue}
      error={error}
    />
  );
}

/** A password being chosen, with the rules shown before submit. */
export function NewPasswordField({
  label = "Password",
  error,
}: {
  label?: string;
  error?: string;
}) {
  return (
    <FormField
      label={label}
      name="password"
      type="password"
      autoComplete="new-password"
      required
      error={error}
      hint={PASSWORD_RULES}
    />
  );
}

/** Lets password managers save a new password against the right account. */
export function HiddenUsername({ email }: { email: string | null }) {
  return (
    <input
      type="email"
      name="username"
      autoComplete="username"
      value={email ?? ""}
      readOnly
      hidden
    />
  );
}

/** The 6-digit code from an authenticator app. */
export function TotpCodeField({
  label,
  error,
  className,
}: {
  label: string;
  error?: string;
  className?: string;
}) {
  return (
    <FormField
      label={label}
      name="code"
      inputMode="numeric"
      autoComplete="one-time-code"
      pattern="[0-9]*"
      maxLength={7}
      required
      autoFocus
      error={error}
      className={className}
    />
  );
}

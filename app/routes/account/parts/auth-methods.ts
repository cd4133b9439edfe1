/** How a session was authenticated (the access token's `amr` methods), in words. */
const METHOD_LABELS: Record<string, string> = {
  password: "Password",
  otp: "Emailed code",
  "email code": "Emailed code",
  magiclink: "Magic link",
  recovery: "Reset link",
  oauth: "GitHub or Google",
  totp: "Authenticator app",
  passkey: "Passkey",
  webauthn: "Security key or passkey",
  "mfa/recovery_code": "Recovery code",
  "email/signup": "Sign-up link",
  email_signup: "Sign-up link",
  email_change: "Email change link",
  invite: "Invitation link",
  anonymous: "Guest",
};

export function authMethodLabel(method: string): string {
  return METHOD_LABELS[method] ?? method;
}

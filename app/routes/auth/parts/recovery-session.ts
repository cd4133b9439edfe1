/** How long after opening a reset link (or signing in with an emailed code) it may set a password. */
export const RECOVERY_WINDOW_SECONDS = 60 * 60;

interface AmrEntry {
  method?: string;
  timestamp?: number;
}

/**
 * Is this session fresh from proving access to the mailbox (a recovery link, or an emailed code:
 * `amr` method `recovery` or `otp` within the last hour)? Only such a session may choose a new
 * password without the current one; any other goes through /account/password.
 */
export function isRecoverySession(
  claims: { amr?: unknown } | null | undefined,
  now = Date.now() / 1000,
): boolean {
  if (!claims || !Array.isArray(claims.amr)) return false;
  return (claims.amr as AmrEntry[]).some(
    (entry) =>
      (entry?.method === "recovery" || entry?.method === "otp") &&
      typeof entry.timestamp === "number" &&
      now - entry.timestamp < RECOVERY_WINDOW_SECONDS,
  );
}

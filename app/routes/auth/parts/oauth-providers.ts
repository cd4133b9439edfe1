/** The OAuth providers the app offers (the auth server refuses one it has not enabled). */
export const OAUTH_PROVIDERS = { github: "GitHub", google: "Google" } as const;

export type OAuthProvider = keyof typeof OAUTH_PROVIDERS;

export function isOAuthProvider(value: unknown): value is OAuthProvider {
  return typeof value === "string" && Object.hasOwn(OAUTH_PROVIDERS, value);
}

/** A provider's display name ("email" for the password/email identity). */
export function providerLabel(provider: string): string {
  if (provider === "email") return "Email and password";
  return isOAuthProvider(provider) ? OAUTH_PROVIDERS[provider] : provider;
}

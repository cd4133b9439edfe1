/**
 * The OAuth providers the real Auth service knows (supabase/auth api/provider_constants.go +
 * Provider()): the names /authorize accepts and the local provider page can stand in for, once
 * `[auth.external.<name>] enabled = true`.
 */
export const KNOWN_PROVIDERS = [
  "apple",
  "azure",
  "bitbucket",
  "discord",
  "facebook",
  "figma",
  "fly",
  "github",
  "gitlab",
  "google",
  "kakao",
  "keycloak",
  "linkedin",
  "linkedin_oidc",
  "notion",
  "slack",
  "slack_oidc",
  "snapchat",
  "spotify",
  "twitch",
  "twitter",
  "vercel_marketplace",
  "workos",
  "x",
  "zoom",
];

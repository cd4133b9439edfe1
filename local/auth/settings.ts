import type { AuthContext } from "./context.ts";

/** GET /settings: which providers are on (no OAuth providers until the local provider lands). */
export function settings({ config }: AuthContext): Response {
  const { auth } = config;
  return Response.json({
    external: {
      anonymous_users: auth.enableAnonymousSignIns,
      email: auth.email.enableSignup,
      phone: false,
      apple: false,
      azure: false,
      bitbucket: false,
      discord: false,
      facebook: false,
      figma: false,
      fly: false,
      github: false,
      gitlab: false,
      google: false,
      keycloak: false,
      kakao: false,
      linkedin_oidc: false,
      notion: false,
      slack_oidc: false,
      spotify: false,
      twitch: false,
      twitter: false,
      workos: false,
      zoom: false,
    },
    disable_signup: !auth.enableSignup,
    mailer_autoconfirm: !auth.email.enableConfirmations,
    phone_autoconfirm: false,
    sms_provider: "",
    saml_enabled: false,
  });
}

import type { AuthContext } from "../context.ts";

/** GET /settings: which providers are on ([auth.external.<name>] enabled, served by the local
 * provider page), and whether passkeys are ([auth.passkey] enabled). */
export function settings({ config }: AuthContext): Response {
  const { auth } = config;
  const on = (name: string) => auth.external[name]?.enabled === true;
  return Response.json({
    external: {
      anonymous_users: auth.enableAnonymousSignIns,
      email: auth.email.enabled,
      phone: auth.sms.enableSignup,
      apple: on("apple"),
      azure: on("azure"),
      bitbucket: on("bitbucket"),
      discord: on("discord"),
      facebook: on("facebook"),
      figma: on("figma"),
      fly: on("fly"),
      github: on("github"),
      gitlab: on("gitlab"),
      google: on("google"),
      keycloak: on("keycloak"),
      kakao: on("kakao"),
      linkedin_oidc: on("linkedin_oidc"),
      notion: on("notion"),
      slack_oidc: on("slack_oidc"),
      spotify: on("spotify"),
      twitch: on("twitch"),
      twitter: on("twitter"),
      workos: on("workos"),
      zoom: on("zoom"),
    },
    disable_signup: !auth.enableSignup,
    mailer_autoconfirm: !auth.email.enableConfirmations,
    phone_autoconfirm: !auth.sms.enableConfirmations,
    sms_provider: "",
    saml_enabled: false,
    saml_private_key_next_configured: false,
    passkeys_enabled: auth.passkey.enabled,
  });
}

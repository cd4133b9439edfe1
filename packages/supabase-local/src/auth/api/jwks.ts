import { type AuthContext, jwtIssuer } from "../context.ts";

/** GET /.well-known/jwks.json: the public half of every signing key (never the HS256 secret). */
export function jwks({ signingKeys }: AuthContext): Response {
  return Response.json(
    { keys: signingKeys.all.map((key) => key.publicJwk) },
    { headers: { "Cache-Control": "public, max-age=600" } },
  );
}

/** GET /.well-known/openid-configuration (WellKnownOpenID): the discovery document, issuer first. */
export function openidConfiguration(ctx: AuthContext): Response {
  const issuer = jwtIssuer(ctx);
  // the endpoints hang off the issuer without its trailing slashes
  const base = issuer.replace(/\/+$/, "");
  return Response.json(
    {
      issuer,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      jwks_uri: `${base}/.well-known/jwks.json`,
      userinfo_endpoint: `${base}/oauth/userinfo`,
      scopes_supported: ["openid", "profile", "email", "phone", "offline_access"],
      response_types_supported: ["code"],
      response_modes_supported: ["query"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      subject_types_supported: ["public"],
      id_token_signing_alg_values_supported: ["RS256", "HS256", "ES256"],
      token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "none"],
      claims_supported: [
        "sub",
        "aud",
        "iss",
        "exp",
        "iat",
        "auth_time",
        "nonce",
        "email",
        "email_verified",
        "phone_number",
        "phone_number_verified",
        "name",
        "picture",
        "preferred_username",
        "updated_at",
      ],
      code_challenge_methods_supported: ["S256", "plain"],
    },
    { headers: { "Cache-Control": "public, max-age=600" } },
  );
}

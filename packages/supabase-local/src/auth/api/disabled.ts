import type { AuthContext } from "../context.ts";
import { authError } from "../errors.ts";
import { requireAdmin, requireUser } from "../http/authenticate.ts";

/**
 * Endpoints of features a local project cannot turn on (the CLI's config.toml has no switch for
 * them, or they need a service the machine does not have): each answers as the real router does
 * for a project with the feature off, after the same checks of the caller (middleware.go
 * requireSAMLEnabled, requireOAuthServerEnabled, requireCustomOAuthEnabled, requireScimServerEnabled).
 */

/** /sso, /sso/saml/metadata, /sso/saml/acs */
export function samlDisabled(): Response {
  throw authError("samlDisabled");
}

/** /oauth/* (Supabase Auth as an OAuth 2.1 server) and /.well-known/oauth-authorization-server */
export function oauthServerDisabled(): Response {
  throw authError("oauthServerDisabled");
}

/** /user/oauth/grants: signed-in users only, then the same answer. */
export async function oauthGrantsDisabled(ctx: AuthContext, request: Request): Promise<Response> {
  await requireUser(ctx, request);
  throw authError("oauthServerDisabled");
}

/** /admin/oauth/clients/* */
export async function adminOAuthDisabled(ctx: AuthContext, request: Request): Promise<Response> {
  await requireAdmin(ctx, request);
  throw authError("oauthServerDisabled");
}

/** /admin/custom-providers/* */
export async function customProvidersDisabled(
  ctx: AuthContext,
  request: Request,
): Promise<Response> {
  await requireAdmin(ctx, request);
  throw authError("customOAuthDisabled");
}

/** /scim/v2/* */
export function scimDisabled(): Response {
  throw authError("scimDisabled");
}

/** GET /admin/sso/providers: a local project has no SSO identity providers. */
export async function listSsoProviders(ctx: AuthContext, request: Request): Promise<Response> {
  await requireAdmin(ctx, request);
  return Response.json({ items: [] });
}

/** /admin/sso/providers/{idp_id}: none exists (loadSSOProvider). */
export async function ssoProviderNotFound(ctx: AuthContext, request: Request): Promise<Response> {
  await requireAdmin(ctx, request);
  throw authError("ssoProviderNotFound");
}

import type { AuthContext } from "../context.ts";
import { sendNotification } from "../emails/send.ts";
import { authError } from "../errors.ts";
import { audienceMatches, type Caller, requireUser } from "../http/authenticate.ts";
import { clientIp } from "../http/request.ts";
import { UUID } from "../http/validate.ts";
import { audit } from "../models/audit.ts";
import { deleteIdentityRow, listIdentities, updateProviders } from "../models/identities.ts";
import { updateEmailFromIdentities } from "../models/users.ts";
import { providerRedirectUrl } from "../oauth.ts";

/** requireAuthentication, then requireManualLinkingEnabled (the /user/identities routes). */
async function requireLinkingCaller(ctx: AuthContext, request: Request): Promise<Caller> {
  const caller = await requireUser(ctx, request);
  if (!ctx.config.auth.enableManualLinking) throw authError("manualLinkingDisabled");
  return caller;
}

/**
 * GET /user/identities/authorize?provider=…: the provider's sign-in URL for linking to the caller
 * (`{ url }` with skip_http_redirect=true, else a 302). The callback ends with the identity on
 * this user; `identity_already_exists` when the provider account belongs to someone.
 */
export async function linkIdentity(ctx: AuthContext, request: Request): Promise<Response> {
  const { user } = await requireLinkingCaller(ctx, request);
  const url = await providerRedirectUrl(ctx, request, user);
  if (new URL(request.url).searchParams.get("skip_http_redirect") === "true") {
    return Response.json({ url });
  }
  return new Response(null, { status: 302, headers: { Location: url } });
}

/** DELETE /user/identities/{identity_id}: never the last one; the email follows the identities. */
export async function deleteIdentity(ctx: AuthContext, request: Request): Promise<Response> {
  const { user, claims } = await requireLinkingCaller(ctx, request);
  const id = new URL(request.url).pathname.split("/").pop() ?? "";
  if (!UUID.test(id)) throw authError("identityIdNotUuid");
  if (!audienceMatches(request, claims)) throw authError("identityAudienceMismatch");
  const identities = await listIdentities(ctx.db, user.id);
  if (identities.length <= 1) throw authError("singleIdentity");
  const identity = identities.find((i) => i.id === id);
  if (!identity) throw authError("identityNotFound");
  await ctx.db.transaction(async (tx) => {
    await audit(tx, clientIp(request), user, "identity_unlinked", {
      identity_id: identity.id,
      provider: identity.provider,
      provider_id: identity.provider_id,
    });
    await deleteIdentityRow(tx, identity.id);
    await updateEmailFromIdentities(tx, user, !ctx.config.auth.email.enableConfirmations);
    await updateProviders(tx, user.id);
  });
  // To the address the user had before: unlinking may have moved another identity's onto it.
  await sendNotification(ctx, ctx.db, request, user, "identity_unlinked", {
    recipient: user.email ?? "",
    provider: identity.provider,
  });
  return Response.json({});
}

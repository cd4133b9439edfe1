import { type Caller, requireUser } from "../authenticate.ts";
import type { AuthContext } from "../context.ts";
import { authError } from "../errors.ts";
import { audit } from "../models/audit.ts";
import { type Db, many, one, run, UUID } from "../models/db.ts";
import type { IdentityRow, UserRow } from "../models/users.ts";
import { providerRedirectUrl, updateProviders } from "./external.ts";

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
  const { user } = await requireLinkingCaller(ctx, request);
  const id = new URL(request.url).pathname.split("/").pop() ?? "";
  if (!UUID.test(id)) throw authError("identityIdNotUuid");
  const identities = await many<IdentityRow>(
    ctx.db,
    "select * from auth.identities where user_id = $1",
    [user.id],
  );
  if (identities.length <= 1) throw authError("singleIdentity");
  const identity = identities.find((i) => i.id === id);
  if (!identity) throw authError("identityNotFound");
  await ctx.db.transaction(async (tx) => {
    await audit(tx, request, user, "identity_unlinked", {
      identity_id: identity.id,
      provider: identity.provider,
      provider_id: identity.provider_id,
    });
    await run(tx, "delete from auth.identities where id = $1", [identity.id]);
    await emailFromIdentities(ctx, tx, user);
    await updateProviders(tx, user.id);
  });
  return Response.json({});
}

/** UpdateUserEmailFromIdentities: when no identity has the user's address any more, the user takes
 * the best remaining one (verified first, then unverified, oldest first) that nobody else has. */
async function emailFromIdentities(ctx: AuthContext, tx: Db, user: UserRow): Promise<void> {
  const rest = await many<IdentityRow>(
    tx,
    "select * from auth.identities where user_id = $1 order by created_at, id",
    [user.id],
  );
  const current = (user.email ?? "").toLowerCase();
  if (rest.some((i) => (i.email ?? "") === current)) return;
  const rank = (i: IdentityRow) => (!i.email ? 2 : i.identity_data.email_verified ? 0 : 1);
  const ordered = [...rest].sort((a, b) => rank(a) - rank(b));
  for (const candidate of ordered) {
    const email = candidate.email ?? "";
    const taken =
      email !== "" &&
      (await one(tx, "select 1 from auth.users where lower(email) = $1 and id <> $2", [
        email,
        user.id,
      ]));
    if (taken) continue;
    const confirmed =
      email !== "" &&
      (candidate.identity_data.email_verified === true ||
        !ctx.config.auth.email.enableConfirmations);
    await run(
      tx,
      `update auth.users set email = nullif($2, ''),
         email_confirmed_at = case when $3::boolean then coalesce(email_confirmed_at, now()) else null end,
         updated_at = now() where id = $1`,
      [user.id, email, confirmed],
    );
    return;
  }
  throw authError("emailConflictIdentity");
}

import type { AuthContext } from "../context.ts";
import { authError } from "../errors.ts";
import { requireUser } from "../http/authenticate.ts";
import { clientIp } from "../http/request.ts";
import { audit } from "../models/audit.ts";
import { logoutSessions } from "../models/sessions.ts";

/** POST /logout?scope=global|local|others: 204; the access token stays valid until it expires. */
export async function logout(ctx: AuthContext, request: Request): Promise<Response> {
  const caller = await requireUser(ctx, request);
  const raw = new URL(request.url).searchParams.get("scope") ?? "";
  if (!["", "global", "local", "others"].includes(raw)) {
    throw authError("missingEmailOrPhone", `Unsupported logout scope "${raw}"`);
  }
  // absent or empty is global, as Auth's switch on the query's scope has it
  const scope = (raw || "global") as "global" | "local" | "others";
  await ctx.db.transaction(async (tx) => {
    await audit(tx, clientIp(request), caller.user, "logout");
    await logoutSessions(tx, caller.user.id, caller.session?.id, scope);
  });
  return new Response(null, { status: 204 });
}

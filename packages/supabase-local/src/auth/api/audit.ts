import type { AuthContext } from "../context.ts";
import { authError } from "../errors.ts";
import { requireAdmin } from "../http/authenticate.ts";
import { pageOffset, pagination } from "../http/validate.ts";
import { findAuditEntries } from "../models/audit.ts";

/** The `query=<scope>:<text>` scopes of GET /admin/audit and the payload fields each searches. */
const SCOPES: Record<string, string[]> = {
  author: ["actor_username", "actor_name"],
  action: ["action"],
  type: ["log_type"],
};

/**
 * GET /admin/audit?page=&per_page=&query= (adminAuditLog): the audit log newest first, as a JSON
 * array, with X-Total-Count and Link; `query=author:ann` matches payload fields with ILIKE.
 */
export async function adminAuditLog(ctx: AuthContext, request: Request): Promise<Response> {
  await requireAdmin(ctx, request);
  const url = new URL(request.url);
  const { page, perPage } = pagination(url, 50);
  const query = url.searchParams.get("query") ?? "";
  let filter: { fields: string[]; value: string } | undefined;
  if (query !== "") {
    const at = query.indexOf(":");
    const fields = SCOPES[at < 0 ? query : query.slice(0, at)];
    if (!fields || at < 0) {
      throw authError("validationFailed", `Invalid query scope: ${query}`);
    }
    filter = { fields, value: query.slice(at + 1) };
  }
  const { total, entries } = await findAuditEntries(ctx.db, filter, {
    limit: perPage,
    offset: pageOffset(page, perPage),
  });
  const pages = Math.ceil(total / perPage);
  const link = (p: number, rel: string) => {
    const next = new URL(url);
    next.searchParams.set("page", String(p));
    next.searchParams.sort();
    return `<${next.pathname}${next.search}>; rel="${rel}"`;
  };
  const links = pages > page ? [link(page + 1, "next")] : [];
  links.push(link(pages, "last"));
  return Response.json(entries, {
    headers: { "X-Total-Count": String(total), Link: links.join(", ") },
  });
}

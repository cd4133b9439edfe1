import { type SafePath, safeNext } from "./safe-redirect";

/** Where a signed-in user with a second factor proves it (exempt from the aal2 rule). */
export const MFA_PATH = "/mfa";

/**
 * `path?next=…` (and any extra params); `next` only when there is one. `next` is already safe
 * (made so by safeRedirectPath where it entered the app), so it is not checked again here.
 */
export function withNext(
  path: string,
  next: SafePath | undefined,
  extra: Record<string, string> = {},
): string {
  const params = new URLSearchParams(extra);
  if (next && next !== "/") params.set("next", next);
  const query = params.toString();
  return query ? `${path}?${query}` : path;
}

/**
 * The page a request belongs to (a single-fetch `.data` request names its page without it), to
 * come back to afterwards. The request's own path is still input (`GET //evil.example/` reaches
 * the Worker with that path), so it goes through the sanitiser like any `next`.
 */
export function pagePath(request: Request): SafePath | undefined {
  const url = new URL(request.url);
  const path = url.pathname.replace(/\.data$/, "").replace(/^\/_root$/, "/") || "/";
  const params = new URLSearchParams(url.search);
  params.delete("_routes");
  params.delete("index");
  const query = params.toString();
  return safeNext(query ? `${path}?${query}` : path);
}

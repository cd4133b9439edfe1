import type { SafePath } from "./safe-redirect";

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
